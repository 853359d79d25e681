// A reference evaluator for generated kernels, independent of the compiler:
// it walks the kernel's own AST (acorn) once per thread, with the documented
// semantics of docs/language.md and docs/decisions.md written out directly:
// BigInt for 64-bit integers, Math.fround for float32, float16 and bfloat16
// rounding on conversion (test/helpers/half.ts), weak literals and
// operations on literals alone computed as JavaScript computes them, C's
// promotion, the join of a `let`'s values, and the launch's choice among
// several eager signatures.
//
// Threads of a block run in lockstep one top-level statement at a time, so
// shared memory between barriers, warp operations and block votes (which the
// generator puts only at the top level) see every thread at the same point.
//
// Not modelled (the runner then compares the simulator with PTX only):
// contraction of a*b+c into fma (`fma: true` kernels' float results) and the
// math library's transcendental functions (a kernel reaching one throws
// NotModelled).

import * as acorn from "acorn";
import type { ScalarName } from "../../src/dtypes.js";
import { bfloat16Value, doubleToHalf, halfValue, toBfloat16 } from "../helpers/half.js";
import type { FuzzKernel, HostScalar, HostTuple, TupleSpec } from "./generate.js";

type Weak = "int" | "float";
/**
 * A value: its type and value; `weak`: it yields to the other operand's type; `lit`: a literal (its
 * value is the JavaScript number it stands for); `c`: a condition known at compile time (a comparison
 * of literals).
 */
export interface Val { readonly t: ScalarName; readonly v: number | bigint; readonly weak?: Weak; readonly lit?: true; readonly c?: true }
/** A tuple: its items, each a value or a tuple. */
export interface Tup { readonly items: readonly Item[] }
type Item = Val | Tup;
// acorn's ESTree nodes, read by their documented fields
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Node = any;

/** The kernel reached something the reference does not model (the math library's pow): compare the targets only. */
export class NotModelled extends Error {}

const BITS: Record<ScalarName, number> = { bool: 1, int8: 8, uint8: 8, int16: 16, uint16: 16, int32: 32, uint32: 32, int64: 64, uint64: 64, float16: 16, bfloat16: 16, float32: 32, float64: 64 };
const RANK: Record<ScalarName, number> = { bool: 0, int8: 1, uint8: 1, int16: 2, uint16: 2, float16: 2, bfloat16: 2, int32: 3, uint32: 3, float32: 3, int64: 4, uint64: 4, float64: 4 };
const isHalf = (t: ScalarName) => t === "float16" || t === "bfloat16";
const isFloat = (t: ScalarName) => isHalf(t) || t === "float32" || t === "float64";
const isSigned = (t: ScalarName) => t.startsWith("int");
const is64 = (t: ScalarName) => t === "int64" || t === "uint64";
const isTuple = (x: Item): x is Tup => "items" in x;
const plain = (a: Val): Val => ({ t: a.t, v: a.v });

// ------------------------------------------------------------------ types (docs/language.md "Literals and promotion")

function promoteOne(t: ScalarName): ScalarName {
  if (isHalf(t)) return "float32";
  if (!isFloat(t) && BITS[t] < 32) return "int32";
  return t;
}

function promote(a: ScalarName, b: ScalarName): ScalarName {
  const x = promoteOne(a), y = promoteOne(b);
  if (x === y) return x;
  if (isFloat(x) || isFloat(y)) return x === "float64" || y === "float64" ? "float64" : "float32";
  if (isSigned(x) === isSigned(y)) return RANK[x] >= RANK[y] ? x : y;
  const [s, u] = isSigned(x) ? [x, y] : [y, x];
  return RANK[u] >= RANK[s] ? u : s;
}

/** The type of `a op b`: a weak operand takes the other's type (a float literal next to an integer: float64); two weak ones promote. */
function common(a: Val, b: Val): ScalarName {
  const adapt = (w: Weak, o: ScalarName) => (w === "int" ? promoteOne(o) : isFloat(promoteOne(o)) ? promoteOne(o) : "float64");
  if (a.weak && !b.weak) return promote(adapt(a.weak, b.t), b.t);
  if (b.weak && !a.weak) return promote(a.t, adapt(b.weak, a.t));
  return promote(a.t, b.t);
}

/** The weakness of a result of two operands: weak only when both are, a float if either is. */
const bothWeak = (a: Val, b: Val): Weak | undefined => (a.weak && b.weak ? (a.weak === "float" || b.weak === "float" ? "float" : "int") : undefined);

/**
 * A literal of value `v`, typed by its value: integral → int32 (weak), else uint32, else int64 (not
 * weak); fractional, -0, NaN, ±Infinity and integers beyond int64 (or any value, with `float`) → a
 * weak float64.
 */
function literal(v: number, float = false): Val {
  if (!float && Number.isInteger(v) && !Object.is(v, -0) && v >= -(2 ** 63) && v < 2 ** 63) {
    if (v >= -(2 ** 31) && v < 2 ** 31) return { t: "int32", v, weak: "int", lit: true };
    return v >= 0 && v < 2 ** 32 ? { t: "uint32", v, lit: true } : { t: "int64", v: BigInt(v), lit: true };
  }
  return { t: "float64", v, weak: "float", lit: true };
}

/** The type a value has on its own (in a `let`, as a device function's argument): a weak one's default. */
const ownType = (a: Val): ScalarName => (a.weak === "int" ? "int32" : a.weak === "float" ? "float64" : a.t);
const settled = (a: Val): Val => convert(plain(a), ownType(a));

/** The type of a `let` holding values of types a and b (docs/language.md, "Locals"). */
function join(a: ScalarName, b: ScalarName): ScalarName {
  if (a === b) return a;
  if (isFloat(a) && isFloat(b)) return BITS[a] === BITS[b] ? "float32" : BITS[a] > BITS[b] ? a : b;
  if (isFloat(a) || isFloat(b)) return "float64";
  if (a === "bool" || b === "bool") return a === "bool" ? b : a;
  if (isSigned(a) === isSigned(b)) return BITS[a] >= BITS[b] ? a : b;
  const [s, u] = isSigned(a) ? [a, b] : [b, a];
  const bits = Math.max(BITS[s], 2 * BITS[u]);
  return bits <= 64 ? (`int${bits}` as ScalarName) : "float64";
}

