// The typed IR: what the front end produces and every target consumes.
//
// Structured (if / loop / block / break / continue / return stay nodes) so the
// JS target can print readable code and the PTX target can lay loops out the
// way ptxas likes. Every expression carries its type; all implicit
// conversions are explicit `cast` nodes, so a target never has to re-derive a
// typing rule. Variable names are unique within a function (the front end
// renames shadowed locals), so a target may map them 1:1 to registers or JS
// `let`s.

import type { ArrayType, ScalarName, TupleType, Type } from "../dtypes.js";

/** 1-based line, 0-based column in the kernel's own source text */
export interface Loc {
  readonly line: number;
  readonly column: number;
  /** the text of the function the position is in, when not the kernel's own (an inlined device function) */
  readonly source?: string;
}

// ---------------------------------------------------------------------------
// Expressions

/**
 * Binary arithmetic. Operands and result have the same scalar type `type`
 * (the front end inserts casts), except shifts whose amount `b` is int32/uint32.
 *
 * - add sub mul: floats IEEE round-to-nearest; ints wrap to the type's width.
 * - div: floats IEEE; ints truncate toward zero (C). Integer div/floordiv/rem
 *   by zero give 0 on every target (Numba's rule; the PTX target guards
 *   non-constant divisors with a select). INT_MIN / -1 wraps to INT_MIN, rem 0.
 * - floordiv: ints only, rounds toward -infinity (`Math.floor(a / b)`).
 * - rem: ints: sign of the dividend (C and JS agree); floats: fmod (JS `%`).
 * - and or xor: ints (bool for bool operands).
 * - shl: shift amount taken modulo the bit width (JS and PTX `shl` of a
 *   masked amount agree). shr: arithmetic for signed, logical for unsigned types,
 *   amount modulo the width.
 * - min max: ints: the obvious; floats: JS `Math.min/max` (NaN if either is
 *   NaN; -0 < +0).
 * - copysign: floats only: `a`'s magnitude with `b`'s sign bit (the math library's helpers use it).
 *
 * `**`, Math.pow, Math.atan2 and Math.hypot are calls of the math library, not operators.
 */
export type BinaryOp =
  | "add" | "sub" | "mul" | "div" | "floordiv" | "rem"
  | "and" | "or" | "xor" | "shl" | "shr"
  | "min" | "max" | "copysign";

/**
 * Unary ops; operand and result have type `type` unless noted.
 * - neg: ints wrap; floats flip the sign bit (-0 from 0).
 * - not: bool → bool.  bitnot: ints.
 * - abs: ints wrap (abs(INT_MIN) = INT_MIN); floats clear the sign bit.
 * - sqrt: floats, IEEE correctly rounded.
 * - floor ceil trunc: floats → same float type (IEEE exact).
 * - rint: round half to even. round: JS `Math.round` (half toward +inf).
 * - isnan isinf isfinite: float → bool.
 * - popc clz: int types → int32 (`clz(0)` is the bit width). brev: same type.
 * - ffs: int types → int32: 1 + index of lowest set bit, 0 for 0.
 */
export type UnaryOp =
  | "neg" | "not" | "bitnot" | "abs" | "sqrt"
  | "floor" | "ceil" | "trunc" | "rint" | "round"
  | "isnan" | "isinf" | "isfinite"
  | "popc" | "clz" | "brev" | "ffs";

export type CompareOp = "lt" | "le" | "gt" | "ge" | "eq" | "ne";

/** Special registers; all int32 (`laneid` too; the warp size is the constant 32). */
export type SpecialReg =
  | "tid.x" | "tid.y" | "tid.z"
  | "ntid.x" | "ntid.y" | "ntid.z"
  | "ctaid.x" | "ctaid.y" | "ctaid.z"
  | "nctaid.x" | "nctaid.y" | "nctaid.z"
  | "laneid";

export type AtomicOp =
  | "add" | "sub" | "max" | "min" | "nanmax" | "nanmin"
  | "and" | "or" | "xor" | "exch" | "inc" | "dec" | "cas";

interface Node {
  readonly loc?: Loc;
}

