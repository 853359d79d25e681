// One mutant of the source-robustness fuzzer: compiles it as its kernel was compiled (argument types,
// env, options) for both targets, and says whether numbats behaved. A compile must succeed or throw a
// CompileError or TypingError whose every position is inside the mutant's text; anything else thrown
// is a failure (InternalCompilerError, a TypeError or RangeError from inside numbats, a stack
// overflow). A mutant that compiles is launched as its kernel was, on ptxsim (the PTX) and on the
// simulator, which must agree. What counts as agreement:
//
//  - the launch checks of the API refuse it (too much shared memory, …): nothing runs, as for a user;
//  - ptxsim runs past its instruction budget: a loop that does not end, which kernels may have; not
//    compared (the simulator, which has no budget, is not run);
//  - the simulator stops the launch with a LaunchError (an index out of bounds, a barrier some threads
//    skip, a warp mask without the calling thread, a thrown Error): the kernel is wrong, and PTX without
//    `debug` does not check what the simulator checks, so ptxsim's result is not compared;
//  - both finish with the same arrays (and printed lines), floats by value (any NaN equals any NaN, -0
//    differs from 0), bit for bit otherwise.
//
// When the results differ, or ptxsim faults where the simulator finished, it is still agreement if:
//  - ptxsim gives the simulator's result when run again (it is an interpreter in JavaScript, which has
//    been seen to lose a NaN's payload once in thousands of runs);
//  - the sanitizer (all its tools) finds a race, an uninitialised read or a divergent barrier;
//  - the simulator's random schedules give other results than its usual order, or the PTX run's (blocks
//    reading what other blocks write);
//  - the kernel uses an atomic's returned old value, an atomic exch, cas, inc or dec, atomics of
//    different kinds that may meet on one element, or plain reads or writes of an array it updates with
//    atomics: the result depends on how threads interleave (PTX runs a warp's threads in lockstep, the
//    simulator one after another), which no schedule of the simulator's varies;
//  - only NaNs differ, seen as integers through a view (`words.view(float32)`): NaN payloads are not
//    promised across targets;
//  - the kernel calls cuda.activemask(), whose lanes depend on the warp's scheduler.
// Anything else is a failure.

import { compileToIR, type FrontEndOptions } from "../../src/compiler/index.js";
import { exprChildren, stmtExprs, walkStmts, type Expr, type FunctionIR } from "../../src/compiler/ir.js";
import { bodyHas, exprHas, forEachExpr } from "../../src/compiler/walk.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { DTYPE_INFO, isArrayType, isFloat, type Type } from "../../src/dtypes.js";
import { CompileError, LaunchError, TypingError } from "../../src/errors.js";
import { validateLaunch } from "../../src/kernel.js";
import type { CompiledKernel, LaunchDims } from "../../src/abi/backend.js";
import { raiseKernelErrors } from "../../src/abi/kernel-errors.js";
import { getBackend } from "../../src/runtime/select.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { setSimChecks } from "../../src/backends/sim/runtime/sanitize.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import type { PtxModule } from "../../src/backends/cuda/ptx/module.js";
import { argumentTypes, arrayContents, capture, dims3, envArrayContents, envArrayCopies, kernelArgs } from "../helpers/crosscheck.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import type { CorpusKernel } from "./source-corpus.js";

/** ptxsim's budget of thread-instructions for one launch; past it a mutant's loop is taken not to end. */
export const INSTRUCTION_BUDGET = 20_000_000;

/** What became of one mutant. */
export type Verdict =
  | { readonly kind: "compiled"; readonly run: RunVerdict }
  | { readonly kind: "CompileError" | "TypingError"; readonly message: string }
  | { readonly kind: "failure"; readonly what: string; readonly detail: string };

/** How a compiled mutant's runs compare (each counts as agreement). */
export type RunVerdict =
  | "same results" | "the launch is refused" | "past the instruction budget" | "the simulator stopped the launch"
  // the results differed, but:
  | "same results on a second ptxsim run" | "ill-defined (sanitizer)" | "depends on the order threads run in"
  | "atomics whose result depends on the order" | "NaN bits seen through a view" | "uses cuda.activemask()";

/** The stage a check is in, for a watchdog that stops checks that take too long. */
export type Phase = "compile" | "ptxsim" | "simulator" | "second look";

/** A corpus kernel made ready: its argument types and compile options, computed once. */
export interface Prepared {
  readonly corpus: CorpusKernel;
  readonly types: readonly Type[];
  readonly options: FrontEndOptions;
  readonly dims: LaunchDims;
  readonly envBefore: ReadonlyMap<object, ArrayBufferView>;
}

