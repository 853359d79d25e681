// The back ends numbats has, one folder each under src/backends/: the only module besides the back
// ends' own (and target selection, src/runtime/select.ts) that names them. What the host API needs of
// one particular back end (the PTX of a kernel for `inspectAsm`) is reached through here.

import type { CompiledKernel, Backend } from "../abi/backend.js";
import type { FunctionIR } from "../compiler/ir.js";
import { emitPtx } from "./cuda/ptx/emit.js";
import type { PtxTargetOptions } from "./cuda/ptx/module.js";

export type { PtxTargetOptions } from "./cuda/ptx/module.js";

/** The back ends, by the name NUMBATS_TARGET takes. */
export const TARGET_NAMES = ["cuda", "sim"] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

/**
 * A kernel's PTX (`Kernel.inspectAsm`): what `backend` runs where it runs PTX (`compiled`), else the
 * PTX for `target`, by default for the device's compute capability (the simulator's: 8.0).
 */
export function ptxOf(ir: FunctionIR, backend: Backend, compiled: () => CompiledKernel, target?: PtxTargetOptions): string {
  if (!target && backend.name === "cuda") return compiled().code;
  return emitPtx(ir, { computeCapability: backend.device.computeCapability, ...target }).text;
}
