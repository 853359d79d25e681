// Every intrinsic of the IR in one table: its arguments and result, what it does besides computing a
// value, how the user spells it, and what a PTX target needs for it. The front end, the passes and both
// targets ask this table instead of keeping lists of names; a kernel's `Features` are derived from it by
// one walk over the IR (`featuresOf`).

import { exprChildren, stmtExprs, walkStmts, type Expr, type Features, type FunctionIR, type IntrinsicName } from "./ir.js";

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

/** what an instruction needs beyond the oldest targets: a PTX ISA version and, if any, a compute capability */
export interface PtxNeed { readonly ptx: string; readonly cc?: readonly [number, number] }

export interface IntrinsicInfo {
  /** argument types, in order */
  readonly args: string;
  /** result type, and what the value is where it is not obvious */
  readonly result: string;
  readonly effect: IntrinsicEffect;
  /** how the user writes it, for errors */
  readonly spelling: string;
  /** what the PTX instruction needs of the target (none: every target has it) */
  readonly ptx?: PtxNeed;
  /** which argument is an index into `FunctionIR.strings` (an int32 const) */
  readonly stringArg?: number;
  /** a reducing barrier's block-wide operation on its bool argument */
  readonly reduction?: "count" | "and" | "or";
}

// needs from the PTX ISA release notes; ptxas 13 checks each against `.version` and `.target`
const WARP_SYNC: PtxNeed = { ptx: "6.0" };
/** also barrier.sync (unaligned), atom.release.gpu and ld.acquire.gpu (grid sync) */
const SM70_SYNC: PtxNeed = { ptx: "6.0", cc: [7, 0] };

// not named `cuda`: a bundler would then rename the user's own `cuda` import, which kernels must see by that name
const cudaCall = (name: IntrinsicName, args: string, result: string, effect: IntrinsicEffect, more: Partial<IntrinsicInfo> = {}): IntrinsicInfo =>
  ({ args, result, effect, spelling: `cuda.${name}`, ...more });
const shuffle = (name: IntrinsicName, lane: string) =>
  cudaCall(name, `uint32 mask, T value, int32 ${lane}`, "T (any scalar; 64-bit: two 32-bit shuffles)", "warp", { ptx: WARP_SYNC });
const vote = (name: IntrinsicName, result: string) => cudaCall(name, "uint32 mask, bool", result, "warp", { ptx: WARP_SYNC });
/** an intrinsic whose argument `stringArg` is a string: its index in `FunctionIR.strings` (an int32 const) */
const withString = (stringArg: number, spelling: string, args: string, effect: IntrinsicEffect, result: string): IntrinsicInfo =>
  ({ args, result, effect, spelling, stringArg });
const fast = (name: IntrinsicName, math: string, more: Partial<IntrinsicInfo> = {}): IntrinsicInfo =>
  ({ args: "float32", result: "float32 — PTX .approx (fastmath only)", effect: "none", spelling: `${math} (fastmath)`, ...more });

export const INTRINSICS: Readonly<Record<IntrinsicName, IntrinsicInfo>> = {
  syncthreads: cudaCall("syncthreads", "", "void", "barrier"),
  syncthreadsCount: cudaCall("syncthreadsCount", "bool", "int32: how many threads passed true", "barrier", { reduction: "count" }),
  syncthreadsAnd: cudaCall("syncthreadsAnd", "bool", "int32: 1 if every thread passed true", "barrier", { reduction: "and" }),
  syncthreadsOr: cudaCall("syncthreadsOr", "bool", "int32: 1 if any thread passed true", "barrier", { reduction: "or" }),
  syncwarp: cudaCall("syncwarp", "uint32 mask", "void", "warp", { ptx: WARP_SYNC }),
  threadfence: cudaCall("threadfence", "", "void", "order"),
  threadfenceBlock: cudaCall("threadfenceBlock", "", "void", "order"),
  threadfenceSystem: cudaCall("threadfenceSystem", "", "void", "order"),
  gridSync: { args: "", result: "void (needs a cooperative launch)", effect: "grid", spelling: "cuda.cg.thisGrid().sync()", ptx: SM70_SYNC },
  shflSync: shuffle("shflSync", "srcLane"),
  shflUpSync: shuffle("shflUpSync", "delta"),
  shflDownSync: shuffle("shflDownSync", "delta"),
  shflXorSync: shuffle("shflXorSync", "laneMask"),
  allSync: vote("allSync", "bool"),
  anySync: vote("anySync", "bool"),
  eqSync: vote("eqSync", "bool"),
  ballotSync: vote("ballotSync", "uint32"),
  matchAnySync: cudaCall("matchAnySync", "uint32 mask, T value", "uint32", "warp", { ptx: SM70_SYNC }),
  matchAllSync: cudaCall("matchAllSync", "uint32 mask, T value", "Tuple(uint32, bool)", "warp", { ptx: SM70_SYNC }),
  activemask: cudaCall("activemask", "", "uint32", "warp", { ptx: { ptx: "6.2" } }),
  lanemaskLt: cudaCall("lanemaskLt", "", "uint32", "none"),
  // ptxas 13 takes nanosleep from 6.2; the ISA and LLVM say 6.3
  nanosleep: cudaCall("nanosleep", "uint32 ns", "void", "order", { ptx: { ptx: "6.3", cc: [7, 0] } }),
  print: withString(0, "console.log", "format (string index), ...values", "output",
    "void — C printf (vprintf on the GPU); values are scalars, promoted as C varargs are (floats to double, narrower ints and bool to int), or `cstring`s for %s"),
  cstring: withString(0, "a string argument of console.log", "string index", "none",
    "uint64 — the address of that NUL-terminated string; only a `print`/`assert` value"),
  assert: withString(1, "console.assert", "bool cond, format (string index), ...values", "output",
    "void — a `debug` assertion: unless cond, prints like `print` and stops the kernel (PTX `trap`); the simulator throws a LaunchError with the printed text instead"),
  throw: withString(0, "throw", "site (string index, see `throwSite`), tid.x, tid.y, tid.z, ctaid.x, ctaid.y, ctaid.z", "exit",
    "void — the thread stops; the first thrower of a launch records the site and its ids for the host, which raises a KernelError (no `trap`: the context survives)"),
  subarray: {
    args: "1-d array, int32 begin, int32 end?", effect: "none", spelling: "array.subarray",
    result: "the same array type: elements [begin, end) of it, shared; begin and end as JavaScript's `subarray` takes them (negative from the end, clamped to [0, length]; end absent: length)",
  },
  view: {
    args: "contiguous 1-d array", effect: "none", spelling: "array.view",
    result: "a C 1-d array of the result's dtype over the same bytes, as many whole elements as they hold (its start must be aligned to the new element size)",
  },
  fastExp2: fast("fastExp2", "Math.exp2"),
  fastLog2: fast("fastLog2", "Math.log2"),
  fastSin: fast("fastSin", "Math.sin"),
  fastCos: fast("fastCos", "Math.cos"),
  fastRcp: fast("fastRcp", "1 / x"),
  fastTanh: fast("fastTanh", "Math.tanh", { ptx: { ptx: "7.0", cc: [7, 5] } }),
  fastDiv: fast("fastDiv", "/", { args: "float32, float32", result: "float32 — div.approx.ftz.f32 (fastmath only: `/` and `tan`)" }),
};

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