/** What every statement has: its kind `k`. */
interface StmtOf<K extends string> extends Node {
  readonly k: K;
}

/** What every expression has: its kind `k` and its type. */
interface ExprOf<K extends string, T extends Type> extends Node {
  readonly k: K;
  readonly type: T;
}

export interface ConstExpr extends ExprOf<"const", ScalarName> {
  /** number for ≤32-bit ints and floats, bigint for int64/uint64, boolean for bool */
  readonly value: number | bigint | boolean;
}

/** A parameter or local variable (scalar, array or tuple). */
export interface VarExpr extends ExprOf<"var", Type> {
  readonly name: string;
}

export interface UnaryExpr extends ExprOf<"unary", ScalarName> {
  readonly op: UnaryOp;
  readonly x: Expr;
}

export interface BinaryExpr extends ExprOf<"binary", ScalarName> {
  readonly op: BinaryOp;
  readonly a: Expr;
  readonly b: Expr;
}

/** Fused multiply-add a*b+c with a single rounding; float types only. */
export interface FmaExpr extends ExprOf<"fma", ScalarName> {
  readonly a: Expr;
  readonly b: Expr;
  readonly c: Expr;
}

/** Float comparisons are IEEE: every op but `ne` is false on NaN; `ne` is true. */
export interface CompareExpr extends ExprOf<"compare", "bool"> {
  readonly op: CompareOp;
  readonly a: Expr;
  readonly b: Expr;
}

/** Short-circuit && / || on bools. */
export interface LogicalExpr extends ExprOf<"logical", "bool"> {
  readonly op: "and" | "or";
  readonly a: Expr;
  readonly b: Expr;
}

/** cond ? a : b — only the chosen side is evaluated, unless `eager`. */
export interface SelectExpr extends ExprOf<"select", Type> {
  readonly cond: Expr;
  readonly a: Expr;
  readonly b: Expr;
  /** both sides are evaluated, then one is picked, never a branch (`cuda.selp`, PTX's `selp`) */
  readonly eager?: boolean;
}

/**
 * Value conversion between scalar types, C/CUDA semantics:
 * int→int wraps/extends; int→float rounds to nearest; float→float rounds to
 * nearest; float→int truncates toward zero and saturates to the target range
 * (NaN → 0), which is what PTX `cvt.rzi` does; anything→bool is `!= 0`
 * (NaN → true); bool→number is 0/1.
 */
export interface CastExpr extends ExprOf<"cast", ScalarName> {
  readonly x: Expr;
}

/**
 * Reinterprets bits between same-width types (float32↔int32/uint32,
 * float64↔int64/uint64, float16↔uint16/int16). Used by the math library.
 */
export interface BitcastExpr extends ExprOf<"bitcast", ScalarName> {
  readonly x: Expr;
}

/**
 * float64 ↔ two 32-bit words, as fdlibm does: `hi`/`lo` read the upper/lower
 * 32 bits of a float64 as int32; `make` builds a float64 from (hi, lo) int32s.
 */
export interface WordsExpr extends ExprOf<"words", ScalarName> {
  readonly op: "hi" | "lo" | "make";
  readonly args: readonly Expr[];
}

/**
 * Element read. `array` is an array-typed expression (in practice a VarExpr);
 * `index` has one int32 or int64 expression per dimension, already wrapped
 * for negative indices where the source asked (the front end does not wrap:
 * negative indices are out of bounds, as in C). Type = element dtype.
 */
export interface LoadExpr extends ExprOf<"load", ScalarName> {
  readonly array: Expr;
  readonly index: readonly Expr[];
}

/** `a.shape[dim]` (int32) or `a.strides[dim]` in *elements* (int32), or `a.size` (int32, dim unused). */
export interface ArrayAttrExpr extends ExprOf<"arrayAttr", "int32"> {
  readonly attr: "shape" | "stride" | "size";
  readonly array: Expr;
  readonly dim: number;
}

export interface SpecialExpr extends ExprOf<"special", "int32"> {
  readonly reg: SpecialReg;
}

