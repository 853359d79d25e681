// The back ends numbats has, one folder each under src/backends/, each registered here by one line of
// BACKENDS: the only module besides the back ends' own (and the communicators' list) that names them.
// Target selection (src/runtime/select.ts) is a policy over BACKENDS; what the host API needs of one
// particular back end (the PTX of a kernel for `inspectAsm`, the GPU driver for `numbats -s`, the
// simulator's settings) is reached through here.

import type { BackendDescriptor, CompiledKernel, Backend } from "../abi/backend.js";
import type { FunctionIR } from "../compiler/ir.js";
import { CUDA_BACKEND } from "./cuda/index.js";
import { emitPtx } from "./cuda/ptx/emit.js";
import type { PtxTargetOptions } from "./cuda/ptx/module.js";
import { SIM_BACKEND } from "./sim/index.js";
import { WEBGPU_BACKEND } from "./webgpu/index.js";

export type { PtxTargetOptions } from "./cuda/ptx/module.js";
export { deviceCompilers, gpuDriver, gpuPtxTarget } from "./cuda/index.js";
export { SIMULATED_COMPUTE_CAPABILITY, parseSchedule, parseTools } from "./sim/index.js";

/** The back ends: a new one is a line here (and its folder). */
const REGISTERED = [CUDA_BACKEND, SIM_BACKEND, WEBGPU_BACKEND] as const;

/** A back end's name, as NUMBATS_TARGET takes it. */
export type TargetName = (typeof REGISTERED)[number]["name"];

/** The back ends, in `auto`'s order (the last is the fallback). */
export const BACKENDS: readonly BackendDescriptor<TargetName>[] = [...REGISTERED].sort((a, b) => a.autoOrder - b.autoOrder);

/** The back ends' names, in `auto`'s order. */
export const TARGET_NAMES: readonly TargetName[] = BACKENDS.map((b) => b.name);

/**
 * A kernel's code as `Kernel.inspectAsm` shows it: what a GPU's `backend` runs (`compiled`: PTX on
 * cuda, WGSL on webgpu); else, or with a PTX `target`, the PTX for it, by default for the device's
 * compute capability (the simulator's: 8.0). `ir` is asked for only then (a kernel loaded from the
 * on-disk cache has compiled code and no IR until it needs one).
 */
export function ptxOf(ir: () => FunctionIR, backend: Backend, compiled: () => CompiledKernel, target?: PtxTargetOptions): string {
  if (!target && (backend.name === "cuda" || backend.name === "webgpu")) return compiled().code;
  return emitPtx(ir(), { computeCapability: backend.device.computeCapability, ...target }).text;
}
