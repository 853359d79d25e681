// The PTX target's artifacts (abi/backend.ts Artifact) made without a device: what bundles hold for
// the GPU. A device of the compute capability loads one's cubin, made by nvJitLink where that library
// is found (linked with the kernel's `link` code: CUDA C++ compiled by NVRTC first), else (or where its
// driver cannot load the cubin) JIT-compiles its PTX (driver/kernel.ts), or links it with the loading
// kernel's `link` code where it has some (driver/device.ts load).

import type { Artifact } from "../../../abi/backend.js";
import { kernelInfo } from "../../../abi/kernel-info.js";
import type { FunctionIR } from "../../../compiler/ir.js";
import { emitPtx } from "./emit.js";
import { jitLinkKernel } from "../nvrtc/link-kernel-code.js";

/** The PTX of `ir` for compute capability `cc`, and its (linked) cubin where nvJitLink is found, as an artifact for devices of that capability. */
export function ptxArtifact(ir: FunctionIR, cc: readonly [number, number]): Artifact {
  const { text, ...facts } = emitPtx(ir, { computeCapability: cc });
  const info = kernelInfo(ir);
  return { target: `cuda sm_${cc.join("")}`, info, code: text, ...cubinOf(ir, text, facts.entry, cc, info.maxRegisters), facts };
}

/** `{ binary }`: the PTX linked by nvJitLink with the kernel's `link` code into a cubin for `cc`; nothing where NVRTC or nvJitLink (as needed) is not found. */
function cubinOf(ir: FunctionIR, text: string, entry: string, cc: readonly [number, number], maxRegisters: number | undefined): { binary?: Uint8Array } {
  try {
    return { binary: jitLinkKernel({ text, entry }, ir.link ?? [], cc, maxRegisters) };
  } catch {
    return {}; // not found (or it refused the code): the device JIT-compiles or links the PTX at load
  }
}
