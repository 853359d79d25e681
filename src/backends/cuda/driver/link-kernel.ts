// A kernel's PTX linked with the device code of its `link` option into the image the driver loads:
// CUDA C++ compiled by NVRTC first; with LTO-IR among the inputs everything goes through nvJitLink
// (-lto), else through the driver's linker (cuLink*, no toolkit needed).

import type { FunctionIR, LinkSource } from "../../../compiler/ir.js";
import { bodyHas } from "../../../compiler/walk.js";
import { jitLink } from "../nvrtc/nvjitlink.js";
import { externalFunctions, linkInputs, registerOptions, withDeclaredFunctions, type KernelPtx } from "../nvrtc/link-kernel-code.js";
import type { DeviceContext } from "./context.js";
import { linkImage, type LinkInput } from "./link.js";

/**
 * Whether a kernel loads through a linker: it has `link` entries, or calls a declared function (which,
 * with nothing linked, fails as the linker says: an unresolved extern function).
 */
export const needsLink = (ir: FunctionIR): boolean => (ir.link?.length ?? 0) > 0 || bodyHas(ir.body, (e) => e.k === "external");

/** needsLink of a kernel's PTX (loaded from the cache or a bundle, without its IR) and its link sources. */
export const ptxNeedsLink = (ptx: string, sources: readonly LinkSource[]): boolean => sources.length > 0 || externalFunctions(ptx).length > 0;

/**
 * The image of `ptx` linked with `sources`, for the device of `owner` (its context is made current).
 * A failed link is the linker's CudaError (NVRTC's CompileError for CUDA C++ that does not compile),
 * with a note naming the declared functions the kernel calls when the link leaves one undefined.
 */
export function linkKernel(owner: DeviceContext, ptx: KernelPtx, sources: readonly LinkSource[], maxRegisters?: number): Uint8Array {
  const cc = owner.device.computeCapability;
  // CUDA C++ as PTX for the driver's linker, as LTO-IR where nvJitLink links with -lto anyway
  const lto = sources.some((s) => s.kind === "ltoir");
  try {
    const all = linkInputs(ptx, sources, cc, lto);
    if (lto) return jitLink(all, { computeCapability: cc, options: registerOptions(maxRegisters) }).cubin;
    owner.activate();
    return linkImage(owner.driver, all as LinkInput[], { maxRegisters }).image;
  } catch (e) {
    throw withDeclaredFunctions(e, ptx, sources);
  }
}
