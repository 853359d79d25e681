// WGSL compile errors a kernel can still meet after emitWgsl, told in the kernel's terms: WGSL rejects
// a barrier that the threads of a workgroup might not all reach (uniformity analysis, done by the
// device's WGSL compiler), and numbats leaves that verdict to it; its message names a WGSL line,
// whose `// numbats: place N` comment leads back to the barrier's place in the kernel.

import type { FunctionIR } from "../../../compiler/ir.js";
import { CompileError } from "../../../errors.js";
import type { WgslKernel } from "./layout.js";

/** one message of GPUCompilationInfo */
export interface WgslMessage {
  readonly type: string;
  readonly lineNum: number;
  readonly linePos: number;
  readonly message: string;
}

/**
 * The CompileError for the shader compiler's errors on `kernel` (compiled from `ir`), at the
 * kernel's barrier when an error is about one; undefined when no error names a barrier's line.
 */
export function explainWgslErrors(ir: FunctionIR, kernel: WgslKernel, messages: readonly WgslMessage[]): CompileError | undefined {
  const lines = kernel.code.split("\n");
  for (const m of messages) {
    if (m.type !== "error") continue;
    const place = /\/\/ numbats: place (\d+)$/.exec(lines[m.lineNum - 1] ?? "");
    const at = place ? kernel.places[Number(place[1])] : undefined;
    if (!at || !/uniform control flow/.test(m.message)) continue;
    const message = "a barrier (cuda.syncthreads) that not every thread of the block may reach together is not available on the webgpu target "
      + "(WGSL requires it in uniform control flow: no branch, loop condition or earlier return that depends on the thread's index or on "
      + `memory may lead to it; keep the threads in the kernel until after the barrier, e.g. \`if (i < n) { … }\` around the work instead of \`if (i >= n) return;\`; the WGSL compiler says: ${m.message})`;
    const source = at.source ?? ir.source;
    return new CompileError(ir.name, source, [{ message, line: at.line, column: at.column }], at.source ? undefined : ir.origin);
  }
  return undefined;
}
