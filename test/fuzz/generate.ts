// A seeded generator of random, well-defined kernels over the kernel language
// (docs/language.md), as TypeScript source text.
//
// Every kernel has the same frame: input arrays read anywhere, output arrays
// written only at the thread's own index (no races), an atomic accumulator
// that only order-independent integer atomics touch, and 64 threads in blocks
// of 32 or 64. Some kernels also take scalars (compiled for several eager
// signatures, so that the launch chooses one), a tuple, and an array of
// records whose fields the kernel writes at its own index; some arrays are
// strided views over a larger buffer. Between, random statements: typed
// `let`s, `let`s joining values of different types, named literals and
// expressions on literals alone, assignments and compound assignments,
// if/else, bounded for/while/do-while loops with break and continue, local
// arrays (written before read), tuples, device function calls, and, at the
// top level only (where every thread of the block is converged), shared
// memory exchanges between syncthreads, warp shuffles, votes and block
// reductions.
//
// Undefined behaviour is avoided by construction: indices are masked into
// range, loops have constant bounds, locals and local arrays are assigned
// before use; what the docs define (integer division by zero, float→int
// saturation, shift counts modulo the width) is generated freely.

import { rng } from "../helpers/crosscheck.js";
import type { ScalarName } from "../../src/dtypes.js";

export const THREADS = 64;
export const ACC_LENGTH = 8;
/** Slots per thread of the probe array, where values whose type is the point (joins, literals, scalars) are stored as float64. */
export const PROBES = 8;

/** The dtypes a `let` may have: compound assignments keep them (int8 += int8 would become int32). */
const VAR_TYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"] as const;
type VarType = (typeof VAR_TYPES)[number];
const ARRAY_TYPES: readonly ScalarName[] = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64", "bool"];
const CAST_TYPES: readonly ScalarName[] = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"];
const ACC_TYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"] as const;
/** Types a scalar parameter may have in the eager signatures (the launch picks one for each argument). */
const SCALAR_PARAM_TYPES: readonly ScalarName[] = ["int16", "int32", "int64", "uint32", "float16", "bfloat16", "float32", "float64"];
/** Math functions of the device math library: compared sim vs PTX only (both run our own library). */
const TRANSCENDENTAL = ["exp", "log", "sin", "cos", "tanh", "atan", "cbrt", "log1p", "expm1", "pow", "atan2", "hypot"];
const BINARY_MATH = new Set(["pow", "atan2", "hypot"]);

/** Number literals: integral ones of every literal type (int32, uint32, int64, float beyond int64), fractional ones, -0. */
const INT_LITERALS = [0, 1, 2, 3, 7, 31, 32, 33, 255, 256, 65535, 65536, 2147483647, -1, -2, -128, -32768, -2147483648, 12345, 1000003,
  2147483648, 3000000000, 4294967295, 4294967296, -2147483649, 1e10, -1e15, 2 ** 53, 2 ** 63, 1e30];
const FLOAT_LITERALS = [0.5, -0.5, 1.5, 2.25, -3.75, 0.1, 1e-3, -1e10 - 0.5, 3e38, 1e-40, 0.3333333333333333, 2.5e9, -0, 1e308, 5e-324];
/** Named literals that need no declaration. */
const NAMED_LITERALS = ["Math.PI", "Math.E", "Math.SQRT1_2", "Math.LN2", "NaN", "Infinity", "Number.EPSILON", "Number.MAX_VALUE", "Number.MIN_VALUE", "Number.NEGATIVE_INFINITY", "Number.MAX_SAFE_INTEGER", "Number.MIN_SAFE_INTEGER"];

/** What a kernel exercises, for the run's feature counts. */
export type Feature = "literal folding" | "joins" | "bfloat16" | "signatures" | "views" | "tuples" | "records";
export const FEATURES: readonly Feature[] = ["literal folding", "joins", "bfloat16", "signatures", "views", "tuples", "records"];

/**
 * A strided 1-d view `{ data, shape: [n], stride: [stride], offset }` over a buffer of `total` elements;
 * `shares`: over the buffer of that earlier parameter (interleaved with its view, no element in both).
 */
export interface View { readonly stride: number; readonly offset: number; readonly total: number; readonly shares?: string }

export interface ArrayParam {
  readonly kind: "array";
  readonly name: string;
  readonly dtype: ScalarName;
  /** `probe`: a float64 output of PROBES slots per thread (pr[i * PROBES + k]) */
  readonly role: "in" | "out" | "acc" | "probe";
  /** the signature's layout: C (`[::1]`) or any (`[:]`) */
  readonly layout: "C" | "A";
  /** passed as a strided host view rather than a typed array of THREADS elements */
  readonly view?: View;
}

/** A scalar argument as the host passes it: a JS number, a typed scalar (`float32(x)`), a bigint or a boolean. */
export type HostScalar =
  | { readonly kind: "number"; readonly v: number }
  | { readonly kind: "typed"; readonly dtype: ScalarName; readonly v: number }
  | { readonly kind: "bigint"; readonly v: bigint }
  | { readonly kind: "bool"; readonly v: boolean };

/** A scalar parameter; its type in each eager signature is in FuzzKernel.overloads. */
export interface ScalarParam { readonly kind: "scalar"; readonly name: string; readonly arg: HostScalar }

/** A tuple argument (a plain array of numbers, maybe nested) and the item types the signature gives it. */
export type HostTuple = readonly (number | HostTuple)[];
export type TupleSpec = readonly (ScalarName | TupleSpec)[];
export interface TupleParam { readonly kind: "tuple"; readonly name: string; readonly value: HostTuple; readonly spec: TupleSpec }

export interface RecordFieldSpec { readonly name: string; readonly dtype: ScalarName; readonly written: boolean }
/** An array of THREADS records, passed as plain objects or as `cuda.recordArray(dtype, objects)`. */
export interface RecordParam { readonly kind: "records"; readonly name: string; readonly fields: readonly RecordFieldSpec[]; readonly form: "objects" | "recordArray" }

export type FuzzParam = ArrayParam | ScalarParam | TupleParam | RecordParam;