// ------------------------------------------------------------------ conversions

/** float -> integer: truncate toward zero, saturate, NaN -> 0 (docs/decisions.md). */
function floatToInt(x: number, t: ScalarName): number | bigint {
  if (Number.isNaN(x)) return is64(t) ? 0n : 0;
  const bits = BITS[t];
  const signed = isSigned(t);
  const lo = signed ? -(2 ** (bits - 1)) : 0, hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
  if (is64(t)) {
    if (x <= lo) return BigInt(lo);
    if (x >= 2 ** (bits - (signed ? 1 : 0))) return signed ? 2n ** 63n - 1n : 2n ** 64n - 1n;
    return BigInt(Math.trunc(x));
  }
  return Math.min(hi, Math.max(lo, Math.trunc(x))) + 0;
}

function wrapInt(x: bigint, t: ScalarName): number | bigint {
  const w = isSigned(t) ? BigInt.asIntN(BITS[t], x) : BigInt.asUintN(BITS[t], x);
  return is64(t) ? w : Number(w);
}

/** A bigint rounded once to float32 (Number(x) then fround would round twice). */
function bigToFloat32(x: bigint): number {
  return Math.fround(roundScaled(x, 0, 24, -149));
}

function toNumber(a: Val): number {
  return typeof a.v === "bigint" ? Number(a.v) : a.v;
}

/** `a` converted to `t`, as a plain value (no longer weak, a literal or a constant). */
export function convert(a: Val, t: ScalarName): Val {
  const { v } = a;
  if (a.t === t && !a.weak) return plain(a);
  if (t === "bool") return { t, v: (typeof v === "bigint" ? v !== 0n : v !== 0) ? 1 : 0 };
  if (isFloat(t)) {
    if (t === "float64") return { t, v: toNumber(a) };
    if (t === "float32") return { t, v: typeof v === "bigint" ? bigToFloat32(v) : Math.fround(v) };
    // to a half type: one rounding from the exact value (a bigint past 2^53 overflows float16 anyway)
    if (t === "bfloat16") return { t, v: bfloat16Value(toBfloat16(v)) };
    return { t, v: halfValue(doubleToHalf(Number(v))) };
  }
  if (isFloat(a.t) || (a.weak === "float")) return { t, v: floatToInt(v as number, t) };
  return { t, v: wrapInt(BigInt(v), t) };
}

// ------------------------------------------------------------------ operators

const roundTo = (t: ScalarName, x: number) => (t === "float32" ? Math.fround(x) : x);

const JS_ARITHMETIC: Record<string, (x: number, y: number) => number> = {
  "+": (x, y) => x + y, "-": (x, y) => x - y, "*": (x, y) => x * y, "/": (x, y) => x / y, "%": (x, y) => x % y, "**": (x, y) => x ** y,
};
const JS_COMPARE: Record<string, (x: number, y: number) => boolean> = {
  "<": (x, y) => x < y, "<=": (x, y) => x <= y, ">": (x, y) => x > y, ">=": (x, y) => x >= y,
  "===": (x, y) => x === y, "==": (x, y) => x === y, "!==": (x, y) => x !== y, "!=": (x, y) => x !== y,
};
/** Math functions computed on literals alone, exactly (docs/language.md, "Literals and promotion"). */
const JS_MATH: Record<string, (...xs: number[]) => number> = {
  abs: Math.abs, sign: Math.sign, floor: Math.floor, ceil: Math.ceil, trunc: Math.trunc, round: Math.round, sqrt: Math.sqrt,
  min: Math.min, max: Math.max, pow: (x, y) => x ** y!,
};

/**
 * An operation on literals alone, as JavaScript computes it: a literal typed by its value, a float
 * one when an operand was a float literal or the operation is `/` or `sqrt`.
 */
function fold(name: string, xs: readonly Val[], f: (...v: number[]) => number): Val {
  return literal(f(...xs.map(toNumber)), name === "/" || name === "sqrt" || xs.some((x) => x.weak === "float"));
}

/** An integer operator's result from literals alone is a literal again, typed by its value (an int64 a number cannot hold stays as it is). */
const literalAgain = (r: Val, fromLiterals: boolean | undefined): Val =>
  fromLiterals && r.t !== "bool" && (typeof r.v !== "bigint" || BigInt(Number(r.v)) === r.v) ? literal(toNumber(r)) : r;