/** A tuple value (from `cuda.grid(2)`, device-function returns, literals `[a, b]` returned). */
export interface TupleExpr extends ExprOf<"tuple", TupleType> {
  readonly items: readonly Expr[];
}

export interface TupleGetExpr extends ExprOf<"tupleGet", Type> {
  readonly tuple: Expr;
  readonly index: number;
}

/**
 * Atomic read-modify-write on `array[index]`, relaxed, returning the old value
 * (type = element dtype). `value` and `compare` are already cast to the
 * element dtype (inc/dec: uint32 or uint64 arrays only, value of that type).
 * - add sub: ints wrap, floats IEEE (float32 on global memory: subnormals
 *   flush to zero on the GPU; targets document it).
 * - max min: ints signed/unsigned by type; floats as Numba: nothing is
 *   stored when the value or the current element is NaN.
 * - nanmax nanmin: NaN is a missing value: nanmax(NaN, v) = v, nanmax(x, NaN) = x.
 * - inc: old >= value ? 0 : old + 1.  dec: (old == 0 || old > value) ? value : old - 1.
 * - cas: if old == compare then value is stored (bitwise compare for floats).
 */
export interface AtomicExpr extends ExprOf<"atomic", ScalarName> {
  readonly op: AtomicOp;
  readonly array: Expr;
  readonly index: readonly Expr[];
  readonly value: Expr;
  readonly compare?: Expr;
}

/**
 * Calls of built-in operations that targets implement directly; see
 * INTRINSICS in intrinsics.ts for the list, argument types and result types.
 */
export interface IntrinsicExpr extends ExprOf<"intrinsic", Type> {
  readonly name: IntrinsicName;
  readonly args: readonly Expr[];
}

/** A call of a device function (user or math library). Removed by the inliner before targets run. */
export interface CallExpr extends ExprOf<"call", Type> {
  readonly fn: FunctionIR;
  readonly args: readonly Expr[];
}

/**
 * A device function compiled elsewhere (`cuda.declareDevice`), known by its symbol and signature: on the
 * GPU a call of the symbol, resolved when the kernel is linked with the code that defines it; on the
 * simulator its JavaScript stand-in. Its parameters are scalars, or arrays passed as the address of their
 * first element (a C pointer); its result a scalar or void.
 */
export interface ExternalFunction {
  readonly name: string;
  readonly params: readonly Type[];
  readonly returnType: Type;
}

/** A call of an external function; each argument has exactly its parameter's type. Opaque to every pass. */
export interface ExternalCallExpr extends ExprOf<"external", Type> {
  readonly fn: ExternalFunction;
  readonly args: readonly Expr[];
}

export type Expr =
  | ConstExpr | VarExpr | UnaryExpr | BinaryExpr | FmaExpr | CompareExpr | LogicalExpr
  | SelectExpr | CastExpr | BitcastExpr | WordsExpr | LoadExpr | ArrayAttrExpr | SpecialExpr
  | TupleExpr | TupleGetExpr | AtomicExpr | IntrinsicExpr | CallExpr | ExternalCallExpr;

/**
 * Intrinsics: each one's arguments, result, effects and spelling are in INTRINSICS
 * (intrinsics.ts).
 */
export type IntrinsicName =
  | "syncthreads" | "syncthreadsCount" | "syncthreadsAnd" | "syncthreadsOr" | "syncwarp"
  | "threadfence" | "threadfenceBlock" | "threadfenceSystem" | "gridSync"
  | "shflSync" | "shflUpSync" | "shflDownSync" | "shflXorSync"
  | "allSync" | "anySync" | "eqSync" | "ballotSync" | "matchAnySync" | "matchAllSync"
  | "activemask" | "lanemaskLt" | "nanosleep"
  | "print" | "cstring" | "assert" | "throw" | "subarray" | "view"
  | "fastExp2" | "fastLog2" | "fastSin" | "fastCos" | "fastRcp" | "fastTanh" | "fastDiv";

// ---------------------------------------------------------------------------
// Statements

/** Declares a local; `init` absent means zero-initialised (the front end always gives one for scalars). */
export interface LetStmt extends StmtOf<"let"> {
  readonly name: string;
  readonly type: Type;
  readonly init?: Expr;
}