export function prepare(corpus: CorpusKernel): Prepared {
  const c = corpus.kernel;
  const { env, fma, fastmath, debug, lineinfo, maxRegisters } = c.options ?? {};
  return {
    corpus,
    types: argumentTypes(c, c.args()),
    options: { env, fma, fastmath, debug, lineinfo, maxRegisters, name: "mutant", module: corpus.file, resolveDeviceFunction },
    dims: { grid: dims3(c.grid), block: dims3(c.block), sharedMemBytes: c.sharedMemBytes ?? 0 },
    envBefore: envArrayContents(env),
  };
}

/** The function a text is (V8's own parse: a text it rejects is no input numbats can be given). */
export const functionOf = (source: string) => new Function(`return (${source}\n);`)() as (...a: never[]) => void;

/** Whether (line, column) of an error is a place in `source` (line 1-based, column 0-based, at most the line's end). */
function inside(source: string, line: number, column: number): boolean {
  const text = source.split("\n")[line - 1];
  return Number.isInteger(line) && Number.isInteger(column) && text !== undefined && column >= 0 && column <= text.length;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.stack ?? `${e.name}: ${e.message}` : String(e);
}

/** What a compile threw, judged. */
function judgeCompileError(e: unknown, source: string): Verdict {
  if (!(e instanceof CompileError) && !(e instanceof TypingError)) {
    const what = e instanceof Error ? e.name : typeof e;
    return { kind: "failure", what: e instanceof RangeError && /call stack/.test(e.message) ? "stack overflow" : what, detail: describe(e) };
  }
  // the error's own place is in the user's file when that is known; a mutant has no file, so both are the text's
  const outside = [e, ...e.problems].find((p) => !inside(source, p.line, p.column));
  if (outside) return { kind: "failure", what: `${e.name} outside the source`, detail: `line ${outside.line}, column ${outside.column}\n${describe(e)}` };
  return { kind: e.name as "CompileError" | "TypingError", message: e.message };
}

export interface Compiled { readonly ir: FunctionIR; readonly ptx: PtxModule; readonly sim: CompiledKernel }

/** Compiles a text for both targets; what it threw, judged, when it did not compile. */
export function compileBoth(p: Prepared, source: string): Compiled | Verdict {
  try {
    const ir = compileToIR(functionOf(source), p.types, p.options);
    return { ir, ptx: emitPtx(ir, { computeCapability: [8, 0] }), sim: compileSim(ir) };
  } catch (e) {
    return judgeCompileError(e, source);
  }
}

/** Checks one mutant's text, and runs a compiled one on both targets; `phase` is told each stage as it starts. */
export async function checkMutant(p: Prepared, source: string, phase: (p: Phase) => void = () => {}): Promise<Verdict> {
  phase("compile");
  const compiled = compileBoth(p, source);
  if ("kind" in compiled) return compiled;
  return runBoth(p, compiled, phase);
}

/** One launch's outcome on a target: the arrays' contents and what it printed, or how it stopped. */
export type Run = { readonly ok: true; readonly contents: unknown[]; readonly printed: string[] } | { readonly ok: false; readonly error: unknown };