export interface FuzzKernel {
  readonly seed: number;
  /** the kernel's text: an arrow function */
  readonly source: string;
  /** device functions the kernel calls by name (passed in `env`), as `function name(…) { … }` texts */
  readonly devices: readonly { readonly name: string; readonly source: string }[];
  readonly params: readonly FuzzParam[];
  /**
   * The eager signatures: per signature, the types of the scalar parameters in order (the other
   * parameters' types are the same in all). More than one: the launch chooses.
   */
  readonly overloads: readonly (readonly ScalarName[])[];
  readonly block: number;
  /** a*b+c contracted to fma (the reference does not model fma: its float results are then not compared) */
  readonly fma: boolean;
  /** uses math library functions: compared between simulator and PTX only */
  readonly transcendental: boolean;
  /** the atomic operations on `acc` (one commuting group) */
  readonly atomics: readonly string[];
  readonly features: readonly Feature[];
}

/** A tuple's shape: "s" for a scalar item, else a nested tuple's shape. */
type Shape = readonly ("s" | Shape)[];

interface Scope {
  /** `let`s that statements may assign (with their type) */
  readonly vars: Map<string, VarType>;
  /** names only read: `let`s whose type is a join or a literal's, destructured constants (`literal`: a named literal) */
  readonly reads: { readonly name: string; readonly literal: boolean }[];
  readonly locals: Map<string, { dtype: ScalarName; n: number }>;
  readonly tuples: Map<string, Shape>;
  /** record locals (`const p = rec[i]`) */
  readonly records: string[];
}

const newScope = (s?: Scope): Scope => ({
  vars: new Map(s?.vars), reads: [...(s?.reads ?? [])], locals: new Map(s?.locals), tuples: new Map(s?.tuples), records: [...(s?.records ?? [])],
});

/** An expression of literals alone; `pure`: the compiler keeps it a literal (a bitwise result of a uint32 literal is not one). */
interface Lit { readonly s: string; readonly pure: boolean }

class Gen {
  private readonly r: () => number;
  private counter = 0;
  readonly devices: { name: string; source: string; arity: number; tuple?: number }[] = [];
  readonly features = new Set<Feature>();
  transcendental = false;
  /** generating a device function's body: no thread index, arrays or block-level operations */
  private inDevice = false;
  /** `const`s bound to literal expressions: named literals, weak as the literal is */
  private readonly consts: { name: string; pure: boolean }[] = [];
  private readonly ins: ArrayParam[];
  private readonly outs: ArrayParam[];
  private readonly scalars: ScalarParam[];
  private readonly tuple: TupleParam | undefined;
  /** `tp.length`, `tp[1].length`, …: the tuple argument's lengths */
  private readonly tupleLengths: string[] = [];
  private readonly records: RecordParam | undefined;
  private readonly shared: { name: string; dtype: ScalarName } | undefined;
  /** probe slots used so far */
  private probes = 0;
  /** the atomic operations of this kernel: ones that commute with each other, so the result is order-independent */
  readonly atomics: readonly string[];

  constructor(seed: number, readonly params: FuzzParam[], readonly block: number, private readonly allowTranscendental: boolean, shared: ScalarName | undefined) {
    this.r = seeded(seed * 2 + 1);
    const arrays = params.filter((p): p is ArrayParam => p.kind === "array");
    this.ins = arrays.filter((p) => p.role === "in");
    this.outs = arrays.filter((p) => p.role === "out");
    this.scalars = params.filter((p): p is ScalarParam => p.kind === "scalar");
    this.tuple = params.find((p): p is TupleParam => p.kind === "tuple");
    this.records = params.find((p): p is RecordParam => p.kind === "records");
    if (this.tuple) {
      this.tupleLengths.push(`${this.tuple.name}.length`);
      this.tuple.value.forEach((x, k) => { if (typeof x !== "number") this.tupleLengths.push(`${this.tuple!.name}[${k}].length`); });
    }
    this.shared = shared ? { name: "sh", dtype: shared } : undefined;
    const float = arrays.find((p) => p.role === "acc")!.dtype.startsWith("float");
    this.atomics = float ? this.pick([["add", "sub"], ["max"], ["min"]]) : this.pick([["add", "sub"], ["and"], ["or"], ["xor"], ["max"], ["min"]]);
  }

  int(n: number): number { return Math.floor(this.r() * n); }
  chance(p: number): boolean { return this.r() < p; }
  pick<T>(xs: readonly T[]): T { return xs[this.int(xs.length)]!; }
  fresh(prefix: string): string { return `${prefix}${this.counter++}`; }
  castType(): ScalarName {
    const t = this.pick(CAST_TYPES);
    if (t === "bfloat16") this.features.add("bfloat16");
    return t;
  }

  // ---------------------------------------------------------------- literals

  /** A number literal, a named literal (a `const` or a constant), as source text. */
  literal(pureOnly = false): string {
    const consts = this.consts.filter((c) => c.pure || !pureOnly);
    if (consts.length && !this.inDevice && this.chance(0.2)) return this.pick(consts).name;
    // a tuple's length is a literal too
    if (this.tuple && !this.inDevice && this.chance(0.05)) return this.tupleLengths[this.int(this.tupleLengths.length)]!;
    if (this.chance(0.1)) return this.pick(NAMED_LITERALS);
    return numberText(this.chance(0.6) ? this.pick(INT_LITERALS) : this.pick(FLOAT_LITERALS), this.chance(0.15));
  }

