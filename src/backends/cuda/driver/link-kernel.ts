// A kernel's PTX linked with the device code of its `link` option into the image the driver loads:
// CUDA C++ compiled by NVRTC first; with LTO-IR among the inputs everything goes through nvJitLink
// (-lto), else through the driver's linker (cuLink*, no toolkit needed).

import { dirname } from "node:path";
import type { FunctionIR, LinkSource } from "../../../compiler/ir.js";
import { bodyHas } from "../../../compiler/walk.js";
import { CudaError } from "../../../errors.js";
import { compileCuda } from "../nvrtc/nvrtc.js";
import { jitLink, type JitLinkInput } from "../nvrtc/nvjitlink.js";
import type { DeviceContext } from "./context.js";
import { linkImage, type LinkInput } from "./link.js";

/** The kernel's own code, as the PTX target emitted it. */
interface KernelPtx { readonly text: string; readonly entry: string }

/**
 * Whether a kernel loads through a linker: it has `link` entries, or calls a declared function (which,
 * with nothing linked, fails as the linker says: an unresolved extern function).
 */
export const needsLink = (ir: FunctionIR): boolean => (ir.link?.length ?? 0) > 0 || bodyHas(ir.body, (e) => e.k === "external");

/** The functions a kernel's PTX declares `.extern` (vprintf, which the JIT provides, aside). */
function externalFunctions(ptx: string): string[] {
  return [...ptx.matchAll(/^\.extern \.func (?:\([^)]*\) )?(\w+)\(/gm)].map((m) => m[1]!).filter((name) => name !== "vprintf");
}

/**
 * The image of `ptx` linked with `sources`, for the device of `owner` (its context is made current).
 * A failed link is the linker's CudaError (NVRTC's CompileError for CUDA C++ that does not compile),
 * with a note naming the declared functions the kernel calls when the link leaves one undefined.
 */
export function linkKernel(owner: DeviceContext, ptx: KernelPtx, sources: readonly LinkSource[], maxRegisters?: number): Uint8Array {
  const cc = owner.device.computeCapability;
  const lto = sources.some((s) => s.kind === "ltoir");
  // CUDA C++ as PTX for the driver's linker, as LTO-IR where nvJitLink links with -lto anyway
  const inputs = sources.map((s): JitLinkInput => (s.kind !== "cuda-c++" ? { ...s, kind: s.kind as JitLinkInput["kind"] } : {
    kind: lto ? "ltoir" : "ptx", name: s.name,
    // a .cu file's #includes are found beside it
    data: compileCuda({ source: String(s.data), name: s.name }, { computeCapability: cc, output: lto ? "ltoir" : "ptx", includeDirs: dirname(s.name) === "." ? [] : [dirname(s.name)] }).code,
  }));
  const all: JitLinkInput[] = [{ kind: "ptx", name: `${ptx.entry}.ptx`, data: ptx.text }, ...inputs];
  try {
    if (lto) return jitLink(all, { computeCapability: cc, options: maxRegisters === undefined ? [] : [`-maxrregcount=${maxRegisters}`] }).cubin;
    owner.activate();
    return linkImage(owner.driver, all as LinkInput[], { maxRegisters }).image;
  } catch (e) {
    throw withDeclaredFunctions(e, ptx, sources);
  }
}

/** What the linkers' logs say of a symbol nothing defines (the driver's, nvJitLink's). */
const UNDEFINED = /Unresolved extern function|Undefined reference/;

/** An undefined-symbol error with a line naming the functions the kernel declares and what was linked to define them. */
function withDeclaredFunctions(e: unknown, ptx: KernelPtx, sources: readonly LinkSource[]): unknown {
  const declared = externalFunctions(ptx.text);
  if (!(e instanceof CudaError) || !UNDEFINED.test(e.message) || declared.length === 0) return e;
  const linked = sources.length ? `it was linked with ${sources.map((s) => `'${s.name}'`).join(", ")}` : "it has no `link` entries";
  const note = `kernel '${ptx.entry}' calls ${declared.map((n) => `'${n}'`).join(", ")} (declared with cuda.declareDevice) and ${linked}: each declared function must be defined (extern "C" __device__) by the code given in cuda.jit's link option`;
  e.message = `${e.message}\n${note}`;
  return e;
}