function arith(op: string, a: Val, b: Val): Val {
  const lits = a.lit && b.lit;
  if (lits && JS_COMPARE[op]) return { t: "bool", v: JS_COMPARE[op]!(toNumber(a), toNumber(b)) ? 1 : 0, c: true };
  if (lits && JS_ARITHMETIC[op]) return fold(op, [a, b], JS_ARITHMETIC[op]!);
  const weak = bothWeak(a, b);
  switch (op) {
    case "<": case "<=": case ">": case ">=": case "===": case "==": case "!==": case "!=": {
      const t = common(a, b);
      const x = convert(a, t).v, y = convert(b, t).v;
      const r = op === "<" ? x < y : op === "<=" ? x <= y : op === ">" ? x > y : op === ">=" ? x >= y : op[0] === "=" ? x === y : x !== y;
      return { t: "bool", v: r ? 1 : 0 };
    }
    case "&": case "|": case "^": {
      if (a.t === "bool" && b.t === "bool" && !a.weak && !b.weak) return { t: "bool", v: bitop(op, BigInt(a.v), BigInt(b.v)) === 0n ? 0 : 1 };
      const x = int32IfFloat(a), y = int32IfFloat(b);
      const t = common(x, y);
      return literalAgain({ t, v: wrapInt(bitop(op, BigInt(convert(x, t).v), BigInt(convert(y, t).v)), t), weak: weak && "int" }, lits);
    }
    case "<<": case ">>": case ">>>": {
      const x = int32IfFloat(a);
      let t = promoteOne(x.t);
      if (op === ">>>") t = BITS[t] === 64 ? "uint64" : "uint32";
      else if (op === ">>" && t === "uint32" && x.weak) t = "int32";
      const n = BigInt(Number(convert(b, "int32").v) & (BITS[t] - 1));
      const xv = BigInt(convert(x, t).v);
      return literalAgain({ t, v: wrapInt(op === "<<" ? xv << n : xv >> n, t), weak: op === ">>>" ? undefined : weak && "int" }, lits);
    }
    case "/": {
      let t = common(a, b);
      if (!isFloat(t) && !is64(t)) t = "float64";
      if (is64(t)) return { ...intDiv(convert(a, t), convert(b, t), t, false), weak: weak && "float" };
      return { t, v: roundTo(t, toNumber(convert(a, t)) / toNumber(convert(b, t))), weak: weak && "float" };
    }
    case "%": {
      const t = common(a, b);
      const x = convert(a, t).v, y = convert(b, t).v;
      if (isFloat(t)) return { t, v: roundTo(t, (x as number) % (y as number)), weak };
      const X = BigInt(x), Y = BigInt(y);
      return { t, v: wrapInt(Y === 0n ? 0n : X % Y, t), weak };
    }
    case "+": case "-": case "*": {
      const t = common(a, b);
      const x = convert(a, t).v, y = convert(b, t).v;
      if (isFloat(t)) {
        const X = x as number, Y = y as number;
        return { t, v: roundTo(t, op === "+" ? X + Y : op === "-" ? X - Y : X * Y), weak };
      }
      const X = BigInt(x), Y = BigInt(y);
      return { t, v: wrapInt(op === "+" ? X + Y : op === "-" ? X - Y : X * Y, t), weak };
    }
    case "**": {
      // `x ** 2` is x * x in x's float type (float64 for integers); any other power calls the math library
      if (!(b.lit && toNumber(b) === 2)) throw new NotModelled("a power other than ** 2");
      const t = isFloat(a.t) && !a.weak ? promoteOne(a.t) : "float64";
      const x = toNumber(convert(a, t));
      return { t, v: roundTo(t, x * x) };
    }
  }
  throw new Error(`reference: operator ${op}`);
}

function bitop(op: string, x: bigint, y: bigint): bigint {
  return op === "&" ? x & y : op === "|" ? x | y : x ^ y;
}

function int32IfFloat(a: Val): Val {
  if (!isFloat(a.t)) return a;
  const c = convert(plain(a), "int32");
  return a.weak ? { ...c, weak: "int" } : c;
}

/** Integer division (truncating, or flooring): by zero 0, INT_MIN / -1 wraps. */
function intDiv(a: Val, b: Val, t: ScalarName, floor: boolean): Val {
  const x = BigInt(a.v), y = BigInt(b.v);
  if (y === 0n) return { t, v: wrapInt(0n, t) };
  let q = x / y;
  if (floor && (x % y !== 0n) && ((x < 0n) !== (y < 0n))) q -= 1n;
  return { t, v: wrapInt(q, t) };
}

/** Non-zero is true, NaN included (C's and Python's rule, not JavaScript's). */
const truthy = (a: Val) => (typeof a.v === "bigint" ? a.v !== 0n : a.v !== 0);

// ------------------------------------------------------------------ the launch (docs/language.md, "Arguments and their types")

/** Bits of a scalar parameter, for "the narrowest" signature. */
const STORAGE_BITS: Record<ScalarName, number> = { ...BITS, bool: 8 };
type Kind = "bool" | "int" | "uint" | "float";
const kindOf = (t: ScalarName): Kind => (t === "bool" ? "bool" : isFloat(t) ? "float" : isSigned(t) ? "int" : "uint");
/** Significant bits of a float type: an integer type of at most as many bits converts to it exactly. */
const SIGNIFICAND: Partial<Record<ScalarName, number>> = { float16: 11, bfloat16: 8, float32: 24, float64: 53 };

/** Whether every value of `from` converts to `to` losslessly, as NumPy's safe casting says (int64 → float64 included). */
function safeCast(from: ScalarName, to: ScalarName): boolean {
  const a = kindOf(from), b = kindOf(to);
  if (from === to || a === "bool") return true;
  if (b === "bool" || (a === "float" && b !== "float")) return false;
  if (b === "float") return a === "float" ? BITS[to] > BITS[from] : BITS[from] <= SIGNIFICAND[to]! || to === "float64";
  if (a === b) return BITS[to] >= BITS[from];
  return a === "uint" && BITS[to] > BITS[from];
}

/** The kernel type of a host scalar: a typed scalar its dtype, an integral number in int32's range int32, another number (-0 too) float64. */
export function hostScalarType(a: HostScalar): ScalarName {
  switch (a.kind) {
    case "typed": return a.dtype;
    case "bigint": return "int64";
    case "bool": return "bool";
    case "number": return Number.isInteger(a.v) && a.v >= -(2 ** 31) && a.v < 2 ** 31 && !Object.is(a.v, -0) ? "int32" : "float64";
  }
}

/** The value a host scalar stands for, in its own type (a typed scalar holds its dtype's value). */
function hostValue(a: HostScalar): Val {
  switch (a.kind) {
    case "bigint": return { t: "int64", v: a.v };
    case "bool": return { t: "bool", v: a.v ? 1 : 0 };
    case "number": return hostScalarType(a) === "int32" ? { t: "int32", v: a.v + 0 } : { t: "float64", v: a.v };
    case "typed": return isFloat(a.dtype) ? convert({ t: "float64", v: a.v }, a.dtype) : { t: a.dtype, v: is64(a.dtype) ? BigInt(a.v) : a.v };
  }
}

/** Whether an integer parameter of type `t` holds the argument's value exactly (2.5 and 1e10 are no int32). */
function holds(a: HostScalar, t: ScalarName): boolean {
  if (isFloat(t) || a.kind === "bool") return true;
  const v = hostValue(a);
  const x = typeof v.v === "bigint" ? v.v : Number.isInteger(v.v) ? BigInt(v.v) : undefined;
  if (x === undefined) return false;
  const bits = BigInt(BITS[t]);
  return isSigned(t) ? x >= -(1n << (bits - 1n)) && x < 1n << (bits - 1n) : x >= 0n && x < 1n << bits;
}

