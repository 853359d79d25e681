// The JS target: typed IR → JavaScript, run on the CPU with the GPU's dtype
// semantics. Its artifact, a JsKernel, is what the simulator back end loads
// (src/backends/sim/runtime/sim-kernel.ts decides per launch which variant runs, and where).

import type { FunctionIR } from "../../../compiler/ir.js";
import { canThrow } from "../../../compiler/walk.js";
import { InternalCompilerError, type SanitizerTool } from "../../../errors.js";
import { kernelInfo, type KernelInfo } from "../../../abi/kernel-info.js";
import { emitKernel, type EmittedKernel, type SanitizeOptions } from "./emit.js";
import { rt } from "../runtime/runtime.js";
import { reportsFree, sanitizedRuntime, simChecks, type SanitizedKernelFn } from "../runtime/sanitize.js";
import type { KernelFn } from "../runtime/sim-chunks.js";

export { emitKernel, needsGenerators, type EmittedKernel, type KernelShape } from "./emit.js";
export { fma16, fma32, fma64 } from "../../../fp.js";
export { formatPrintf } from "../../../abi/printf.js";
export { launchSatisfies } from "./bounds.js";
export { randomSchedule, runSanitized, simChecks } from "../runtime/sanitize.js";
export type { LaunchCtx } from "../runtime/sim.js";

/** Generated code and the function it defines. */
export type BuiltKernel<F = KernelFn> = EmittedKernel & { readonly run: F };

/**
 * A kernel compiled for the simulator: the plain code, which leaves out the bounds checks that the
 * launch's shape proves (`assumes`, checked per launch by launchSatisfies), and the variants that some
 * launches need, each compiled at its first use.
 */
export interface JsKernel extends BuiltKernel {
  readonly info: KernelInfo;
  /** the constant arrays the code reads (from `env`) */
  readonly consts: readonly ArrayBufferView[];
  /** whether the kernel can `throw` */
  readonly throws: boolean;
  /** the plain code with every bounds check: for launches that break the plain code's assumptions */
  checked(): KernelFn;
  /** every thread a generator, for a random schedule */
  shuffled(): KernelFn;
  /**
   * instrumented for the sanitizer's `tools` (default: those of the current settings), checking only what
   * they need; all generators under a random schedule; with `assumeLaunch`, it leaves out the bounds
   * checks the plain code does, under the same assumptions of the launch. Its `run` checks the common case
   * of each access inline, or, in launches with a freed array, reports every access to the sanitizer's hooks.
   */
  sanitized(random: boolean, assumeLaunch: boolean, tools?: ReadonlySet<SanitizerTool>): BuiltKernel<SanitizedKernelFn>;
}

/** Compiles `ir` to a launch function; `runtime` is what its `rt.*` names resolve to. */
function build<F>(ir: FunctionIR, options: SanitizeOptions, runtime: object): BuiltKernel<F> {
  const emitted = emitKernel(ir, options);
  const factory = new Function("rt", "consts", "sites", emitted.code) as (r: object, consts: readonly ArrayBufferView[], s: typeof emitted.sites) => F;
  return { ...emitted, run: factory(runtime, ir.constArrays.map((c) => c.data), emitted.sites) };
}

/**
 * An instrumented variant: with the accesses' fast paths, and (compiled at its first use) with none, for
 * launches with a freed array. Both have the same sites: the code differs only in the checks' text.
 */
function sanitizedVariant(ir: FunctionIR, options: SanitizeOptions): BuiltKernel<SanitizedKernelFn> {
  const fast = build<SanitizedKernelFn>(ir, options, sanitizedRuntime);
  let hooks: SanitizedKernelFn | undefined;
  const run: SanitizedKernelFn = (L, args, S) =>
    (args.some(reportsFree) ? (hooks ??= build<SanitizedKernelFn>(ir, { ...options, hooks: true }, sanitizedRuntime).run) : fast.run)(L, args, S);
  return { ...fast, run };
}

/** Compiles a kernel for the simulator. */
export function compileJs(ir: FunctionIR): JsKernel {
  if (ir.kind !== "kernel") throw new InternalCompilerError(`compileJs: '${ir.name}' is a device function, not a kernel`);
  const plain = build<KernelFn>(ir, {}, rt);
  let checked: KernelFn | undefined, shuffled: KernelFn | undefined;
  // the sanitizer's variants, by schedule (random: all generators), by whether the launch meets the plain
  // code's assumptions, and by the tools
  const sanitized = new Map<string, BuiltKernel<SanitizedKernelFn>>();
  return {
    ...plain,
    info: kernelInfo(ir),
    consts: ir.constArrays.map((c) => c.data),
    throws: canThrow(ir),
    checked: () => (checked ??= build<KernelFn>(ir, { assumeLaunch: false }, rt).run),
    shuffled: () => (shuffled ??= build<KernelFn>(ir, { generators: true, assumeLaunch: false }, rt).run),
    sanitized(random, assumeLaunch, tools = simChecks().tools!) {
      const key = `${random}:${assumeLaunch}:${[...tools].sort().join(",")}`;
      let v = sanitized.get(key);
      if (!v) sanitized.set(key, (v = sanitizedVariant(ir, { sanitize: true, generators: random, assumeLaunch, tools })));
      return v;
    },
  };
}