async function runBoth(p: Prepared, k: Compiled, phase: (p: Phase) => void): Promise<Verdict> {
  try {
    validateLaunch(getBackend(), k.sim, p.dims); // what a launch through the API checks first
  } catch (e) {
    if (e instanceof LaunchError) return { kind: "compiled", run: "the launch is refused" };
    return { kind: "failure", what: `checking the launch: ${e instanceof Error ? e.name : typeof e}`, detail: describe(e) };
  }
  phase("ptxsim");
  const ptx = await runPtx(p, k);
  if (!ptx.ok && /instruction limit .* exceeded/.test(messageOf(ptx.error))) return { kind: "compiled", run: "past the instruction budget" };
  phase("simulator");
  const sim = runSim(p, k);
  if (!sim.ok) {
    if (sim.error instanceof LaunchError) return { kind: "compiled", run: "the simulator stopped the launch" };
    return { kind: "failure", what: `simulator: ${sim.error instanceof Error ? sim.error.name : typeof sim.error}`, detail: describe(sim.error) };
  }
  if (!ptx.ok && !isPtxFault(ptx.error)) return { kind: "failure", what: "ptxsim cannot run the PTX", detail: `${describe(ptx.error)}\n--- PTX\n${k.ptx.text}` };
  const differs = ptx.ok ? difference(sim, ptx) : `ptxsim faulted where the simulator finished: ${messageOf(ptx.error)}`;
  if (!differs) return { kind: "compiled", run: "same results" };
  phase("second look");
  const again = await runPtx(p, k);
  if (again.ok && !difference(sim, again)) return { kind: "compiled", run: "same results on a second ptxsim run" };
  if (sanitizerFinds(p, k)) return { kind: "compiled", run: "ill-defined (sanitizer)" };
  if (dependsOnOrder(p, k, sim, ptx)) return { kind: "compiled", run: "depends on the order threads run in" };
  if (orderDependentAtomics(k.ir)) return { kind: "compiled", run: "atomics whose result depends on the order" };
  if (ptx.ok && onlyNaNBitsDiffer(k.ir, sim, ptx)) return { kind: "compiled", run: "NaN bits seen through a view" };
  // the lanes a call finds together depend on the warp's scheduler; the simulator's and ptxsim's differ (docs/decisions.md)
  if (bodyHas(k.ir.body, (e) => e.k === "intrinsic" && e.name === "activemask")) return { kind: "compiled", run: "uses cuda.activemask()" };
  return { kind: "failure", what: "simulator and PTX differ", detail: differs };
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** ptxsim's own error for a fault in the kernel (a bad address, a trap, a deadlock), as opposed to a bug. */
const isPtxFault = (e: unknown) => e instanceof Error && e.constructor.name === "PtxError";

async function runPtx(p: Prepared, k: Compiled): Promise<Run> {
  const c = p.corpus.kernel, host = c.args(), env = envArrayCopies(k.ir, p.envBefore);
  try {
    const res = await runOnPtxsim(k.ptx, p.dims, kernelArgs(host, k.ir, env), { maxInstructions: INSTRUCTION_BUDGET });
    return { ok: true, contents: contentsOf(p, host, env), printed: k.ir.features.print ? lines(res.output) : [] };
  } catch (error) {
    return { ok: false, error };
  }
}

export function runSim(p: Prepared, k: Compiled): Run {
  const c = p.corpus.kernel, host = c.args(), env = envArrayCopies(k.ir, p.envBefore);
  try {
    const printed = capture(() => {
      k.sim.launch(p.dims, kernelArgs(host, k.ir, env), getBackend().defaultStream(), k.ir.features.gridSync);
      raiseKernelErrors();
    });
    return { ok: true, contents: contentsOf(p, host, env), printed: k.ir.features.print ? lines(printed) : [] };
  } catch (error) {
    return { ok: false, error };
  }
}

function contentsOf(p: Prepared, host: readonly unknown[], env: readonly { data: ArrayBufferView }[]): unknown[] {
  return [...arrayContents(host as never, p.corpus.kernel.scheduleDependent), ...arrayContents(env.map((e) => e.data))];
}

/** Printed lines in order (threads print in another order on ptxsim than on the simulator). */
const lines = (xs: readonly string[]) => xs.flatMap((s) => s.split("\n")).filter((l) => l !== "").sort();

/** Where two finished runs differ, in words, or "" when they do not. */
function difference(sim: Run & { ok: true }, ptx: Run & { ok: true }): string {
  for (let a = 0; a < sim.contents.length; a++) {
    const x = sim.contents[a], y = ptx.contents[a];
    if (x === undefined || JSON.stringify(x, bigints) === JSON.stringify(y, bigints)) continue;
    const xs = Array.from(x as ArrayLike<unknown>), ys = Array.from(y as ArrayLike<unknown>);
    const at = xs.findIndex((v, j) => !Object.is(v, ys[j]));
    return `argument ${a + 1} differs first at [${at}]: simulator ${String(xs[at])}, PTX ${String(ys[at])}`;
  }
  if (JSON.stringify(sim.printed) !== JSON.stringify(ptx.printed)) {
    return `printed output differs:\n  simulator: ${sim.printed.slice(0, 5).join(" | ")}\n  PTX: ${ptx.printed.slice(0, 5).join(" | ")}`;
  }
  return "";
}

const bigints = (_: string, v: unknown) => (typeof v === "bigint" ? `${v}n` : v);

/** Seeds of the simulator's random schedules that look for results that depend on the order threads run in. */
const SCHEDULES = [1, 2, 3];

/**
 * Whether the simulator, running blocks, warps and threads in random orders, gives other results than
 * in its usual order, or the PTX run's: atomics of different kinds on one element, a block reading what
 * other blocks write (neither is a race the sanitizer reports).
 */
function dependsOnOrder(p: Prepared, k: Compiled, sim: Run & { ok: true }, ptx: Run): boolean {
  for (const seed of SCHEDULES) {
    setSimChecks({ seed });
    try {
      const run = runSim(p, k);
      if (!run.ok) return true;
      if (difference(sim, run) || (ptx.ok && !difference(run, ptx))) return true;
    } finally {
      setSimChecks(undefined);
    }
  }
  return false;
}

/**
 * Whether the kernel uses an atomic's returned old value, an atomic whose effect depends on the order
 * (exch, cas, inc, dec), atomics of different kinds on one element, or reads or writes plainly an array
 * it updates with atomics: its result depends
 * on how the threads' steps interleave, which the simulator's schedules (a thread runs to its next
 * barrier or warp operation) do not vary, and PTX runs a warp's threads in lockstep.
 */
function orderDependentAtomics(ir: FunctionIR): boolean {
  const isAtomic = (e: Expr) => e.k === "atomic";
  /** each array's atomics: the operation, and the element when the index is constant */
  const updated = new Map<string, { op: string; at?: string }[]>(), plain = new Set<string>();
  const nameOf = (array: Expr) => (array.k === "var" ? array.name : "");
  let found = false;
  walkStmts(ir.body, (s) => {
    if (s.k === "store") plain.add(nameOf(s.array));
    for (const e of stmtExprs(s)) {
      forEachExpr(e, (x) => {
        if (x.k === "atomic") {
          const at = x.index.every((i) => i.k === "const") ? x.index.map((i) => String(i.k === "const" && i.value)).join(",") : undefined;
          updated.set(nameOf(x.array), [...(updated.get(nameOf(x.array)) ?? []), { op: x.op, at }]);
        }
        if (x.k === "load") plain.add(nameOf(x.array));
      });
      if (exprHas(e, (x) => x.k === "atomic" && ORDERED_ATOMICS.has(x.op))) found = true;
      // an atomic that is its statement's whole expression throws its result away
      const used = s.k === "expr" && e === s.expr && isAtomic(e) ? exprChildren(e) : [e];
      if (used.some((x) => exprHas(x, isAtomic))) found = true;
    }
  });
  // atomics of different kinds that may meet on one element do not commute (a max after an xor)
  const mixed = (list: readonly { op: string; at?: string }[]) =>
    list.some((a) => list.some((b) => a.op !== b.op && (a.at === undefined || b.at === undefined || a.at === b.at)));
  return found || [...updated].some(([a, list]) => plain.has(a) || mixed(list));
}

const ORDERED_ATOMICS = new Set(["exch", "cas", "inc", "dec"]);

/** The bits of a NaN of `bytes` bytes (float16, float32, float64) at `at`, little-endian. */
function isNaNBits(b: Uint8Array, at: number, bytes: number): boolean {
  if (at + bytes > b.length) return false;
  let v = 0n;
  for (let k = bytes - 1; k >= 0; k--) v = (v << 8n) | BigInt(b[at + k]!);
  const [fraction, exponent] = bytes === 2 ? [10n, 5n] : bytes === 4 ? [23n, 8n] : [52n, 11n];
  const ones = (1n << exponent) - 1n;
  return ((v >> fraction) & ones) === ones && (v & ((1n << fraction) - 1n)) !== 0n;
}

/**
 * Whether the two runs differ only in NaNs that an array of integers holds through a view of it as
 * floats (`words.view(float32)`): NaN payloads are not promised across targets (docs/decisions.md),
 * and a view shows them as integers. The arrays of integers are compared by bytes; a differing byte
 * must lie in a word that is a NaN on both sides, in one of the kernel's view widths.
 */
function onlyNaNBitsDiffer(ir: FunctionIR, sim: Run & { ok: true }, ptx: Run & { ok: true }): boolean {
  const widths = new Set<number>();
  walkStmts(ir.body, (s) => stmtExprs(s).forEach((e) => forEachExpr(e, (x) => {
    if (x.k === "intrinsic" && x.name === "view" && isArrayType(x.type) && isFloat(x.type.dtype)) widths.add(DTYPE_INFO[x.type.dtype].size);
  })));
  if (widths.size === 0 || JSON.stringify(sim.printed) !== JSON.stringify(ptx.printed)) return false;
  return sim.contents.every((x, a) => {
    const y = ptx.contents[a];
    if (!(x instanceof Uint8Array) || !(y instanceof Uint8Array)) return JSON.stringify(x, bigints) === JSON.stringify(y, bigints);
    for (let j = 0; j < x.length; j++) {
      if (x[j] === y[j]) continue;
      if (![...widths].some((w) => { const at = j - (j % w); return isNaNBits(x, at, w) && isNaNBits(y, at, w); })) return false;
    }
    return true;
  });
}

/** Whether the simulator's sanitizer finds the kernel ill-defined (it stops the launch with a SanitizerError). */
function sanitizerFinds(p: Prepared, k: Compiled): boolean {
  setSimChecks({ tools: "all" });
  try {
    const run = runSim(p, k);
    return !run.ok && run.error instanceof LaunchError && run.error.name === "SanitizerError";
  } finally {
    setSimChecks(undefined);
  }
}