/**
 * The eager signature a launch takes, by index (undefined: none holds the values, a LaunchError): of
 * those whose integer parameters hold their arguments, the fewest unsafe conversions, then safe ones,
 * then promotions, then the fewest bits, then the first listed. One signature is taken as it is (its
 * conversion then says whether the values fit).
 */
export function chooseOverload(args: readonly HostScalar[], overloads: readonly (readonly ScalarName[])[]): number | undefined {
  const candidates = overloads.map((o, j) => j).filter((j) => overloads[j]!.every((t, k) => holds(args[k]!, t)));
  const rating = (o: readonly ScalarName[]) => {
    const r = [0, 0, 0, 0];
    o.forEach((to, k) => {
      const from = hostScalarType(args[k]!);
      if (from !== to) r[!safeCast(from, to) ? 0 : kindOf(from) === kindOf(to) ? 2 : 1]!++;
      r[3]! += STORAGE_BITS[to];
    });
    return r;
  };
  const better = (x: number[], y: number[]) => { const k = x.findIndex((v, i) => v !== y[i]); return k >= 0 && x[k]! < y[k]!; };
  let best: number | undefined, bestRating: number[] | undefined;
  for (const j of candidates) {
    const r = rating(overloads[j]!);
    if (!bestRating || better(r, bestRating)) { best = j; bestRating = r; }
  }
  return best;
}

/** A host scalar as a parameter of type `t` receives it. */
export function launchValue(a: HostScalar, t: ScalarName): Val {
  return convert(hostValue(a), t);
}

/** A tuple argument as the kernel receives it: each item converted to the signature's item type. */
export function tupleValue(value: HostTuple, spec: TupleSpec): Tup {
  return { items: value.map((x, k) => (typeof x === "number" ? convert({ t: "float64", v: x }, spec[k] as ScalarName) : tupleValue(x, spec[k] as TupleSpec))) };
}

// ------------------------------------------------------------------ threads

interface Thread {
  readonly tid: number;
  readonly block: number;
  scopes: Map<string, Binding>[];
}
export interface ArrayBinding { kind: "array"; data: Val[]; dtype: ScalarName }
export type Binding =
  | { kind: "val"; val: Val }
  | ArrayBinding
  | { kind: "tuple"; val: Tup }
  | { kind: "records"; fields: ReadonlyMap<string, ArrayBinding> }
  | { kind: "record"; fields: ReadonlyMap<string, Val> };

class Break { constructor(readonly kind: "break" | "continue") {} }
class Return { constructor(readonly val: Val) {} }

/** Runs the kernel on its parameters (arrays, scalars, tuples, records, each as the kernel sees it), arrays in place. */
export class Reference {
  private readonly devices: Map<string, Node>;
  private readonly blockDim: number;
  /** per block: the shared array */
  private shared: Val[] = [];
  /** the values assigned with `=` to each name (names are unique in a generated kernel), for `let` joins */
  private readonly assigned = new Map<string, Node[]>();

  constructor(private readonly k: FuzzKernel, private readonly params: ReadonlyMap<string, Binding>) {
    this.blockDim = k.block;
    this.devices = new Map(k.devices.map((d) => [d.name, (acorn.parse(d.source, { ecmaVersion: "latest" }) as Node).body[0]]));
    for (const d of this.devices.values()) this.scanAssignments(d);
  }

  run(threads: number, source = this.k.source): void {
    const fn = (acorn.parse(`(${source})`, { ecmaVersion: "latest" }) as Node).body[0].expression;
    this.scanAssignments(fn);
    for (let b = 0; b < threads / this.blockDim; b++) {
      const ts: Thread[] = Array.from({ length: this.blockDim }, (_, tid) => ({ tid, block: b, scopes: [new Map()] }));
      this.shared = [];
      for (const st of fn.body.body) this.collective(st, ts);
    }
  }

  private scanAssignments(n: Node): void {
    if (!n || typeof n !== "object") return;
    if (Array.isArray(n)) { n.forEach((x) => this.scanAssignments(x)); return; }
    if (n.type === "AssignmentExpression" && n.operator === "=" && n.left.type === "Identifier") {
      this.assigned.set(n.left.name, [...(this.assigned.get(n.left.name) ?? []), n.right]);
    }
    for (const key of Object.keys(n)) if (key !== "type" && typeof n[key] === "object") this.scanAssignments(n[key]);
  }

  /** A top-level statement, run by every thread of the block before the next. */
  private collective(st: Node, ts: Thread[]): void {
    const call = st.type === "VariableDeclaration" ? unwrapCast(st.declarations[0].init) : st.type === "ExpressionStatement" ? st.expression : undefined;
    const name = call?.type === "CallExpression" ? memberName(call.callee) : "";
    if (/^cuda\.(shfl|ballot|all|any|eq|match|activemask|syncthreads)/.test(name)) {
      const argVals = ts.map((t) => call.arguments.map((a: Node) => this.expr(a, t)));
      const results = ts.map((t, j) => this.groupOp(name, argVals, j));
      if (st.type === "VariableDeclaration") ts.forEach((t, j) => this.declareGroupResult(st, t, results[j]!));
      return;
    }
    for (const t of ts) this.stmt(st, t);
  }