  /**
   * An expression of literals alone: arithmetic, comparisons, bitwise operators, shifts, unary
   * operators, the folded Math functions, integer-division idioms and conditionals with a constant
   * condition. `pureOnly`: only forms that stay literals (operands of `**` and Math.pow, which on
   * anything else would call the math library, and of constant conditions).
   */
  litExpr(depth: number, pureOnly = false): Lit {
    if (depth <= 0 || this.chance(0.3)) return { s: this.literal(pureOnly), pure: true };
    this.features.add("literal folding");
    const d = depth - 1;
    const sub = (pure = pureOnly) => this.litExpr(d, pure);
    const k = this.int(pureOnly ? 60 : 100);
    if (k < 25) {
      const op = this.pick(["+", "-", "*", "/", "%", "**", "+", "*", "/"]);
      const [a, b] = op === "**" ? [sub(true), sub(true)] : [sub(), sub()];
      return { s: `(${a.s} ${op} ${b.s})`, pure: a.pure && b.pure };
    }
    if (k < 35) {
      const f = this.pick(["abs", "sign", "floor", "ceil", "trunc", "round", "sqrt", "min", "max", "pow"]);
      const args = f === "pow" ? [sub(true), sub(true)] : f === "min" || f === "max" ? Array.from({ length: 1 + this.int(3) }, () => sub()) : [sub()];
      return { s: `Math.${f}(${args.map((a) => a.s).join(", ")})`, pure: args.every((a) => a.pure) };
    }
    if (k < 45) {
      const a = sub();
      return { s: `(${this.pick(["-", "-", "+"])}${a.s})`, pure: a.pure };
    }
    if (k < 60) {
      const [a, b] = [sub(true), sub()];
      const c = this.constantCondition();
      return { s: `(${c} ? ${a.s} : ${b.s})`, pure: a.pure && b.pure };
    }
    if (k < 70) return { s: this.constantCondition(), pure: false };
    if (k < 85) {
      // `x >>> 0` of a negative x: a uint32 beyond int32, a literal typed by its value
      if (this.chance(0.2)) return { s: `(${sub().s} >>> 0)`, pure: false };
      const op = this.pick(["&", "|", "^", "<<", ">>", ">>>"]);
      return { s: `(${sub().s} ${op} ${sub().s})`, pure: false };
    }
    if (k < 90) return { s: `(~${sub().s})`, pure: false };
    const [a, b] = [sub(), sub()];
    return { s: this.pick([`Math.floor(${a.s} / ${b.s})`, `Math.trunc(${a.s} / ${b.s})`, `((${a.s} / ${b.s}) | 0)`]), pure: false };
  }

  /** A comparison of two literals: a constant the compiler evaluates, as JavaScript compares them. */
  constantCondition(): string {
    return `(${this.litExpr(1, true).s} ${this.pick(["<", "<=", ">", ">=", "===", "!==", "==", "!="])} ${this.litExpr(1, true).s})`;
  }

  // ---------------------------------------------------------------- expressions

  /** An int32 index into an array of length n (a power of two). */
  index(depth: number, s: Scope, n: number): string {
    return this.chance(0.4) && !this.inDevice ? `(i & ${n - 1})` : `(int32(${this.expr(depth, s)}) & ${n - 1})`;
  }

  /** An element of another thread's slot: `(i * a + b) & (THREADS - 1)`. */
  otherIndex(): string {
    return `(i * ${1 + this.int(7)} + ${this.int(64)}) & ${THREADS - 1}`;
  }

  /** A value that is not a compile-time constant (so a conditional on it is not folded). */
  runtimeLeaf(s: Scope): string {
    const vars = [...s.vars.keys()];
    if (vars.length && (this.inDevice || this.chance(0.4))) return this.pick(vars);
    if (this.inDevice) return "1"; // unreachable: a device function declares its parameters first
    return this.chance(0.5) ? `${this.pick(this.ins).name}[i]` : this.pick(["i", "cuda.threadIdx.x", "cuda.laneid"]);
  }

  /** A literal: an expression of literals, a destructured named literal, a tuple's length. */
  literalLeaf(s: Scope): string {
    const named = s.reads.filter((r) => r.literal);
    const k = this.int(10);
    if (k < 2 && named.length) return this.pick(named).name;
    if (k < 3 && (this.tuple || s.tuples.size)) return this.tupleItem(s, true);
    return this.litExpr(1).s;
  }

  /**
   * A value that is no literal (so a conditional between it and a literal is never one between two
   * literals, which a constant condition would pick at compile time).
   */
  leaf(s: Scope): string {
    const vars = [...s.vars.keys(), ...s.reads.filter((r) => !r.literal).map((r) => r.name)];
    const k = this.int(14);
    if ((k < 4 || this.inDevice) && vars.length) return this.pick(vars);
    if (k < 7) {
      const a = this.pick(this.ins);
      return `${a.name}[${this.chance(0.7) ? "i" : this.otherIndex()}]`;
    }
    if (k < 8) return this.pick(["i", "cuda.threadIdx.x", "cuda.blockIdx.x", "cuda.laneid", "cuda.blockDim.x"]);
    if (k < 9 && s.locals.size) {
      const [name, l] = this.pick([...s.locals.entries()]);
      return `${name}[i & ${l.n - 1}]`;
    }
    if (k < 11 && this.scalars.length && !this.inDevice) return this.pick(this.scalars).name;
    if (k < 12 && (this.tuple || s.tuples.size)) return this.tupleItem(s, false);
    if (k < 13 && this.records && !this.inDevice) return this.recordRead(s);
    if (this.chance(0.3)) { const b = this.int(100) - 50; return b < 0 ? `(${b}n)` : `${b}n`; }
    return `${this.castType()}(${this.litExpr(2).s})`;
  }

  /**
   * A scalar item of the tuple argument or a tuple local (`tp[1]`, `tp[0][1]`), or with `length`, a
   * tuple's length (a literal), where there is no item.
   */
  tupleItem(s: Scope, length: boolean): string {
    const tuples: [string, Shape][] = [...s.tuples.entries()];
    if (this.tuple && !this.inDevice) tuples.push([this.tuple.name, shapeOf(this.tuple.value)]);
    if (!tuples.length) return this.leaf(s);
    const [name, shape] = this.pick(tuples);
    const items: string[] = [], lengths = [`${name}.length`];
    shape.forEach((item, k) => {
      if (item === "s") { items.push(`${name}[${k}]`); return; }
      lengths.push(`${name}[${k}].length`);
      item.forEach((x, m) => (x === "s" ? items : lengths).push(x === "s" ? `${name}[${k}][${m}]` : `${name}[${k}][${m}].length`));
    });
    if (length || !items.length) return length ? this.pick(lengths) : this.leaf(s);
    return this.pick(items);
  }

