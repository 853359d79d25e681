// The JS target: typed IR → JavaScript, run on the CPU with the GPU's dtype
// semantics. Its artifact, a JsKernel, is what the simulator back end loads
// (src/backends/sim/runtime/sim-kernel.ts decides per launch which variant runs, and where).

import type { FunctionIR } from "../../../compiler/ir.js";
import { canThrow } from "../../../compiler/walk.js";
import { InternalCompilerError, type SanitizerTool } from "../../../errors.js";
import { kernelInfo, type KernelInfo } from "../../../abi/kernel-info.js";
import { emitKernel, type EmittedKernel, type SanitizeOptions } from "./emit.js";
import { rt, type AccessSite } from "../runtime/runtime.js";
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
  return { ...emitted, run: define<F>(emitted.code, runtime, ir.constArrays.map((c) => c.data), emitted.sites) };
}

/** The function generated code defines. */
function define<F>(code: string, runtime: object, consts: readonly ArrayBufferView[], sites: readonly AccessSite[]): F {
  const factory = new Function("rt", "consts", "sites", code) as (r: object, consts: readonly ArrayBufferView[], s: readonly AccessSite[]) => F;
  return factory(runtime, consts, sites);
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

/**
 * A kernel compiled for the simulator as data (Backend.build): the plain code and what loading it
 * needs; the variants are compiled from the IR at their first use. `sites` leave out their `origin`
 * (a function): `own` says which sites' text is the kernel's own.
 */
export interface JsArtifactFacts extends Omit<EmittedKernel, "code" | "sites"> {
  readonly sites: readonly (Omit<AccessSite, "origin"> & { readonly own: boolean })[];
  readonly consts: readonly ArrayBufferView[];
  readonly throws: boolean;
}

/** The plain code of a kernel and the facts its loading needs (loadJs makes a JsKernel of them). */
export function buildJs(ir: FunctionIR): { info: KernelInfo; code: string; facts: JsArtifactFacts } {
  if (ir.kind !== "kernel") throw new InternalCompilerError(`compileJs: '${ir.name}' is a device function, not a kernel`);
  const { code, sites, ...emitted } = emitKernel(ir, {});
  const facts = {
    ...emitted,
    sites: sites.map(({ origin, ...site }) => ({ ...site, own: origin !== undefined })),
    consts: ir.constArrays.map((c) => c.data),
    throws: canThrow(ir),
  };
  return { info: kernelInfo(ir), code, facts };
}

/** The kernel an artifact of buildJs holds; `ir` compiles the kernel's IR for the variants it lacks. */
export function loadJs(info: KernelInfo, code: string, facts: JsArtifactFacts, origin: Function | undefined, ir: () => FunctionIR): JsKernel {
  const sites: AccessSite[] = facts.sites.map(({ own, ...site }) => (own && origin ? { ...site, origin } : site));
  const { consts, throws, ...emitted } = facts;
  const plain: BuiltKernel = { ...emitted, code, sites, run: define<KernelFn>(code, rt, consts, sites) };
  let checked: KernelFn | undefined, shuffled: KernelFn | undefined;
  // the sanitizer's variants, by schedule (random: all generators), by whether the launch meets the plain
  // code's assumptions, and by the tools
  const sanitized = new Map<string, BuiltKernel<SanitizedKernelFn>>();
  return {
    ...plain,
    info,
    consts,
    throws,
    checked: () => (checked ??= build<KernelFn>(ir(), { assumeLaunch: false }, rt).run),
    shuffled: () => (shuffled ??= build<KernelFn>(ir(), { generators: true, assumeLaunch: false }, rt).run),
    sanitized(random, assumeLaunch, tools = simChecks().tools!) {
      const key = `${random}:${assumeLaunch}:${[...tools].sort().join(",")}`;
      let v = sanitized.get(key);
      if (!v) sanitized.set(key, (v = sanitizedVariant(ir(), { sanitize: true, generators: random, assumeLaunch, tools })));
      return v;
    },
  };
}

/** Compiles a kernel for the simulator. */
export function compileJs(ir: FunctionIR): JsKernel {
  const { info, code, facts } = buildJs(ir);
  return loadJs(info, code, facts, ir.origin, () => ir);
}