/** Assigns a declared local; `value` has exactly the local's type. */
export interface AssignStmt extends StmtOf<"assign"> {
  readonly name: string;
  readonly value: Expr;
}

/** `array[index] = value`; `value` already has the element dtype. */
export interface StoreStmt extends StmtOf<"store"> {
  readonly array: Expr;
  readonly index: readonly Expr[];
  readonly value: Expr;
}

/** An expression evaluated for its effect (intrinsics, atomics). */
export interface ExprStmt extends StmtOf<"expr"> {
  readonly expr: Expr;
}

export interface IfStmt extends StmtOf<"if"> {
  readonly cond: Expr;
  readonly then: readonly Stmt[];
  readonly else: readonly Stmt[];
}

/**
 * A loop: `for (;cond; update) body`, `while (cond) body` or, with
 * `testFirst: false`, `do body while (cond)`. `cond` null = forever.
 * `continue` runs `update` then re-tests `cond`. Loop initialisers are
 * emitted as statements before the loop.
 */
export interface LoopStmt extends StmtOf<"loop"> {
  readonly label: string;
  readonly cond: Expr | null;
  readonly testFirst: boolean;
  readonly body: readonly Stmt[];
  readonly update: readonly Stmt[];
}

/** A block that `break label` can leave (made by the inliner for `return`s). */
export interface BlockStmt extends StmtOf<"block"> {
  readonly label: string;
  readonly body: readonly Stmt[];
}

/** `break label` / `continue label` (every loop and breakable block has a label). */
interface JumpStmt<K extends "break" | "continue"> extends StmtOf<K> {
  readonly label: string;
}
export type BreakStmt = JumpStmt<"break">;
export type ContinueStmt = JumpStmt<"continue">;

/** In kernels `value` is absent; in device functions it has the return type. */
export interface ReturnStmt extends StmtOf<"return"> {
  readonly value?: Expr;
}

/**
 * A shared or local array (`cuda.shared.array`, `cuda.local.array`):
 * the local `name` of type `type` (space 'shared' or 'local', layout C) with a
 * constant `shape`. For shared arrays, shape [0] means the launch's dynamic
 * shared memory (all such arrays alias offset 0, as in Numba).
 */
export interface AllocStmt extends StmtOf<"alloc"> {
  readonly name: string;
  readonly type: ArrayType;
  readonly shape: readonly number[];
}

export type Stmt =
  | LetStmt | AssignStmt | StoreStmt | ExprStmt | IfStmt | LoopStmt | BlockStmt
  | BreakStmt | ContinueStmt | ReturnStmt | AllocStmt;

// ---------------------------------------------------------------------------
// Functions

export interface Param {
  readonly name: string;
  readonly type: Type;
}

/**
 * A constant-memory array frozen from a host array (`options.env` or
 * `cuda.const.arrayLike`): the local `name` of type `type` (space 'const').
 */
export interface ConstArray {
  readonly name: string;
  readonly type: ArrayType;
  readonly shape: readonly number[];
  readonly data: ArrayBufferView;
}

/**
 * A device array from `options.env`, captured by reference: the kernel takes it as the hidden
 * parameter `name` (after its own parameters), which every launch binds to `array`.
 */
export interface EnvArray {
  readonly name: string;
  /** the name `env` gives it, for errors */
  readonly envName: string;
  readonly type: ArrayType;
  /** the captured DeviceArray */
  readonly array: object;
}

/** What a kernel uses that launches and targets care about, derived from its IR by `featuresOf` (intrinsics.ts). */
export interface Features {
  /** syncthreads* or gridSync: the simulator runs threads as generators */
  barriers: boolean;
  /** warp intrinsics or syncwarp: lanes of a warp must rendezvous */
  warp: boolean;
  /** cuda.cg.thisGrid().sync(): cooperative launch */
  gridSync: boolean;
  /** uses dynamic shared memory (`shared.array(0, …)`) */
  dynamicShared: boolean;
  /** console.log */
  print: boolean;
}

