// The vocabulary of lowering, shared by the lowerer's modules and the built-ins: what a source
// expression lowers to (`Value`), a built-in's shape (`Builtin`), and `LoweringContext`, the narrow
// view of one function's lowering that built-ins, console, complex numbers, records and fp16 take.
// They depend on this interface, never on the lowerer itself, so imports run one way:
// context ← built-ins ← expressions ← statements ← lowerer ← session.

import type { ArrayType, ComplexName, ScalarName, Type } from "../dtypes.js";
import type { RecordDType } from "../records.js";
import { weakDefault, type Weak } from "./infer.js";
import type { CompileOptions, Expr, ExternalFunction, Features, FunctionIR, Stmt, VarExpr } from "./ir.js";
import type { Node, ParsedFunction } from "./parse.js";
import type { MemberExpression } from "acorn";

/** A device function as kernels see it: `cuda.jit(fn, {device: true})`, a library routine, or a function from env. */
export interface DeviceFunctionLike {
  readonly fn: Function;
  readonly name: string;
  readonly env?: Readonly<Record<string, unknown>>;
  /** the file whose registered device functions its free names see (default: where `fn` was jitted) */
  readonly module?: string;
  /** a function compiled elsewhere (cuda.declareDevice): called by its symbol, never lowered from `fn` */
  readonly external?: ExternalFunction;
}

/** A free name among the registered device functions: the one it means, or where each of its candidates was made. */
export type DeviceLookup =
  | { readonly kind: "found"; readonly fn: DeviceFunctionLike }
  | { readonly kind: "ambiguous"; readonly places: readonly string[] };

/** Resolves free names to device functions registered with `cuda.jit(fn, { device: true })`. */
export interface DeviceResolver {
  (name: string, module: string | undefined): DeviceLookup | undefined;
  /** for an unknown name's error: the registered names, and where nameless device functions that `name` may mean were made */
  readonly hint?: (name: string, module: string | undefined) => { readonly names: readonly string[]; readonly nameless: readonly string[] };
  /** the device function made from `fn` by cuda.jit(fn, { device: true }), if one was */
  readonly madeFrom?: (fn: Function) => DeviceFunctionLike | undefined;
}

/**
 * Lowered expression value plus its literal weakness; `literal`: a number literal (from the source, a
 * named literal, env, a `Math`/`Number` constant, or an operation on literals alone), whose constant holds
 * the number JavaScript has, so operations on literals alone compute exactly (docs/language.md).
 */
export interface Typed { readonly e: Expr; readonly weak?: Weak; readonly literal?: boolean }

/** A namespace member: a value, or one computed from the member expression (`n`). */
export type Member = Value | ((L: LoweringContext, n: Node) => Value);

/** What a source expression stands for: a runtime value, or something only the compiler handles. */
export type Value =
  | { readonly v: "expr"; readonly e: Expr; readonly weak?: Weak; readonly literal?: boolean }
  | { readonly v: "ns"; readonly name: string; readonly members: Readonly<Record<string, Member>>; readonly call?: Builtin["call"] }
  | Builtin
  | { readonly v: "dtype"; readonly dtype: ScalarName }
  | { readonly v: "device"; readonly fn: DeviceFunctionLike }
  | { readonly v: "string"; readonly text: string }
  | { readonly v: "gridGroup" }
  | { readonly v: "arrayDims"; readonly array: Expr; readonly ndim: number; readonly attr: "shape" | "stride" };

/** A `Value` that is a runtime value (or a constant). */
export type ExprValue = Extract<Value, { v: "expr" }>;

export interface Builtin {
  readonly v: "builtin";
  readonly name: string;
  call(L: LoweringContext, args: readonly Node[], n: Node): Value;
  /** for `const s = cuda.shared.array(…)`: declares the array named `name` */
  alloc?(L: LoweringContext, args: readonly Node[], n: Node, name: string): Value;
}

/** A host array as constant memory takes it: C-order data, its dtype and shape. */
export interface FrozenHostArray { readonly data: ArrayBufferView; readonly dtype: ScalarName; readonly shape: number[] }

/** What lowering needs of the compile it is part of (`CompileSession`). */
export interface LoweringSession {
  readonly options: CompileOptions;
  /** device functions visible by name (after locals and env, before built-ins: docs/language.md) */
  readonly resolveDevice: DeviceResolver;
  /** A number unique in the process (names of constant arrays, which cached functions share). */
  uniqueId(): number;
  /** Lowers a device function for the given argument types, once per signature; `callLoc` reports recursion. */
  specialise(dev: DeviceFunctionLike, argTypes: readonly Type[], callLoc: () => never): FunctionIR;
}

/** One function's lowering as the built-ins see it. */
export interface LoweringContext {
  readonly options: CompileOptions;
  readonly parsed: ParsedFunction;
  readonly kind: "kernel" | "device";
  /** console.log/assert strings, referenced by index from the IR */
  readonly strings: string[];

  /** A typing problem at `node` (ends the statement; lowering goes on with the next). */
  fail(node: Node, message: string): never;
  /** A construct outside the kernel language at `node`. */
  unsupported(node: Node, message: string): never;

  freshName(base: string): string;
  emit(s: Stmt): void;
  /** A compiler-made local holding `init`, evaluated once here. */
  temporary(name: string, init: Expr, n: Node): VarExpr;

  lowerValue(n: Node): Value;
  /** An expression that must be a runtime value. */
  lowerExpr(n: Node): Typed;
  /** A bool for conditions (JS truthiness for numbers). */
  condition(n: Node): Expr;
  /** `v` converted to type `t` (weak literals fold to `t` directly). */
  convert(v: Typed, t: Type, n: Node): Expr;
  /** A compile-time integer (literal, env constant, simple arithmetic on them, a rounded float constant). */
  constInt(n: Node, what: string): number;
  /** An array index: int32 or int64. */
  indexExpr(n: Node): Expr;
  /** `a / b` with both integers as truncating ('div') or flooring integer division, or undefined if not integers. */
  lowerIntDivision(divNode: Node, op: "div" | "floordiv"): Typed | undefined;
  /** `x.prop` of an array (length, size, ndim, shape, strides, subarray, view). */
  arrayProperty(array: Expr, t: ArrayType, prop: string, n: MemberExpression): Value;

  /** Calls a math-library function by its JS Math name on float operands. */
  callMath(name: string, args: Typed[], n: Node): Typed;
  /** A call of a device function specialised to its arguments' types. */
  callDeviceWith(dev: DeviceFunctionLike, args: readonly Expr[], n: Node): Expr;

  /** Notes that `array` (an array expression) may be written, for copy-back. */
  markWritten(array: Expr): void;
  /** The record dtype an `env` name stands for (`cuda.local.array(4, Particle)`), if it is one. */
  recordDTypeNamed(n: Node): RecordDType | undefined;
  /** Declares a shared or local array. */
  allocate(space: "shared" | "local", dtype: ScalarName, shape: number[], name: string, n: Node, complex?: ComplexName): Value;
  /** Registers (once per `key`) a constant-memory copy of a host array (of complex: its last axis holds the parts). */
  constArray(name: string, key: unknown, host: FrozenHostArray, complex?: ComplexName): Expr;
}

export function expr(e: Expr, weak?: Weak): ExprValue {
  return { v: "expr", e, weak };
}

/** The type a value has on its own: a weak literal's default, else its type. */
export const valueType = (v: Typed): Type => (v.weak ? weakDefault(v.weak) : v.e.type);