  /** A warp or block operation for thread j, given every thread's arguments. */
  private groupOp(name: string, args: Val[][], j: number): Val | undefined {
    const warp = j & ~31, lane = j & 31;
    const u32 = (v: number) => ({ t: "uint32" as ScalarName, v: v >>> 0 });
    const i32 = (v: number) => ({ t: "int32" as ScalarName, v });
    const inWarp = (f: (k: number) => boolean) => { let m = 0; for (let k = 0; k < 32; k++) if (f(warp + k)) m |= 1 << k; return m >>> 0; };
    switch (name) {
      case "cuda.syncthreads": return undefined;
      case "cuda.activemask": return u32(0xffffffff);
      case "cuda.shflSync": case "cuda.shflUpSync": case "cuda.shflDownSync": case "cuda.shflXorSync": {
        const d = Number(convert(args[j]![2]!, "int32").v) & 31;
        const src = name === "cuda.shflSync" ? d : name === "cuda.shflUpSync" ? lane - d : name === "cuda.shflDownSync" ? lane + d : lane ^ d;
        return args[src >= 0 && src < 32 ? warp + src : j]![1]!;
      }
      case "cuda.ballotSync": return u32(inWarp((k) => truthy(args[k]![1]!)));
      case "cuda.allSync": return { t: "bool", v: inWarp((k) => truthy(args[k]![1]!)) === 0xffffffff ? 1 : 0 };
      case "cuda.anySync": return { t: "bool", v: inWarp((k) => truthy(args[k]![1]!)) !== 0 ? 1 : 0 };
      // a vote: whether every lane's predicate is the same (Numba's eq_sync, PTX vote.uni)
      case "cuda.eqSync": return { t: "bool", v: [0, 0xffffffff].includes(inWarp((k) => truthy(args[k]![1]!))) ? 1 : 0 };
      case "cuda.matchAnySync": return u32(inWarp((k) => args[k]![1]!.v === args[j]![1]!.v));
      case "cuda.syncthreadsCount": return i32(args.filter((a) => truthy(a[0]!)).length);
      case "cuda.syncthreadsAnd": return i32(args.every((a) => truthy(a[0]!)) ? 1 : 0);
      case "cuda.syncthreadsOr": return i32(args.some((a) => truthy(a[0]!)) ? 1 : 0);
    }
    throw new Error(`reference: ${name}`);
  }

  private declareGroupResult(st: Node, t: Thread, groupResult: Val): void {
    const d = st.declarations[0];
    const init = d.init;
    // `let w = T(cuda.op(...))`: the cast around the group operation's result
    const v = init.type === "CallExpression" && init.callee.type === "Identifier" ? convert(groupResult, init.callee.name) : settled(groupResult);
    t.scopes.at(-1)!.set(d.id.name, { kind: "val", val: v });
  }

  // ---------------------------------------------------------------- statements

  private stmt(st: Node, t: Thread): void {
    switch (st.type) {
      case "VariableDeclaration":
        for (const d of st.declarations) this.declare(st.kind, d, t);
        return;
      case "ExpressionStatement": this.effect(st.expression, t); return;
      case "BlockStatement": this.scoped(t, () => { for (const s of st.body) this.stmt(s, t); }); return;
      case "IfStatement":
        if (truthy(this.expr(st.test, t))) this.stmt(st.consequent, t);
        else if (st.alternate) this.stmt(st.alternate, t);
        return;
      case "ForStatement":
        this.scoped(t, () => {
          this.stmt(st.init, t);
          for (; truthy(this.expr(st.test, t)); this.effect(st.update, t)) if (this.body(st.body, t)) break;
        });
        return;
      case "WhileStatement":
        while (truthy(this.expr(st.test, t))) if (this.body(st.body, t)) break;
        return;
      case "DoWhileStatement":
        do { if (this.body(st.body, t)) break; } while (truthy(this.expr(st.test, t)));
        return;
      case "BreakStatement": throw new Break("break");
      case "ContinueStatement": throw new Break("continue");
      case "ReturnStatement": throw new Return(this.expr(st.argument, t));
    }
    throw new Error(`reference: statement ${st.type}`);
  }

  private declare(kind: string, d: Node, t: Thread): void {
    const scope = t.scopes.at(-1)!;
    const init = d.init;
    if (d.id.type === "ArrayPattern") {
      // `const [a, b] = [x, y]`: each name bound as `const a = x` binds it
      const items = init.elements.map((e: Node) => this.item(e, t));
      d.id.elements.forEach((id: Node, k: number) => scope.set(id.name, this.constBinding(kind, items[k])));
      return;
    }
    const name = d.id.name;
    if (init.type === "CallExpression" && (memberName(init.callee) === "cuda.local.array" || memberName(init.callee) === "cuda.shared.array")) {
      const dtype = init.arguments[1].name as ScalarName;
      const data = memberName(init.callee) === "cuda.shared.array" ? this.shared : Array.from({ length: init.arguments[0].value }, () => ({ t: dtype, v: 0 }));
      scope.set(name, { kind: "array", dtype, data });
      return;
    }
    const records = this.recordsOf(init, t);
    if (records) { scope.set(name, { kind: "record", fields: new Map([...records.fields].map(([f, a]) => [f, a.data[records.index]!])) }); return; }
    const v = this.item(init, t);
    if (isTuple(v) || kind === "const") { scope.set(name, this.constBinding(kind, v)); return; }
    // a `let` has one type: the join of every value assigned to it, a literal counting as its own type
    let type = ownType(v);
    for (const rhs of this.assigned.get(name) ?? []) type = join(type, this.staticType(rhs, t));
    scope.set(name, { kind: "val", val: convert(v, type) });
  }

  /** A `const` bound to `v`: a literal (or a constant condition) stays one, a named literal; another weak value takes its own type. */
  private constBinding(kind: string, v: Item): Binding {
    if (isTuple(v)) return { kind: "tuple", val: v };
    if (kind === "const" && (v.lit || v.c)) return { kind: "val", val: v };
    return { kind: "val", val: settled(v) };
  }

  /** The type of a value assigned to a `let`: a cast's own, else the value's own (evaluated where the let is declared). */
  private staticType(rhs: Node, t: Thread): ScalarName {
    if (rhs.type === "CallExpression" && rhs.callee.type === "Identifier" && rhs.callee.name in BITS) return rhs.callee.name;
    return ownType(this.expr(rhs, t));
  }

  /** A loop body; true when it broke out. */
  private body(st: Node, t: Thread): boolean {
    const depth = t.scopes.length;
    try { this.stmt(st, t); } catch (e) {
      if (!(e instanceof Break)) throw e;
      t.scopes.length = depth;
      return e.kind === "break";
    }
    return false;
  }

  private scoped(t: Thread, f: () => void): void {
    t.scopes.push(new Map());
    try { f(); } finally { t.scopes.pop(); }
  }

  private lookup(t: Thread, name: string): Binding {
    for (let k = t.scopes.length - 1; k >= 0; k--) { const b = t.scopes[k]!.get(name); if (b) return b; }
    const p = this.params.get(name);
    if (p) return p;
    throw new Error(`reference: unknown name ${name}`);
  }

