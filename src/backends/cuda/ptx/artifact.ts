// The PTX target's artifacts (abi/backend.ts Artifact) made without a device: what bundles hold for
// the GPU. A device of the compute capability loads one by JIT-compiling its PTX
// (driver/device.ts CudaDevice.load).

import type { Artifact } from "../../../abi/backend.js";
import { kernelInfo } from "../../../abi/kernel-info.js";
import type { FunctionIR } from "../../../compiler/ir.js";
import { emitPtx } from "./emit.js";

/** The PTX of `ir` for compute capability `cc`, as an artifact for devices of that capability. */
export function ptxArtifact(ir: FunctionIR, cc: readonly [number, number]): Artifact {
  const { text, ...facts } = emitPtx(ir, { computeCapability: cc });
  return { target: `cuda sm_${cc.join("")}`, info: kernelInfo(ir), code: text, facts };
}
