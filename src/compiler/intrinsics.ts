// Every intrinsic of the IR in one table: its parameters and result, what it does besides computing a
// value and how the user spells it (what a target needs for one is that target's own table). The front end types a `cuda.*`
// call of one from its row (builtins.ts), the passes and both targets ask the table instead of keeping
// lists of names, and the language reference's table of them is generated from it (a test checks
// docs/language.md and the host-side stubs in cuda.ts against it). A kernel's `Features` are derived
// from it by one walk over the IR (`featuresOf`).

import { tupleType, type ScalarName, type TupleType, type Type } from "../dtypes.js";
import { InternalCompilerError } from "../errors.js";
import { exprChildren, stmtExprs, walkStmts, type Expr, type Features, type FunctionIR, type IntrinsicExpr, type IntrinsicName, type Loc } from "./ir.js";

/**
 * What an intrinsic does besides computing its value:
 * - none: nothing (a value from its arguments and the thread's position);
 * - order: orders memory or pauses the thread, with no effect a single thread can observe (fences, nanosleep);
 * - barrier: the block's threads wait for each other (`__syncthreads`);
 * - grid: every thread of the grid waits for the others (a cooperative launch);
 * - warp: the lanes the mask names meet (and exchange values);
 * - output: prints (and, for assert, may stop the kernel);
 * - exit: stops the thread (`throw`).
 */
export type IntrinsicEffect = "none" | "order" | "barrier" | "grid" | "warp" | "output" | "exit";

/**
 * The type of an intrinsic's parameter:
 * - a dtype: the argument converted to it, as an assignment converts;
 * - mask: a warp mask, an integer or bool as uint32 (never a float: it would be truncated silently);
 *   an optional mask is the full warp when absent;
 * - lane: a lane, delta or lane mask, an integer as int32;
 * - T: any scalar, kept as it is (a weak literal takes its default type); a result `T` is its type;
 * - scalar: any scalar, kept as it is;
 * - string: an index into `FunctionIR.strings` (an int32 const made from a string literal);
 * - array: an array (what kind, the intrinsic's note says);
 * - values: any number of scalars (printed).
 */
export type IntrinsicParamType = ScalarName | "mask" | "lane" | "T" | "scalar" | "string" | "array" | "values";

export interface IntrinsicParam {
  readonly name: string;
  readonly type: IntrinsicParamType;
  /** may be left out (a mask: then the full warp) */
  readonly optional?: true;
}

/** An intrinsic's result: a type, the type of its `T` parameter, or an array (what kind, the note says). */
export type IntrinsicResult = ScalarName | TupleType | "void" | "T" | "array";

export interface IntrinsicInfo {
  /** the parameters, in order */
  readonly params: readonly IntrinsicParam[];
  readonly result: IntrinsicResult;
  /** what the value is, or how it is computed, where the types do not say it */
  readonly note?: string;
  readonly effect: IntrinsicEffect;
  /** how the user writes it, for errors */
  readonly spelling: string;
  /** which parameter is a string (an index into `FunctionIR.strings`) */
  readonly stringArg?: number;
  /** a reducing barrier's block-wide operation on its bool argument */
  readonly reduction?: "count" | "and" | "or";
}

const param = (name: string, type: IntrinsicParamType, optional?: true): IntrinsicParam => (optional ? { name, type, optional } : { name, type });
const MASK = param("mask", "mask");
const PREDICATE = param("predicate", "bool");
/** the ids `throw` and `assert` report: tid.x, tid.y, tid.z, ctaid.x, ctaid.y, ctaid.z */
const THREAD_AND_BLOCK = ["tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z"].map((id) => param(id, "int32"));

// not named `cuda`: a bundler would then rename the user's own `cuda` import, which kernels must see by that name
const cudaCall = (name: IntrinsicName, params: readonly IntrinsicParam[], result: IntrinsicResult, effect: IntrinsicEffect, more: Partial<IntrinsicInfo> = {}): IntrinsicInfo =>
  ({ params, result, effect, spelling: `cuda.${name}`, ...more });
const reducingBarrier = (name: IntrinsicName, reduction: "count" | "and" | "or", note: string) =>
  cudaCall(name, [PREDICATE], "int32", "barrier", { reduction, note });
const fence = (name: IntrinsicName) => cudaCall(name, [], "void", "order");
const shuffle = (name: IntrinsicName, lane: string) =>
  cudaCall(name, [MASK, param("value", "T"), param(lane, "lane")], "T", "warp", { note: "any scalar (64-bit: two 32-bit shuffles)" });
const vote = (name: IntrinsicName, result: ScalarName) => cudaCall(name, [MASK, PREDICATE], result, "warp");
/** an intrinsic with a string parameter (its index in `FunctionIR.strings`) */
const withString = (spelling: string, params: readonly IntrinsicParam[], result: IntrinsicResult, effect: IntrinsicEffect, note: string): IntrinsicInfo =>
  ({ params, result, effect, spelling, note, stringArg: params.findIndex((p) => p.type === "string") });
const fast = (math: string, more: Partial<IntrinsicInfo> = {}): IntrinsicInfo =>
  ({ params: [param("x", "float32")], result: "float32", note: "PTX .approx (fastmath only)", effect: "none", spelling: `${math} (fastmath)`, ...more });