  private effect(e: Node, t: Thread): void {
    if (e.type === "UpdateExpression") { this.assign(e.argument, arith(e.operator[0], this.expr(e.argument, t), literal(1)), t); return; }
    if (e.type === "AssignmentExpression") {
      const v = this.expr(e.right, t);
      this.assign(e.left, e.operator === "=" ? v : arith(e.operator.slice(0, -1), this.expr(e.left, t), v), t);
      return;
    }
    if (e.type === "CallExpression" && memberName(e.callee).startsWith("cuda.atomic.")) { this.atomic(e, t); return; }
    throw new Error(`reference: effect ${e.type}`);
  }

  private assign(target: Node, v: Val, t: Thread): void {
    if (target.type === "Identifier") {
      for (let k = t.scopes.length - 1; k >= 0; k--) {
        const b = t.scopes[k]!.get(target.name);
        if (b && b.kind === "val") { b.val = convert(v, b.val.t); return; }
      }
      throw new Error(`reference: assignment to ${target.name}`);
    }
    if (!target.computed) {
      // rec[i].f = v
      const r = this.recordsOf(target.object, t);
      if (!r) throw new Error("reference: assignment to a field of no record array");
      const f = r.fields.get(target.property.name)!;
      f.data[r.index] = convert(v, f.dtype);
      return;
    }
    const { data, dtype, index } = this.element(target, t);
    data[index] = convert(v, dtype);
  }

  /** `rec[j]` of an array of records: its fields and j; undefined for anything else. */
  private recordsOf(n: Node, t: Thread): { fields: ReadonlyMap<string, ArrayBinding>; index: number } | undefined {
    if (n.type !== "MemberExpression" || !n.computed || n.object.type !== "Identifier") return undefined;
    const b = this.lookup(t, n.object.name);
    if (b.kind !== "records") return undefined;
    const index = Number(this.expr(n.property, t).v);
    const n0 = b.fields.values().next().value!.data.length;
    if (!(index >= 0 && index < n0)) throw new Error(`reference: ${n.object.name}[${index}] out of bounds`);
    return { fields: b.fields, index };
  }

  private element(m: Node, t: Thread): { data: Val[]; dtype: ScalarName; index: number } {
    const b = this.lookup(t, m.object.name);
    if (b.kind !== "array") throw new Error("reference: not an array");
    const index = Number(this.expr(m.property, t).v);
    if (!(index >= 0 && index < (b.data === this.shared ? this.blockDim : b.data.length))) throw new Error(`reference: ${m.object.name}[${index}] out of bounds`);
    return { data: b.data, dtype: b.dtype, index };
  }

  private atomic(e: Node, t: Thread): void {
    const op = memberName(e.callee).slice("cuda.atomic.".length);
    const idx = Number(this.expr(e.arguments[1], t).v);
    const arr = this.lookup(t, e.arguments[0].name) as ArrayBinding;
    const old = arr.data[idx]!;
    const v = convert(this.expr(e.arguments[2], t), arr.dtype);
    if (isFloat(arr.dtype)) { arr.data[idx] = { t: arr.dtype, v: floatAtomic(op, arr.dtype, old.v as number, v.v as number) }; return; }
    const x = BigInt(old.v), y = BigInt(v.v);
    const r = op === "add" ? x + y : op === "sub" ? x - y : op === "and" ? x & y : op === "or" ? x | y : op === "xor" ? x ^ y : op === "max" ? (x > y ? x : y) : x < y ? x : y;
    arr.data[idx] = { t: arr.dtype, v: wrapInt(r, arr.dtype) };
  }

  // ---------------------------------------------------------------- expressions

  /** A scalar expression. */
  expr(n: Node, t: Thread): Val {
    const v = this.item(n, t);
    if (isTuple(v)) throw new Error("reference: a tuple where a number is needed");
    return v;
  }

  /** An expression that may be a tuple. */
  private item(n: Node, t: Thread): Item {
    switch (n.type) {
      case "Literal":
        if (typeof n.value === "bigint") return { t: "int64", v: BigInt.asIntN(64, n.value) };
        if (typeof n.value === "boolean") return { t: "bool", v: n.value ? 1 : 0, c: true };
        return literal(n.value);
      case "Identifier": {
        if (n.name === "NaN" || n.name === "Infinity") return literal(n.name === "NaN" ? NaN : Infinity);
        const b = this.lookup(t, n.name);
        if (b.kind === "val" || b.kind === "tuple") return b.val;
        throw new Error(`reference: ${n.name} is an array`);
      }
      case "ArrayExpression": return { items: n.elements.map((e: Node) => { const x = this.item(e, t); return isTuple(x) ? x : settled(x); }) };
      case "MemberExpression": return this.member(n, t);
      case "UnaryExpression": return this.unary(n, t);
      case "BinaryExpression": {
        if (n.operator === "|" && n.right.type === "Literal" && n.right.value === 0) {
          const d = this.intDivision(n.left, t, false);
          if (d) return d;
        }
        return arith(n.operator, this.expr(n.left, t), this.expr(n.right, t));
      }
      case "LogicalExpression": {
        const a = truthy(this.expr(n.left, t));
        const r = n.operator === "&&" ? a && truthy(this.expr(n.right, t)) : a || truthy(this.expr(n.right, t));
        return { t: "bool", v: r ? 1 : 0 };
      }
      case "ConditionalExpression": {
        const c = this.expr(n.test, t);
        const a = this.expr(n.consequent, t), b = this.expr(n.alternate, t);
        // a constant condition between two literals is the literal it picks
        if (c.c && a.lit && b.lit) return truthy(c) ? a : b;
        // a choice between two bools or two values of one half type computes nothing: it keeps the type
        const ty = a.t === b.t && (a.t === "bool" || isHalf(a.t)) && !a.weak && !b.weak ? a.t : common(a, b);
        return { ...convert(truthy(c) ? a : b, ty), weak: bothWeak(a, b) };
      }
      case "CallExpression": return this.call(n, t);
    }
    throw new Error(`reference: expression ${n.type}`);
  }