  /** A field of the record array: any field of the thread's own record, or a field no thread writes of another's. */
  recordRead(s: Scope): string {
    const rec = this.records!;
    const readOnly = rec.fields.filter((f) => !f.written);
    if (s.records.length && this.chance(0.3)) return `${this.pick(s.records)}.${this.pick(rec.fields).name}`;
    if (readOnly.length && this.chance(0.4)) return `${rec.name}[${this.otherIndex()}].${this.pick(readOnly).name}`;
    return `${rec.name}[i].${this.pick(rec.fields).name}`;
  }

  /** A random expression; `literalOk`: it may be a (weak) literal or an expression of literals alone. */
  expr(depth: number, s: Scope, literalOk = false): string {
    if (depth <= 0 || this.chance(0.2)) return literalOk && this.chance(0.3) ? this.literalLeaf(s) : this.leaf(s);
    const d = depth - 1;
    const k = this.int(100);
    if (k < 40) {
      const op = this.pick(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", ">>>", "<", "<=", ">", ">=", "===", "!==", "==", "!=", "&&", "||", "+", "-", "*"]);
      const lit = !["<<", ">>", ">>>", "&&", "||"].includes(op) && this.chance(0.3);
      const litLeft = lit && this.chance(0.5);
      const a = litLeft ? this.litExpr(2).s : this.expr(d, s);
      const b = lit && !litLeft ? this.litExpr(2).s : this.expr(d, s, op === "<<" || op === ">>" || op === ">>>");
      return `(${a} ${op} ${b})`;
    }
    if (k < 47) return `(${this.pick(["-", "~", "!", "+"])}${this.expr(d, s)})`;
    if (k < 52) return `(${this.cond(d, s)} ? ${this.expr(d, s, true)} : ${this.expr(d, s)})`;
    if (k < 55) return this.weakChoice(d, s);
    if (k < 64) return `${this.castType()}(${this.expr(d, s)})`;
    if (k < 78) return this.math(d, s);
    if (k < 82) return `${this.pick(["Math.floor", "Math.trunc"])}(${this.expr(d, s)} / ${this.expr(d, s, true)})`;
    if (k < 84) return `((${this.expr(d, s)} / ${this.expr(d, s)}) | 0)`;
    if (k < 88) return `cuda.${this.pick(["popc", "clz", "ffs", "brev"])}(${this.pick(["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])}(${this.expr(d, s)}))`;
    if (k < 92 && this.devices.length) return this.deviceCall(d, s);
    if (k < 94 && this.allowTranscendental) {
      this.transcendental = true;
      const f = this.pick(TRANSCENDENTAL), t = this.pick(["float32", "float64"]);
      return BINARY_MATH.has(f) ? `Math.${f}(${t}(${this.expr(d, s)}), ${t}(${this.expr(d, s)}))` : `Math.${f}(${t}(${this.expr(d, s)}))`;
    }
    return `(${this.expr(d, s)} ** 2)`;
  }

  /** Two literals chosen at run time: a weak value that is no literal. */
  weakChoice(d: number, s: Scope): string {
    return `(${this.runtimeCondition(d, s)} ? ${this.litExpr(1).s} : ${this.litExpr(1).s})`;
  }

  math(d: number, s: Scope): string {
    const f = this.pick(["min", "max", "abs", "floor", "ceil", "trunc", "round", "sqrt", "sign", "fround", "imul", "clz32", "fma", "min3", "isNaN", "isFinite", "asIntN"]);
    const e = () => (this.chance(0.15) ? this.weakChoice(d, s) : this.expr(d, s, this.chance(0.2)));
    const ft = () => this.pick(["float32", "float64"]);
    switch (f) {
      case "min": case "max": return `Math.${f}(${e()}, ${e()})`;
      case "min3": return `Math.${this.pick(["min", "max"])}(${e()}, ${e()}, ${e()})`;
      case "imul": return `Math.imul(int32(${e()}), int32(${e()}))`;
      case "clz32": return `Math.clz32(uint32(${e()}))`;
      case "isNaN": case "isFinite": return `Number.${f}(${e()})`;
      case "asIntN": return `BigInt.${this.pick(["asIntN", "asUintN"])}(64, int64(${e()}))`;
      case "fma": { const t = ft(); return `cuda.fma(${t}(${e()}), ${t}(${e()}), ${t}(${e()}))`; }
      default: return `Math.${f}(${this.expr(d, s)})`;
    }
  }

  cond(d: number, s: Scope): string {
    if (this.chance(0.7)) return `(${this.expr(d, s)} ${this.pick(["<", "<=", ">", ">=", "===", "!=="])} ${this.expr(d, s, true)})`;
    return this.expr(d, s);
  }

  /** A condition the compiler cannot evaluate: it compares a value known only at run time. */
  runtimeCondition(d: number, s: Scope): string {
    return `(${this.runtimeLeaf(s)} ${this.pick(["<", "<=", ">", ">=", "===", "!=="])} ${this.expr(d, s, true)})`;
  }

  deviceCall(d: number, s: Scope): string {
    const f = this.pick(this.devices);
    const args = Array.from({ length: f.arity }, () => this.expr(d, s));
    if (f.tuple !== undefined) args[0] = this.tupleArgument(d, s, f.tuple);
    return `${f.name}(${args.join(", ")})`;
  }

  /** A tuple of at least `n` scalar items: a tuple literal, a tuple local or the tuple argument. */
  tupleArgument(d: number, s: Scope, n: number): string {
    const fits = (shape: Shape) => shape.length >= n && shape.slice(0, n).every((x) => x === "s");
    const named = [...s.tuples.entries()].filter(([, shape]) => fits(shape)).map(([name]) => name);
    if (this.tuple && !this.inDevice && fits(shapeOf(this.tuple.value))) named.push(this.tuple.name);
    if (named.length && this.chance(0.5)) return this.pick(named);
    return this.tupleLiteral(d, s, n + this.int(2));
  }

  /** `[a, b, …]`: items of any type, literals among them. */
  tupleLiteral(d: number, s: Scope, n: number): string {
    return `[${this.tupleItems(d, s, n).map((x) => x.s).join(", ")}]`;
  }

  /** The items of a tuple literal; `literal`: the item is an expression of literals alone. */
  tupleItems(d: number, s: Scope, n: number): { s: string; literal: boolean }[] {
    this.features.add("tuples");
    return Array.from({ length: n }, () => (this.chance(0.3) ? { s: this.litExpr(1).s, literal: true } : { s: this.expr(d, s), literal: false }));
  }

  /**
   * `pr[i * PROBES + k] = value;` in the next free slot (none in device functions, none when all are
   * taken): the value as a float64 shows what its type made of it, though nothing else reads it.
   */
  probe(value: string): string {
    if (this.inDevice || this.probes >= PROBES) return "";
    return ` pr[i * ${PROBES} + ${this.probes++}] = ${value};`;
  }

  /**
   * Probes of conversions: an input element to a dtype (maybe through another), or a half type of an
   * expression of literals (converted at compile time), each rounded once from the exact value.
   */
  conversionProbes(): string[] {
    return Array.from({ length: 1 + this.int(2) }, () => {
      if (this.chance(0.3)) return this.probe(`${this.pick(["bfloat16", "float16"])}(${this.litExpr(2).s})`).trim();
      const element = `${this.pick(this.ins).name}[i]`;
      return this.probe(this.chance(0.7) ? `${this.castType()}(${element})` : `${this.castType()}(${this.castType()}(${element}))`).trim();
    });
  }

  /** Probes of each scalar parameter (its value, and a division that computes in its type) and of an item of the tuple. */
  parameterProbes(): string[] {
    const probes = this.scalars.map((p) => `${this.probe(p.name)}${this.probe(`${p.name} / ${this.pick(["3", "7", "in0[i]", "10"])}`)}`.trim());
    if (this.tuple) probes.push(this.probe(this.tupleItem(newScope(), false)).trim());
    return probes.filter((x) => x);
  }

  // ---------------------------------------------------------------- statements

  /** Statements at the given nesting (top: block-converged, where barriers and warp operations may go). */
  statements(depth: number, s: Scope, count: number, top: boolean, inLoop: boolean): string[] {
    const out: string[] = [];
    for (let n = 0; n < count; n++) out.push(...this.statement(depth, s, top, inLoop));
    return out;
  }

  statement(depth: number, s: Scope, top: boolean, inLoop: boolean): string[] {
    const k = this.int(116);
    const vars = [...s.vars.entries()];
    if (k < 3 && top && !this.inDevice) return [this.namedLiteral()];
    if (k < 20 || !vars.length) return [this.declare(s)];
    const deviceOk = k < 40 || (k >= 50 && k < 68 && depth > 0) || (k >= 68 && k < 71 && inLoop) || k >= 100;
    if (this.inDevice && !deviceOk) return [this.declare(s)];
    if (k < 40) {
      const [v, t] = this.pick(vars);
      if (this.chance(0.5)) return [`${v} = ${t}(${this.expr(3, s)});`];
      const ops = t.startsWith("float") ? ["+=", "-=", "*=", "/=", "%="] : ["+=", "-=", "*=", "&=", "|=", "^=", "<<=", ">>=", "%="];
      if (this.chance(0.15)) return [`${v}${this.pick(["++", "--"])};`];
      return [`${v} ${this.pick(ops)} ${t}(${this.expr(2, s)});`];
    }
    if (k < 50) {
      if (this.records && this.chance(0.3)) return [this.recordWrite(s)];
      const o = this.pick(this.outs);
      return [`${o.name}[i] ${this.chance(0.7) ? "=" : "+="} ${this.expr(3, s, true)};`];
    }
    if (k < 58 && depth > 0) {
      const body = this.nested(depth, s, inLoop);
      const els = this.chance(0.4) ? ` else { ${this.nested(depth, s, inLoop).join(" ")} }` : "";
      return [`if (${this.cond(2, s)}) { ${body.join(" ")} }${els}`];
    }
    if (k < 68 && depth > 0) return [this.loop(depth, s)];
    if (k < 71 && inLoop) return [`if (${this.cond(2, s)}) ${this.pick(["break", "continue"])};`];
    if (k < 76) {
      const acc = this.params.find((p): p is ArrayParam => p.kind === "array" && p.role === "acc")!;
      const op = this.pick(this.atomics);
      // float sums of small integers are exact, so their order does not matter
      const value = acc.dtype.startsWith("float") && op !== "max" && op !== "min" ? `${acc.dtype}(int8(${this.expr(2, s)}))` : `${acc.dtype}(${this.expr(2, s)})`;
      return [`cuda.atomic.${op}(acc, ${this.index(2, s, ACC_LENGTH)}, ${value});`];
    }
    if (k < 80) return this.localArray(s);
    if (k < 83 && this.devices.length < 2 && top) { this.device(); return []; }
    if (top && k < 88 && this.shared) return this.sharedExchange(s);
    if (top && k < 96) return this.warp(s);
    if (top && k < 100) return [this.blockVote(s)];
    if (k < 100) return [this.declare(s)];
    if (k < 104) return [this.join(s)];
    if (k < 107) return [this.literalLet(s)];
    if (k < 110) return [this.tupleLocal(s)];
    if (k < 113 && this.records && !this.inDevice) return [this.recordLocal(s)];
    if (k >= 113 && !this.inDevice && this.probes < PROBES) return [this.probe(this.probeValue(s)).trim()];
    return [this.declare(s)];
  }

  nested(depth: number, s: Scope, inLoop: boolean): string[] {
    return this.statements(depth - 1, newScope(s), 1 + this.int(3), false, inLoop);
  }

  /** `const c = <literals>` at the top level, where it stays in scope for the rest of the kernel. */
  namedLiteral(): string {
    const c = this.fresh("c");
    const lit = this.litExpr(2);
    this.consts.push({ name: c, pure: lit.pure });
    return `const ${c} = ${lit.s};${this.chance(0.3) ? this.probe(`${this.pick(this.ins).name}[i] ${this.pick(["*", "+", "/"])} ${c}`) : ""}`;
  }

  /** A value worth a probe: any expression, a typed value beside literals (`x * (1 / 3)`), literals alone. */
  probeValue(s: Scope): string {
    const k = this.int(4);
    if (k === 0) return this.expr(3, s, true);
    // a conversion of an element as it is (every dtype to every dtype, rounded once from the exact value)
    if (k === 3) return `${this.castType()}(${this.pick(this.ins).name}[${this.chance(0.5) ? "i" : this.otherIndex()}])`;
    if (k === 1) return `${this.leaf(s)} ${this.pick(["*", "+", "-", "/", "%", "<"])} ${this.litExpr(2).s}`;
    return this.litExpr(3).s;
  }

  declare(s: Scope): string {
    const t = this.pick(VAR_TYPES);
    const v = this.fresh("v");
    const init = `${t}(${this.expr(3, s)})`;
    s.vars.set(v, t);
    return `let ${v} = ${init};`;
  }

  /** A value for a join: typed by a cast, an array's dtype, a literal, a comparison, or any expression. */
  joinValue(s: Scope): string {
    const k = this.int(6);
    if (k === 0) return this.litExpr(2).s;
    if (k === 1 && !this.inDevice) return `${this.pick(this.ins).name}[i]`;
    if (k === 2) return `(${this.expr(1, s)} < ${this.expr(1, s, true)})`;
    if (k === 3) return this.expr(2, s);
    return `${this.pick(["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"])}(${this.expr(2, s)})`;
  }

  /** `let v = a; if (c) v = b; [else v = c;]`: the let's type is the join of the values' types (docs/language.md, "Locals"). */
  join(s: Scope): string {
    this.features.add("joins");
    const v = this.fresh("j");
    const init = this.joinValue(s), other = this.joinValue(s);
    const els = this.chance(0.3) ? ` else { ${v} = ${this.joinValue(s)}; }` : "";
    const line = `let ${v} = ${init}; if (${this.cond(1, s)}) { ${v} = ${other}; }${els}${this.probe(v)}`;
    s.reads.push({ name: v, literal: false });
    return line;
  }

  /** `let v = <literals>`: a variable of the literal's own type (int32, uint32, int64, float64, bool). */
  literalLet(s: Scope): string {
    const v = this.fresh("l");
    const line = `let ${v} = ${this.litExpr(2).s};${this.chance(0.5) ? this.probe(v) : ""}`;
    s.reads.push({ name: v, literal: false });
    return line;
  }

  /** `const t = [a, b]` (a tuple local) or `const [a, b] = [x, <literal>]` (each name bound as its own const). */
  tupleLocal(s: Scope): string {
    const n = 1 + this.int(3);
    if (this.chance(0.4)) {
      const items = this.tupleItems(2, s, n);
      const names = items.map(() => this.fresh("d"));
      const line = `const [${names.join(", ")}] = [${items.map((x) => x.s).join(", ")}];${this.chance(0.5) ? this.probe(`${this.pick(names)} * ${this.pick(["in0[i]", "0.1", "3"])}`) : ""}`;
      // `const [a, b] = [0.5, x]` binds each name as `const a = 0.5` would: a literal item is a named literal
      names.forEach((name, j) => s.reads.push({ name, literal: items[j]!.literal }));
      return line;
    }
    const t = this.fresh("t");
    const line = `const ${t} = ${this.tupleLiteral(2, s, n)};${this.chance(0.5) ? this.probe(`${t}[${this.int(n)}]`) : ""}`;
    s.tuples.set(t, Array.from({ length: n }, () => "s"));
    return line;
  }

  /** `rec[i].f = …` or `rec[i].f += …` on a field the kernel writes (each thread its own record). */
  recordWrite(s: Scope): string {
    const rec = this.records!;
    const f = this.pick(rec.fields.filter((x) => x.written));
    return `${rec.name}[i].${f.name} ${this.chance(0.7) ? "=" : "+="} ${this.expr(3, s, true)};`;
  }

  /** `const p = rec[i]`: a copy of the thread's own record. */
  recordLocal(s: Scope): string {
    const p = this.fresh("r");
    s.records.push(p);
    return `const ${p} = ${this.records!.name}[i];${this.chance(0.5) ? this.probe(`${p}.${this.pick(this.records!.fields).name}`) : ""}`;
  }

  loop(depth: number, s: Scope): string {
    const c = this.fresh("k");
    const bound = this.chance(0.7) ? String(this.int(5)) : `(int32(${this.expr(1, s)}) & 3)`;
    // the counter is not in scope for the body: an assignment to it could loop forever
    const body = this.statements(depth - 1, newScope(s), 1 + this.int(3), false, true).join(" ");
    switch (this.int(3)) {
      case 0: return `for (let ${c} = 0; ${c} < ${bound}; ${c}++) { ${body} }`;
      case 1: return `{ let ${c} = 0; while (${c} < ${bound}) { ${c}++; ${body} } }`;
      default: return `{ let ${c} = 0; do { ${c}++; ${body} } while (${c} < ${bound}); }`;
    }
  }

  localArray(s: Scope): string[] {
    const name = this.fresh("L");
    const dtype = this.pick(ARRAY_TYPES.filter((t) => t !== "bool"));
    if (dtype === "bfloat16") this.features.add("bfloat16");
    const n = this.pick([2, 4, 8]);
    const c = this.fresh("k");
    // readable only once every element is written
    const lines = [`const ${name} = cuda.local.array(${n}, ${dtype});`, `for (let ${c} = 0; ${c} < ${n}; ${c}++) ${name}[${c}] = ${this.expr(2, s)};`];
    s.locals.set(name, { dtype, n });
    return [...lines, `${name}[${this.index(1, s, n)}] = ${this.expr(2, s)};`];
  }

  /** Each thread writes its slot, and after a barrier reads another thread's. */
  sharedExchange(s: Scope): string[] {
    const sh = this.shared!;
    const v = this.fresh("v");
    const t = this.pick(VAR_TYPES);
    const from = this.chance(0.5) ? `(cuda.threadIdx.x + ${1 + this.int(this.block)}) & ${this.block - 1}` : `(int32(${this.expr(2, s)}) & ${this.block - 1})`;
    const lines = [`${sh.name}[cuda.threadIdx.x] = ${this.expr(3, s)};`, "cuda.syncthreads();", `let ${v} = ${t}(${sh.name}[${from}]);`, "cuda.syncthreads();"];
    s.vars.set(v, t);
    return lines;
  }

  warp(s: Scope): string[] {
    const ints = [...s.vars.entries()].filter(([, t]) => !t.startsWith("float"));
    const [x, xt] = this.pick([...s.vars.entries()]);
    const w = this.fresh("w");
    const k = this.int(8);
    const full = "0xffffffff";
    let call: string, t: VarType;
    if (k < 4) {
      const fn = this.pick(["shflSync", "shflUpSync", "shflDownSync", "shflXorSync"]);
      const lane = this.chance(0.6) ? String(this.int(40)) : `int32(${this.expr(1, s)})`;
      call = `cuda.${fn}(${full}, ${x}, ${lane})`; t = xt;
    } else if (k < 6) {
      call = `cuda.${this.pick(["ballotSync", "allSync", "anySync", "eqSync"])}(${full}, ${this.cond(1, s)})`; t = "uint32";
    } else if (k < 7 && ints.length) {
      call = `cuda.matchAnySync(${full}, ${this.pick(ints)[0]})`; t = "uint32";
    } else {
      call = "cuda.activemask()"; t = "uint32";
    }
    s.vars.set(w, t);
    return [`let ${w} = ${t}(${call});`];
  }

  blockVote(s: Scope): string {
    const v = this.fresh("v");
    const line = `let ${v} = cuda.${this.pick(["syncthreadsCount", "syncthreadsAnd", "syncthreadsOr"])}(${this.cond(1, s)});`;
    s.vars.set(v, "int32");
    return line;
  }

  /** A device function of one to three parameters (the first maybe a tuple): a few statements and one return. */
  device(): void {
    const name = `dev${this.devices.length}`;
    const arity = 1 + this.int(3);
    const tuple = this.chance(0.3) ? 1 + this.int(3) : undefined;
    const ps = Array.from({ length: arity }, (_, j) => `p${j}`);
    // parameters take their call site's types: the body sees them only through casts
    const s = newScope();
    const body: string[] = [];
    ps.forEach((p, j) => {
      const reads = j === 0 && tuple !== undefined ? [...Array.from({ length: tuple }, (_, m) => `${p}[${m}]`), `${p}.length`] : [p];
      for (const read of reads) {
        if (read !== p && this.chance(0.3)) continue;
        const t = this.pick(VAR_TYPES), v = this.fresh("q");
        s.vars.set(v, t);
        body.push(`let ${v} = ${t}(${read});`);
      }
    });
    if (!s.vars.size) { const v = this.fresh("q"); s.vars.set(v, "int32"); body.push(`let ${v} = int32(${ps.length > 1 ? ps[1] : 0});`); }
    this.inDevice = true;
    body.push(...this.statements(1, s, 1 + this.int(3), false, false));
    const rt = this.pick(VAR_TYPES);
    body.push(`return ${rt}(${this.expr(2, s)});`);
    this.inDevice = false;
    this.devices.push({ name, source: `function ${name}(${ps.join(", ")}) { ${body.join(" ")} }`, arity, tuple });
  }
}

/**
 * A generator for `seed` whose first draws are spread too: xorshift's first outputs from nearby small
 * seeds are nearly equal (seeds 1–4000 all drew one input array), so the seed is scrambled first.
 */
export const seeded = (seed: number): (() => number) => rng(Math.imul(seed, 0x9e3779b1) ^ 0x2545f491);

/** A number as kernel source: negatives in parentheses, `-0` written so, some integers in hex. */
function numberText(v: number, hex: boolean): string {
  if (Object.is(v, -0)) return "(-0)";
  if (hex && Number.isSafeInteger(v) && v > 0) return `0x${v.toString(16)}`;
  return v < 0 ? `(${v})` : String(v);
}

const shapeOf = (t: HostTuple): Shape => t.map((x) => (typeof x === "number" ? "s" : shapeOf(x)));

// ------------------------------------------------------------------ the kernel's parameters

/** A number for a scalar or tuple argument: integral (int32 or beyond), fractional, -0. */
function hostNumber(r: () => number): number {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const k = r();
  if (k < 0.4) return pick([0, 1, -1, 2, 3, 7, 100, -100, 16777217, 2147483647, -2147483648, 65537]);
  if (k < 0.8) return pick([0.5, -0.5, 0.1, 1 + 2 ** -25, 1 / 3, 2.5, 1e-3, -7.25, 3.4e38, 1e-42]);
  return pick([-0, 1e10, 2 ** 40 + 1, NaN, Infinity, -2147483649]);
}

function hostScalar(r: () => number): HostScalar {
  const k = r();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  if (k < 0.6) return { kind: "number", v: hostNumber(r) };
  if (k < 0.85) {
    const dtype = pick<ScalarName>(["float32", "float32", "float16", "bfloat16", "int16", "float64"]);
    const v = dtype === "int16" ? pick([0, 1, -5, 300, 32767, -32768]) : hostNumber(r);
    return { kind: "typed", dtype, v };
  }
  if (k < 0.95) return { kind: "bigint", v: pick([0n, 1n, -3n, 2n ** 31n, -(2n ** 40n), 123456789n]) };
  return { kind: "bool", v: r() < 0.5 };
}

function hostTuple(r: () => number, depth: number): HostTuple {
  const n = Math.floor(r() * 4);
  return Array.from({ length: n }, () => (depth > 0 && r() < 0.25 ? hostTuple(r, depth - 1) : hostNumber(r)));
}

/** The signature's item types for a tuple: its values' own types (by the host-scalar rule), or a float type they convert to. */
function tupleSpec(r: () => number, t: HostTuple): TupleSpec {
  return t.map((x) => {
    if (typeof x !== "number") return tupleSpec(r, x);
    const own: ScalarName = Number.isInteger(x) && x >= -(2 ** 31) && x < 2 ** 31 && !Object.is(x, -0) ? "int32" : "float64";
    const k = r();
    return k < 0.7 ? own : k < 0.85 ? "float32" : Number.isSafeInteger(x) ? "int64" : "float64";
  });
}

function arrayParam(r: () => number, name: string, dtype: ScalarName, role: ArrayParam["role"]): ArrayParam {
  const viewed = role !== "acc" && r() < 0.2;
  if (!viewed) return { kind: "array", name, dtype, role, layout: r() < 0.8 ? "C" : "A" };
  const stride = [2, 3, -1, -2, 1][Math.floor(r() * 5)]!;
  const span = (THREADS - 1) * Math.abs(stride) + 1;
  const before = Math.floor(r() * 5), after = Math.floor(r() * 5);
  const offset = stride < 0 ? before + span - 1 : before;
  return { kind: "array", name, dtype, role, layout: stride === 1 && r() < 0.5 ? "C" : "A", view: { stride, offset, total: before + span + after } };
}

/** Two of the arrays (one written at least) become the even and odd elements of one buffer. */
function interleave(r: () => number, params: FuzzParam[]): void {
  const pick = (js: number[]) => js[Math.floor(r() * js.length)]!;
  // the inputs and outputs so far: at least one of each
  const arrays = params.flatMap((p, j) => (p.kind === "array" ? [j] : []));
  const b = pick(arrays.filter((j) => (params[j] as ArrayParam).role === "out"));
  const a = pick(arrays.filter((j) => j !== b));
  const [x, y] = [Math.min(a, b), Math.max(a, b)];
  const first = params[x] as ArrayParam, second = params[y] as ArrayParam;
  const before = Math.floor(r() * 3), total = before + 2 * THREADS + Math.floor(r() * 3);
  params[x] = { ...first, layout: "A", view: { stride: 2, offset: before, total } };
  params[y] = { ...second, dtype: first.dtype, layout: "A", view: { stride: 2, offset: before + 1, total, shares: first.name } };
}

/** The kernel for a seed. */
export function generateKernel(seed: number): FuzzKernel {
  const r = seeded(seed * 2);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const params: FuzzParam[] = [];
  const nIn = 1 + Math.floor(r() * 3), nOut = 1 + Math.floor(r() * 3);
  for (let k = 0; k < nIn; k++) params.push(arrayParam(r, `in${k}`, pick(ARRAY_TYPES), "in"));
  for (let k = 0; k < nOut; k++) params.push(arrayParam(r, `out${k}`, pick(ARRAY_TYPES), "out"));
  if (r() < 0.15) interleave(r, params);
  params.push({ kind: "array", name: "acc", dtype: pick(ACC_TYPES), role: "acc", layout: "C" });
  params.push({ kind: "array", name: "pr", dtype: "float64", role: "probe", layout: "C" });
  const nScalars = r() < 0.35 ? 1 + Math.floor(r() * 2) : 0;
  for (let k = 0; k < nScalars; k++) params.push({ kind: "scalar", name: `s${k}`, arg: hostScalar(r) });
  if (r() < 0.25) {
    const value = hostTuple(r, 1);
    params.push({ kind: "tuple", name: "tp", value, spec: tupleSpec(r, value) });
  }
  // records go in a signature list, which has one signature: a kernel with them has no overloads
  const withRecords = r() < (nScalars ? 0.1 : 0.3);
  if (withRecords) {
    const fields = Array.from({ length: 2 + Math.floor(r() * 2) }, (_, j) => ({ name: `f${j}`, dtype: pick(ARRAY_TYPES), written: r() < 0.6 }));
    if (!fields.some((f) => f.written)) fields[0] = { ...fields[0]!, written: true };
    params.push({ kind: "records", name: "rec", fields, form: r() < 0.5 ? "objects" : "recordArray" });
  }
  const nOverloads = nScalars && !withRecords ? 1 + Math.floor(r() * 3) : 1;
  const overloads = Array.from({ length: nOverloads }, () => Array.from({ length: nScalars }, () => pick(SCALAR_PARAM_TYPES)));
  const block = pick([32, 64]);
  const shared = r() < 0.5 ? pick(ARRAY_TYPES) : undefined;
  const g = new Gen(seed, params, block, r() < 0.15, shared);
  const s = newScope();
  const lines = ["const i = cuda.grid(1);"];
  if (shared) lines.push(`const sh = cuda.shared.array(${block}, ${shared});`);
  lines.push(...g.parameterProbes(), ...g.conversionProbes());
  lines.push(...g.statements(3, s, 4 + Math.floor(r() * 8), true, false));
  // the last writes add to what earlier statements stored, or replace it
  const op = () => (r() < 0.5 ? "+=" : "=");
  for (const p of params) {
    if (p.kind === "array" && p.role === "out") lines.push(`${p.name}[i] ${op()} ${g.expr(3, s, true)};`);
    if (p.kind === "records") for (const f of p.fields.filter((x) => x.written)) lines.push(`${p.name}[i].${f.name} ${op()} ${g.expr(3, s, true)};`);
  }
  const source = `(${params.map((p) => p.name).join(", ")}) => {\n  // seed ${seed}\n  ${lines.join("\n  ")}\n}`;
  const features = new Set(g.features);
  const used = (t: ScalarName) => params.some((p) => (p.kind === "array" && p.dtype === t) || (p.kind === "records" && p.fields.some((f) => f.dtype === t)) || (p.kind === "scalar" && p.arg.kind === "typed" && p.arg.dtype === t)) || shared === t || overloads.some((o) => o.includes(t));
  if (used("bfloat16")) features.add("bfloat16");
  if (nOverloads > 1) features.add("signatures");
  if (params.some((p) => p.kind === "array" && p.view)) features.add("views");
  if (params.some((p) => p.kind === "tuple")) features.add("tuples");
  if (withRecords) features.add("records");
  return {
    seed, source, devices: g.devices.map(({ name, source: src }) => ({ name, source: src })), params, overloads, block,
    fma: r() < 0.2, transcendental: g.transcendental, atomics: g.atomics, features: FEATURES.filter((f) => features.has(f)),
  };
}
