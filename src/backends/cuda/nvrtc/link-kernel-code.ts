// A kernel's PTX and the code of its `link` option as linker inputs, and their link by nvJitLink with no
// device (bundles; the driver's linker, driver/link-kernel.ts, takes the same inputs on a device).

import { dirname } from "node:path";
import type { LinkSource } from "../../../compiler/ir.js";
import { CudaError } from "../../../errors.js";
import { compileCuda } from "./nvrtc.js";
import { jitLink, type JitLinkInput } from "./nvjitlink.js";

/** The kernel's own code, as the PTX target emitted it. */
export interface KernelPtx { readonly text: string; readonly entry: string }

/** The functions a kernel's PTX declares `.extern` (vprintf, which the JIT provides, aside). */
export function externalFunctions(ptx: string): string[] {
  return [...ptx.matchAll(/^\.extern \.func (?:\([^)]*\) )?(\w+)\(/gm)].map((m) => m[1]!).filter((name) => name !== "vprintf");
}

/** The kernel's PTX and `sources` as linker inputs for `cc`: CUDA C++ compiled by NVRTC, to LTO-IR where `lto`, else to PTX. */
export function linkInputs(ptx: KernelPtx, sources: readonly LinkSource[], cc: readonly [number, number], lto: boolean): JitLinkInput[] {
  const inputs = sources.map((s): JitLinkInput => (s.kind !== "cuda-c++" ? { ...s, kind: s.kind as JitLinkInput["kind"] } : {
    kind: lto ? "ltoir" : "ptx", name: s.name,
    // a .cu file's #includes are found beside it
    data: compileCuda({ source: String(s.data), name: s.name }, { computeCapability: cc, output: lto ? "ltoir" : "ptx", includeDirs: dirname(s.name) === "." ? [] : [dirname(s.name)] }).code,
  }));
  return [{ kind: "ptx", name: `${ptx.entry}.ptx`, data: ptx.text }, ...inputs];
}

/** nvJitLink's options of a kernel with `maxRegisters`. */
export const registerOptions = (maxRegisters: number | undefined): string[] => (maxRegisters === undefined ? [] : [`-maxrregcount=${maxRegisters}`]);

/**
 * The cubin of `ptx` linked with `sources` by nvJitLink for compute capability `cc` (-lto where one is
 * LTO-IR), with no device; throws where NVRTC or nvJitLink is not found, or as linking fails.
 */
export function jitLinkKernel(ptx: KernelPtx, sources: readonly LinkSource[], cc: readonly [number, number], maxRegisters?: number): Uint8Array {
  try {
    return jitLink(linkInputs(ptx, sources, cc, sources.some((s) => s.kind === "ltoir")), { computeCapability: cc, options: registerOptions(maxRegisters) }).cubin;
  } catch (e) {
    throw withDeclaredFunctions(e, ptx, sources);
  }
}

/** What the linkers' logs say of a symbol nothing defines (the driver's, nvJitLink's). */
const UNDEFINED = /Unresolved extern function|Undefined reference/;

/** An undefined-symbol error with a line naming the functions the kernel declares and what was linked to define them. */
export function withDeclaredFunctions(e: unknown, ptx: KernelPtx, sources: readonly LinkSource[]): unknown {
  const declared = externalFunctions(ptx.text);
  if (!(e instanceof CudaError) || !UNDEFINED.test(e.message) || declared.length === 0) return e;
  const linked = sources.length ? `it was linked with ${sources.map((s) => `'${s.name}'`).join(", ")}` : "it has no `link` entries";
  const note = `kernel '${ptx.entry}' calls ${declared.map((n) => `'${n}'`).join(", ")} (declared with cuda.declareDevice) and ${linked}: each declared function must be defined (extern "C" __device__) by the code given in cuda.jit's link option`;
  e.message = `${e.message}\n${note}`;
  return e;
}