  private member(n: Node, t: Thread): Item {
    if (!n.computed) {
      const name = memberName(n);
      const special: Record<string, number> = { "cuda.threadIdx.x": t.tid, "cuda.blockIdx.x": t.block, "cuda.laneid": t.tid & 31, "cuda.blockDim.x": this.blockDim };
      if (name in special) return { t: "int32", v: special[name]! };
      // Math's and Number's constants are literals (Number.MAX_SAFE_INTEGER an int64 one, by its value)
      if (name.startsWith("Math.")) return literal(Math[name.slice(5) as "PI"], true);
      if (name.startsWith("Number.")) return literal(Number[name.slice(7) as "EPSILON"]);
      const prop = n.property.name;
      // a tuple's length is a literal, as an array's ndim is
      if (prop === "length") {
        const tup = this.item(n.object, t);
        if (!isTuple(tup)) throw new Error("reference: length of no tuple");
        return literal(tup.items.length);
      }
      const records = this.recordsOf(n.object, t);
      if (records) return records.fields.get(prop)!.data[records.index]!;
      const b = this.lookup(t, n.object.name);
      if (b.kind !== "record") throw new Error(`reference: field ${prop} of no record`);
      return b.fields.get(prop)!;
    }
    if (n.object.type === "Identifier" && this.lookup(t, n.object.name).kind === "array") {
      const { data, index } = this.element(n, t);
      return data[index]!;
    }
    const tup = this.item(n.object, t);
    if (!isTuple(tup)) throw new Error("reference: indexing no tuple");
    return tup.items[Number(this.expr(n.property, t).v)]!;
  }

  private unary(n: Node, t: Thread): Val {
    if (n.operator === "-" && n.argument.type === "Literal" && typeof n.argument.value === "bigint") return { t: "int64", v: -n.argument.value };
    const a = this.expr(n.argument, t);
    // -x and +x of a literal: the literal of that value (-0 a float literal)
    if (a.lit && (n.operator === "-" || n.operator === "+")) return fold(n.operator, [a], (x) => (n.operator === "-" ? -x : x));
    switch (n.operator) {
      case "!": return { t: "bool", v: truthy(a) ? 0 : 1, ...(a.c && { c: true as const }) };
      case "+": return a.t === "bool" ? convert(a, "int32") : { ...a };
      case "-": {
        // a half value negates in its own type (the sign bit)
        const rt = a.weak || isHalf(a.t) ? a.t : promoteOne(a.t);
        const x = convert(plain(a), rt);
        return { t: rt, v: isFloat(rt) ? -(x.v as number) : wrapInt(-BigInt(x.v), rt), weak: a.weak };
      }
      case "~": {
        const rt = isFloat(a.t) ? "int32" : promoteOne(a.t);
        return literalAgain({ t: rt, v: wrapInt(~BigInt(convert(plain(a), rt).v), rt), weak: a.weak && "int" }, a.lit);
      }
    }
    throw new Error(`reference: unary ${n.operator}`);
  }

  /** `a / b` on two integers (neither a float literal) as integer division, else undefined. */
  private intDivision(n: Node, t: Thread, floor: boolean): Val | undefined {
    if (n.type !== "BinaryExpression" || n.operator !== "/") return undefined;
    const a = this.expr(n.left, t), b = this.expr(n.right, t);
    if (isFloat(a.t) || isFloat(b.t) || a.weak === "float" || b.weak === "float") return undefined;
    const ty = common(a, b);
    return literalAgain({ ...intDiv(convert(a, ty), convert(b, ty), ty, floor), weak: bothWeak(a, b) }, a.lit && b.lit);
  }

  private call(n: Node, t: Thread): Item {
    const callee = n.callee;
    const args = () => n.arguments.map((a: Node) => this.expr(a, t)) as Val[];
    if (callee.type === "Identifier") {
      if (callee.name in BITS) return convert(this.expr(n.arguments[0], t), callee.name as ScalarName);
      const d = this.devices.get(callee.name);
      if (!d) throw new Error(`reference: unknown function ${callee.name}`);
      return this.device(d, n.arguments.map((a: Node) => this.item(a, t)), t);
    }
    const name = memberName(callee);
    const f = name.slice(5);
    if (name.startsWith("Math.") && f in JS_MATH) {
      if (f === "floor" || f === "trunc") {
        const d = this.intDivision(n.arguments[0], t, f === "floor");
        if (d) return d;
      }
      const xs = args();
      if (xs.every((x) => x.lit)) return fold(f, xs, JS_MATH[f]!);
    }
    switch (name) {
      case "cuda.grid": return { t: "int32", v: t.block * this.blockDim + t.tid };
      case "Math.floor": case "Math.trunc": case "Math.ceil": case "Math.round": case "Math.abs": case "Math.sqrt": return roundingMath(name, args()[0]!);
      case "Math.min": case "Math.max": return args().reduce((a, b) => minmax(name === "Math.min", a, b));
      case "Math.pow": throw new NotModelled("Math.pow of values that are not all literals");
      case "Math.sign": {
        const a = args()[0]!;
        const ty = a.weak ? ownType(a) : promoteOne(a.t);
        const x = convert(plain(a), ty).v;
        if (isFloat(ty)) return { t: ty, v: Math.sign(x as number) };
        return { t: ty, v: wrapInt(BigInt(x) > 0n ? 1n : BigInt(x) < 0n ? -1n : 0n, ty) };
      }
      case "Math.fround": return convert(args()[0]!, "float32");
      case "Number.isNaN": case "Number.isFinite": {
        const a = args()[0]!;
        if (!isFloat(a.t) && a.weak !== "float") return { t: "bool", v: name === "Number.isNaN" ? 0 : 1 };
        return { t: "bool", v: (name === "Number.isNaN" ? Number.isNaN : Number.isFinite)(a.v as number) ? 1 : 0 };
      }
      case "BigInt.asIntN": return convert(args()[1]!, "int64");
      case "BigInt.asUintN": return convert(args()[1]!, "uint64");
      case "Math.imul": { const [a, b] = args(); return { t: "int32", v: Math.imul(Number(a!.v), Number(b!.v)) }; }
      case "Math.clz32": return { t: "int32", v: Math.clz32(Number(args()[0]!.v)) };
      case "cuda.fma": {
        const [a, b, c] = args();
        return { t: a!.t, v: fma(a!.t, a!.v as number, b!.v as number, c!.v as number) };
      }
      case "cuda.popc": case "cuda.clz": case "cuda.ffs": case "cuda.brev": return bitCount(name.slice(5), args()[0]!);
    }
    throw new Error(`reference: call ${name}`);
  }