export interface FunctionIR {
  readonly name: string;
  readonly kind: "kernel" | "device";
  readonly params: readonly Param[];
  readonly returnType: Type;
  body: Stmt[];
  readonly constArrays: readonly ConstArray[];
  /** device arrays from `env` the function (or a device function it calls) uses; a kernel's are its last parameters */
  readonly envArrays?: readonly EnvArray[];
  /** strings of console.log and console.assert, referenced by index from `print`, `cstring` and `assert` (an intrinsic's `stringArg` in intrinsics.ts) */
  readonly strings: readonly string[];
  readonly features: Features;
  /** the function's source text, for errors and line info */
  readonly source: string;
  /** the function the text is from, which places it in the user's file (positions of `loc`s without their own `source`) */
  readonly origin?: Function;
  /** names of array params the function may write (stores or atomics), for copy-back */
  readonly writtenParams: ReadonlySet<string>;
  readonly options: CompileOptions;
  /** a kernel's device code compiled elsewhere (`cuda.jit`'s `link`), which defines the external functions it calls */
  readonly link?: readonly LinkSource[];
}

/**
 * Device code compiled elsewhere that a kernel is linked with: PTX, a cubin, a fatbin, a relocatable
 * object, a library of them, LTO-IR, or CUDA C++ source (compiled first); `name` names it in logs and errors.
 */
export interface LinkSource {
  readonly kind: "ptx" | "cubin" | "fatbin" | "object" | "library" | "ltoir" | "cuda-c++";
  readonly name: string;
  readonly data: string | Uint8Array;
}

export interface CompileOptions {
  readonly fastmath: boolean;
  readonly fma: boolean;
  readonly debug: boolean;
  readonly lineinfo: boolean;
  readonly maxRegisters?: number;
  /** the threads in a warp of the device compiled for: `cuda.warpsize` in kernels */
  readonly warpSize: number;
}

export const DEFAULT_COMPILE_OPTIONS: CompileOptions = {
  fastmath: false,
  fma: true,
  debug: false,
  lineinfo: false,
  warpSize: 32,
};

// ---------------------------------------------------------------------------
// Small helpers shared by the front end, passes and targets

export const constExpr = (type: ScalarName, value: number | bigint | boolean): ConstExpr => ({ k: "const", type, value });
export const int32Const = (value: number): ConstExpr => constExpr("int32", value | 0);

/** Children of an expression, in evaluation order. */
export function exprChildren(e: Expr): readonly Expr[] {
  switch (e.k) {
    case "const": case "var": case "special": return [];
    case "unary": case "cast": case "bitcast": return [e.x];
    case "binary": case "compare": case "logical": return [e.a, e.b];
    case "fma": return [e.a, e.b, e.c];
    case "select": return [e.cond, e.a, e.b];
    case "words": case "intrinsic": case "call": case "external": return e.args;
    case "load": return [e.array, ...e.index];
    case "arrayAttr": return [e.array];
    case "tuple": return e.items;
    case "tupleGet": return [e.tuple];
    case "atomic": return e.compare ? [e.array, ...e.index, e.compare, e.value] : [e.array, ...e.index, e.value];
  }
}

/** Calls `visit` on every statement, depth first, including nested bodies. */
export function walkStmts(body: readonly Stmt[], visit: (s: Stmt) => void): void {
  for (const s of body) {
    visit(s);
    switch (s.k) {
      case "if": walkStmts(s.then, visit); walkStmts(s.else, visit); break;
      case "loop": walkStmts(s.body, visit); walkStmts(s.update, visit); break;
      case "block": walkStmts(s.body, visit); break;
    }
  }
}

/** Expressions directly held by a statement (not nested statements' ones). */
export function stmtExprs(s: Stmt): readonly Expr[] {
  switch (s.k) {
    case "let": return s.init ? [s.init] : [];
    case "assign": return [s.value];
    case "store": return [s.array, ...s.index, s.value];
    case "expr": return [s.expr];
    case "if": return [s.cond];
    case "loop": return s.cond ? [s.cond] : [];
    case "return": return s.value ? [s.value] : [];
    default: return [];
  }
}

export type { ArrayType, ScalarName, TupleType, Type };
