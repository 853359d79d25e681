// The PTX target's artifacts (abi/backend.ts Artifact) made without a device: what bundles hold for
// the GPU. A device of the compute capability loads one's cubin, made by nvJitLink where that library
// is found, else (or where its driver cannot load the cubin) JIT-compiles its PTX (driver/kernel.ts).

import type { Artifact } from "../../../abi/backend.js";
import { kernelInfo } from "../../../abi/kernel-info.js";
import type { FunctionIR } from "../../../compiler/ir.js";
import { emitPtx } from "./emit.js";
import { jitLink } from "../nvrtc/nvjitlink.js";

/** The PTX of `ir` for compute capability `cc`, and its cubin where nvJitLink is found, as an artifact for devices of that capability. */
export function ptxArtifact(ir: FunctionIR, cc: readonly [number, number]): Artifact {
  const { text, ...facts } = emitPtx(ir, { computeCapability: cc });
  const info = kernelInfo(ir);
  return { target: `cuda sm_${cc.join("")}`, info, code: text, ...cubinOf(text, `${facts.entry}.ptx`, cc, info.maxRegisters), facts };
}

/** `{ binary }`: the PTX linked by nvJitLink into a cubin for `cc`; nothing where nvJitLink is not found. */
function cubinOf(ptx: string, name: string, cc: readonly [number, number], maxRegisters: number | undefined): { binary?: Uint8Array } {
  try {
    return { binary: jitLink([{ kind: "ptx", name, data: ptx }], { computeCapability: cc, options: maxRegisters === undefined ? [] : [`-maxrregcount=${maxRegisters}`] }).cubin };
  } catch {
    return {}; // not found (or it refused the PTX): the driver JIT-compiles the PTX at load
  }
}