  private device(fn: Node, args: Item[], t: Thread): Val {
    const scope = new Map<string, Binding>();
    // a parameter takes its argument's type (a weak one its own)
    fn.params.forEach((p: Node, j: number) => {
      const a = args[j]!;
      scope.set(p.name, isTuple(a) ? { kind: "tuple", val: a } : { kind: "val", val: settled(a) });
    });
    const saved = t.scopes;
    t.scopes = [scope];
    try { for (const s of fn.body.body) this.stmt(s, t); } catch (e) {
      if (e instanceof Return) return e.val;
      throw e;
    } finally { t.scopes = saved; }
    throw new Error("reference: device function without return");
  }
}

/**
 * A float atomic on global memory: max/min leave the element as it is when either value is NaN;
 * float32 add/sub flush subnormal inputs and results to zero (docs/language.md, atomics).
 */
function floatAtomic(op: string, t: ScalarName, o: number, v: number): number {
  if (op === "max" || op === "min") return Number.isNaN(o) || Number.isNaN(v) ? o : (op === "max" ? Math.max : Math.min)(o, v);
  if (t === "float64") return op === "add" ? o + v : o - v;
  const ftz = (x: number) => (Math.abs(x) < 2 ** -126 ? x * 0 : x);
  return ftz(Math.fround(op === "add" ? ftz(o) + ftz(v) : ftz(o) - ftz(v)));
}

function unwrapCast(n: Node): Node {
  return n?.type === "CallExpression" && n.callee.type === "Identifier" && n.arguments.length === 1 ? n.arguments[0] : n;
}

function memberName(n: Node): string {
  if (n.type === "Identifier") return n.name;
  if (n.type === "MemberExpression" && !n.computed) return `${memberName(n.object)}.${n.property.name}`;
  return "";
}

/** Math.floor/ceil/trunc/round/abs/sqrt: of an integer the integer (abs in its promoted type; sqrt in float64), of a float in its float type. */
function roundingMath(name: string, a: Val): Val {
  const f = name.slice(5);
  if (!isFloat(a.t) && a.weak !== "float") {
    if (f === "abs") { const ty = promoteOne(a.t); const x = BigInt(convert(plain(a), ty).v); return { t: ty, v: wrapInt(x < 0n ? -x : x, ty), weak: a.weak }; }
    if (f !== "sqrt") return a.weak ? { t: a.t, v: a.v, weak: a.weak } : convert(a, promoteOne(a.t));
  }
  const ft = a.weak || a.t === "float64" || !isFloat(a.t) ? "float64" : "float32";
  const x = toNumber(convert(plain(a), ft));
  const r = f === "floor" ? Math.floor(x) : f === "ceil" ? Math.ceil(x) : f === "trunc" ? Math.trunc(x) : f === "round" ? Math.round(x) : f === "abs" ? Math.abs(x) : Math.sqrt(x);
  return { t: ft, v: roundTo(ft, r) };
}

/** JavaScript's Math.min/max: NaN if either is NaN, -0 below +0; weak when both are. */
function minmax(min: boolean, a: Val, b: Val): Val {
  const t = common(a, b);
  const x = convert(a, t).v, y = convert(b, t).v;
  const weak = bothWeak(a, b);
  if (!isFloat(t)) return { t, v: (min ? x < y : x > y) ? x : y, weak };
  return { t, v: (min ? Math.min : Math.max)(x as number, y as number), weak };
}

function bitCount(op: string, a: Val): Val {
  const bits = BITS[a.t];
  const x = BigInt.asUintN(bits, BigInt(a.v));
  const s = x.toString(2).padStart(bits, "0");
  if (op === "popc") return { t: "int32", v: [...s].filter((c) => c === "1").length };
  if (op === "clz") return { t: "int32", v: x === 0n ? bits : s.indexOf("1") };
  if (op === "ffs") return { t: "int32", v: x === 0n ? 0 : bits - s.lastIndexOf("1") };
  return { t: a.t, v: wrapInt(BigInt(`0b${[...s].reverse().join("")}`), a.t) };
}

/** fma with one rounding: the exact product and sum in BigInt, rounded to the type's precision. */
function fma(t: ScalarName, a: number, b: number, c: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c) || a === 0 || b === 0) return roundTo(t, a * b + c);
  const [ma, ea] = decompose(a), [mb, eb] = decompose(b), [mc, ec] = decompose(c);
  const ep = ea + eb;
  const e = Math.min(ep, ec);
  const sum = ((ma * mb) << BigInt(ep - e)) + (mc << BigInt(ec - e));
  if (sum === 0n) return roundTo(t, a * b + c);   // an exact zero: the sign IEEE gives the sum
  return t === "float32" ? Math.fround(roundScaled(sum, e, 24, -149)) : roundScaled(sum, e, 53, -1074);
}

/** x = m * 2^e with an integer m */
function decompose(x: number): [bigint, number] {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0), lo = buf.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (exp) m |= 1n << 52n;
  const e = (exp || 1) - 1075;
  return [x < 0 ? -m : m, e];
}

/** m * 2^e rounded to `bits` significant bits (ties to even), no finer than 2^minExp (subnormals). */
function roundScaled(m: bigint, e: number, bits: number, minExp: number): number {
  const neg = m < 0n;
  let a = neg ? -m : m;
  const drop = Math.max(a.toString(2).length - bits, minExp - e, 0);
  if (drop > 0) {
    const D = BigInt(drop);
    const top = a >> D, rest = a - (top << D), half = 1n << (D - 1n);
    a = top + (rest > half || (rest === half && (top & 1n) === 1n) ? 1n : 0n);
  }
  const r = Number(a) * 2 ** (e + drop);
  return neg ? -r : r;
}