export const INTRINSICS: Readonly<Record<IntrinsicName, IntrinsicInfo>> = {
  syncthreads: cudaCall("syncthreads", [], "void", "barrier"),
  syncthreadsCount: reducingBarrier("syncthreadsCount", "count", "how many threads passed true"),
  syncthreadsAnd: reducingBarrier("syncthreadsAnd", "and", "1 if every thread passed true"),
  syncthreadsOr: reducingBarrier("syncthreadsOr", "or", "1 if any thread passed true"),
  syncwarp: cudaCall("syncwarp", [param("mask", "mask", true)], "void", "warp"),
  threadfence: fence("threadfence"),
  threadfenceBlock: fence("threadfenceBlock"),
  threadfenceSystem: fence("threadfenceSystem"),
  gridSync: { params: [], result: "void", note: "needs a cooperative launch", effect: "grid", spelling: "cuda.cg.thisGrid().sync()" },
  shflSync: shuffle("shflSync", "srcLane"),
  shflUpSync: shuffle("shflUpSync", "delta"),
  shflDownSync: shuffle("shflDownSync", "delta"),
  shflXorSync: shuffle("shflXorSync", "laneMask"),
  allSync: vote("allSync", "bool"),
  anySync: vote("anySync", "bool"),
  eqSync: vote("eqSync", "bool"),
  ballotSync: vote("ballotSync", "uint32"),
  matchAnySync: cudaCall("matchAnySync", [MASK, param("value", "scalar")], "uint32", "warp"),
  matchAllSync: cudaCall("matchAllSync", [MASK, param("value", "scalar")], tupleType(["uint32", "bool"]), "warp"),
  activemask: cudaCall("activemask", [], "uint32", "warp"),
  lanemaskLt: cudaCall("lanemaskLt", [], "uint32", "none"),
  nanosleep: cudaCall("nanosleep", [param("ns", "uint32")], "void", "order"),
  print: withString("console.log", [param("format", "string"), param("values", "values")], "void", "output",
    "C printf (vprintf on the GPU); values are scalars, promoted as C varargs are (floats to double, narrower ints and bool to int), or `cstring`s for %s"),
  cstring: withString("a string argument of console.log", [param("text", "string")], "uint64", "none",
    "the address of that NUL-terminated string; only a `print`/`assert` value"),
  assert: withString("console.assert", [param("cond", "bool"), param("format", "string"), ...THREAD_AND_BLOCK], "void", "output",
    "a `debug` assertion: unless cond, prints like `print` and stops the kernel (PTX `trap`); the simulator throws a LaunchError with the printed text instead"),
  throw: withString("throw", [param("site", "string"), ...THREAD_AND_BLOCK], "void", "exit",
    "the thread stops (site: see `throwSite`); the first thrower of a launch records the site and its ids for the host, which raises a KernelError (no `trap`: the context survives)"),
  subarray: {
    params: [param("array", "array"), param("begin", "int32"), param("end", "int32", true)], result: "array", effect: "none", spelling: "array.subarray",
    note: "of a 1-d array, the same array type: elements [begin, end) of it, shared; begin and end as JavaScript's `subarray` takes them (negative from the end, clamped to [0, length]; end absent: length)",
  },
  view: {
    params: [param("array", "array")], result: "array", effect: "none", spelling: "array.view",
    note: "of a contiguous 1-d array, a C 1-d array of the result's dtype over the same bytes, as many whole elements as they hold (its start must be aligned to the new element size)",
  },
  fastExp2: fast("Math.exp2"),
  fastLog2: fast("Math.log2"),
  fastSin: fast("Math.sin"),
  fastCos: fast("Math.cos"),
  fastRcp: fast("1 / x"),
  fastTanh: fast("Math.tanh"),
  fastDiv: fast("/", { params: [param("x", "float32"), param("y", "float32")], note: "div.approx.ftz.f32 (fastmath only: `/` and `tan`)" }),
};

/**
 * A call of intrinsic `name`, of the type its row gives; a `T` or array result is the type the caller
 * worked out from the arguments (`type`).
 */
export function intrinsicCall(name: IntrinsicName, args: readonly Expr[], loc: Loc | undefined, type?: Type): IntrinsicExpr {
  const { result } = INTRINSICS[name];
  const t = result === "T" || result === "array" ? type : result;
  if (t === undefined) throw new InternalCompilerError(`intrinsic ${name}: its ${result} result needs the caller's type`);
  return { k: "intrinsic", name, type: t, args, loc };
}

/** threads must meet at it (a barrier, a grid sync or a warp operation): the simulator yields there */
export const isRendezvous = (name: IntrinsicName): boolean => {
  const { effect } = INTRINSICS[name];
  return effect === "barrier" || effect === "grid" || effect === "warp";
};

/** the features a function has, from one walk over its body; a device function it calls brings its own (found when it was lowered) */
export function featuresOf(fn: Pick<FunctionIR, "body">): Features {
  const features: Features = { barriers: false, warp: false, gridSync: false, dynamicShared: false, print: false };
  const visitExpr = (e: Expr): void => {
    if (e.k === "call") for (const k of Object.keys(features) as (keyof Features)[]) features[k] ||= e.fn.features[k];
    if (e.k === "intrinsic") {
      const { effect } = INTRINSICS[e.name];
      if (effect === "barrier" || effect === "grid") features.barriers = true;
      if (effect === "grid") features.gridSync = true;
      if (effect === "warp") features.warp = true;
      if (effect === "output") features.print = true;
    }
    exprChildren(e).forEach(visitExpr);
  };
  walkStmts(fn.body, (s) => {
    if (s.k === "alloc" && s.type.space === "shared" && s.shape.length === 1 && s.shape[0] === 0) features.dynamicShared = true;
    stmtExprs(s).forEach(visitExpr);
  });
  return features;
}
