// A reference evaluator for generated kernels, independent of the compiler:
// it walks the kernel's own AST (acorn) once per thread, with the documented
// semantics of docs/language.md and docs/decisions.md written out directly:
// BigInt for 64-bit integers, Math.fround for float32, float16 rounding on
// conversion, weak literals and C's promotion.
//
// Threads of a block run in lockstep one top-level statement at a time, so
// shared memory between barriers, warp operations and block votes (which the
// generator puts only at the top level) see every thread at the same point.
//
// Not modelled (the runner then compares the simulator with PTX only):
// contraction of a*b+c into fma (`fma: true` kernels' float results) and the
// math library's transcendental functions.

import * as acorn from "acorn";
import { float16Round, type ScalarName } from "../../src/dtypes.js";
import type { FuzzKernel } from "./generate.js";

type Weak = "int" | "float";
interface Val { readonly t: ScalarName; readonly v: number | bigint; readonly weak?: Weak }
// acorn's ESTree nodes, read by their documented fields
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Node = any;

const BITS: Record<ScalarName, number> = { bool: 1, int8: 8, uint8: 8, int16: 16, uint16: 16, int32: 32, uint32: 32, int64: 64, uint64: 64, float16: 16, bfloat16: 16, float32: 32, float64: 64 };
const RANK: Record<ScalarName, number> = { bool: 0, int8: 1, uint8: 1, int16: 2, uint16: 2, float16: 2, bfloat16: 2, int32: 3, uint32: 3, float32: 3, int64: 4, uint64: 4, float64: 4 };
const isFloat = (t: ScalarName) => t === "float16" || t === "float32" || t === "float64";
const isSigned = (t: ScalarName) => t.startsWith("int");
const is64 = (t: ScalarName) => t === "int64" || t === "uint64";

// ------------------------------------------------------------------ types (docs/language.md "Literals and promotion")

function promoteOne(t: ScalarName): ScalarName {
  if (t === "float16") return "float32";
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

/** The type of `a op b` where at most one is a weak literal, which takes the other's type (a float literal next to an integer: float64). */
function common(a: Val, b: Val): ScalarName {
  const adapt = (w: Weak, o: ScalarName) => (w === "int" ? promoteOne(o) : isFloat(promoteOne(o)) ? promoteOne(o) : "float64");
  if (a.weak && !b.weak) return promote(adapt(a.weak, b.t), b.t);
  if (b.weak && !a.weak) return promote(a.t, adapt(b.weak, a.t));
  return promote(a.t, b.t);
}

function literal(v: number): Val {
  if (Number.isInteger(v) && !Object.is(v, -0) && Math.abs(v) < 2 ** 63) {
    // only an int32 literal is weak: a larger one keeps its type (uint32, else int64) rather than wrap to the other operand's
    if (v >= -(2 ** 31) && v < 2 ** 31) return { t: "int32", v, weak: "int" };
    return v >= 0 && v < 2 ** 32 ? { t: "uint32", v } : { t: "int64", v: BigInt(v) };
  }
  return { t: "float64", v, weak: "float" };
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

export function convert(a: Val, t: ScalarName): Val {
  if (a.t === t && !a.weak) return a;
  const { v } = a;
  if (t === "bool") return { t, v: (typeof v === "bigint" ? v !== 0n : v !== 0) ? 1 : 0 };
  if (isFloat(t)) {
    if (t === "float64") return { t, v: toNumber(a) };
    const f32 = typeof v === "bigint" ? bigToFloat32(v) : Math.fround(v);
    if (t === "float32") return { t, v: f32 };
    // to float16: one rounding from the exact value (ints and float32 are exact in float64; a bigint past 2^53 overflows float16 anyway)
    return { t, v: float16Round(typeof v === "bigint" ? Number(v) : v) };
  }
  if (isFloat(a.t) || (a.weak === "float")) return { t, v: floatToInt(v as number, t) };
  return { t, v: wrapInt(BigInt(v), t) };
}

// ------------------------------------------------------------------ operators

const roundTo = (t: ScalarName, x: number) => (t === "float32" ? Math.fround(x) : x);

function arith(op: string, a: Val, b: Val): Val {
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
      return { t, v: wrapInt(bitop(op, BigInt(convert(x, t).v), BigInt(convert(y, t).v)), t) };
    }
    case "<<": case ">>": case ">>>": {
      const x = int32IfFloat(a);
      let t = promoteOne(x.t);
      if (op === ">>>") t = BITS[t] === 64 ? "uint64" : "uint32";
      else if (op === ">>" && t === "uint32" && x.weak) t = "int32";
      const n = BigInt(Number(convert(b, "int32").v) & (BITS[t] - 1));
      const xv = BigInt(convert(x, t).v);
      return { t, v: wrapInt(op === "<<" ? xv << n : xv >> n, t) };
    }
    case "/": {
      let t = common(a, b);
      if (!isFloat(t) && !is64(t)) t = "float64";
      if (is64(t)) return intDiv(convert(a, t), convert(b, t), t, false);
      return { t, v: roundTo(t, toNumber(convert(a, t)) / toNumber(convert(b, t))) };
    }
    case "%": {
      const t = common(a, b);
      const x = convert(a, t).v, y = convert(b, t).v;
      if (isFloat(t)) return { t, v: roundTo(t, (x as number) % (y as number)) };
      const X = BigInt(x), Y = BigInt(y);
      return { t, v: wrapInt(Y === 0n ? 0n : X % Y, t) };
    }
    case "+": case "-": case "*": {
      const t = common(a, b);
      const x = convert(a, t).v, y = convert(b, t).v;
      if (isFloat(t)) {
        const X = x as number, Y = y as number;
        return { t, v: roundTo(t, op === "+" ? X + Y : op === "-" ? X - Y : X * Y) };
      }
      const X = BigInt(x), Y = BigInt(y);
      return { t, v: wrapInt(op === "+" ? X + Y : op === "-" ? X - Y : X * Y, t) };
    }
  }
  throw new Error(`reference: operator ${op}`);
}

/** `x ** 2` (the only power generated): x * x in x's float type, float64 for integers. */
function square(a: Val): Val {
  const t = isFloat(a.t) && !a.weak ? promoteOne(a.t) : "float64";
  const x = toNumber(convert(a, t));
  return { t, v: roundTo(t, x * x) };
}

function bitop(op: string, x: bigint, y: bigint): bigint {
  return op === "&" ? x & y : op === "|" ? x | y : x ^ y;
}

function int32IfFloat(a: Val): Val {
  if (!isFloat(a.t)) return a;
  const c = convert({ t: a.t, v: a.v }, "int32");
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

// ------------------------------------------------------------------ threads

interface Thread {
  readonly tid: number;
  readonly block: number;
  scopes: Map<string, Binding>[];
}
type Binding = { kind: "val"; val: Val } | { kind: "array"; data: Val[]; dtype: ScalarName };

class Break { constructor(readonly kind: "break" | "continue") {} }
class Return { constructor(readonly val: Val) {} }

export interface ReferenceArrays { readonly [name: string]: Val[] }

/** Runs the kernel on `arrays` (each parameter's contents as typed values), in place. */
export class Reference {
  private readonly arrays: Map<string, { data: Val[]; dtype: ScalarName }>;
  private readonly devices: Map<string, Node>;
  private readonly blockDim: number;
  /** per block: the shared array */
  private shared: Val[] = [];

  constructor(private readonly k: FuzzKernel, arrays: Map<string, { data: Val[]; dtype: ScalarName }>) {
    this.arrays = arrays;
    this.blockDim = k.block;
    this.devices = new Map(k.devices.map((d) => [d.name, (acorn.parse(d.source, { ecmaVersion: "latest" }) as Node).body[0]]));
  }

  run(threads: number): void {
    const fn = (acorn.parse(`(${this.k.source})`, { ecmaVersion: "latest" }) as Node).body[0].expression;
    for (let b = 0; b < threads / this.blockDim; b++) {
      const ts: Thread[] = Array.from({ length: this.blockDim }, (_, tid) => ({ tid, block: b, scopes: [new Map()] }));
      this.shared = [];
      for (const st of fn.body.body) this.collective(st, ts);
    }
  }

  /** A top-level statement, run by every thread of the block before the next. */
  private collective(st: Node, ts: Thread[]): void {
    const call = st.type === "VariableDeclaration" ? unwrapCast(st.declarations[0].init) : st.type === "ExpressionStatement" ? st.expression : undefined;
    const name = call?.type === "CallExpression" ? memberName(call.callee) : "";
    if (/^cuda\.(shfl|ballot|all|any|eq|match|activemask|syncthreads)/.test(name)) {
      const argVals = ts.map((t) => call.arguments.map((a: Node) => this.expr(a, t)));
      const results = ts.map((t, j) => this.groupOp(name, argVals, j));
      if (st.type === "VariableDeclaration") ts.forEach((t, j) => this.declare(st, t, results[j]!));
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

  private declare(st: Node, t: Thread, warpResult: Val): void {
    const d = st.declarations[0];
    const init = d.init;
    // `let w = T(cuda.op(...))`: the cast around the group operation's result
    const v = init.type === "CallExpression" && init.callee.type === "Identifier" ? convert(warpResult, init.callee.name) : warpResult;
    t.scopes.at(-1)!.set(d.id.name, { kind: "val", val: v });
  }

  // ---------------------------------------------------------------- statements

  private stmt(st: Node, t: Thread): void {
    switch (st.type) {
      case "VariableDeclaration":
        for (const d of st.declarations) {
          const init = d.init;
          if (init.type === "CallExpression" && memberName(init.callee) === "cuda.local.array") {
            const dtype = init.arguments[1].name as ScalarName;
            t.scopes.at(-1)!.set(d.id.name, { kind: "array", dtype, data: Array.from({ length: init.arguments[0].value }, () => ({ t: dtype, v: 0 })) });
          } else if (init.type === "CallExpression" && memberName(init.callee) === "cuda.shared.array") {
            const dtype = init.arguments[1].name as ScalarName;
            t.scopes.at(-1)!.set(d.id.name, { kind: "array", dtype, data: this.shared });
          } else {
            let v = this.expr(init, t);
            // a const bound to a literal is a named literal and stays weak; a let has the literal's own type
            if (v.weak && !(st.kind === "const" && isLiteral(init))) v = convert({ t: v.t, v: v.v }, v.t);
            t.scopes.at(-1)!.set(d.id.name, { kind: "val", val: v });
          }
        }
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
    const a = this.arrays.get(name);
    if (a) return { kind: "array", ...a };
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
    const { data, dtype, index } = this.element(target, t);
    data[index] = convert(v, dtype);
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
    const arr = this.arrays.get(e.arguments[0].name)!;
    const old = arr.data[idx]!;
    const v = convert(this.expr(e.arguments[2], t), arr.dtype);
    if (isFloat(arr.dtype)) { arr.data[idx] = { t: arr.dtype, v: floatAtomic(op, arr.dtype, old.v as number, v.v as number) }; return; }
    const x = BigInt(old.v), y = BigInt(v.v);
    const r = op === "add" ? x + y : op === "sub" ? x - y : op === "and" ? x & y : op === "or" ? x | y : op === "xor" ? x ^ y : op === "max" ? (x > y ? x : y) : x < y ? x : y;
    arr.data[idx] = { t: arr.dtype, v: wrapInt(r, arr.dtype) };
  }

  // ---------------------------------------------------------------- expressions

  expr(n: Node, t: Thread): Val {
    switch (n.type) {
      case "Literal":
        if (typeof n.value === "bigint") return { t: "int64", v: BigInt.asIntN(64, n.value) };
        if (typeof n.value === "boolean") return { t: "bool", v: n.value ? 1 : 0 };
        return literal(n.value);
      case "Identifier": {
        const b = this.lookup(t, n.name);
        if (b.kind !== "val") throw new Error(`reference: ${n.name} is an array`);
        return b.val;
      }
      case "MemberExpression": {
        const name = memberName(n);
        const special: Record<string, number> = { "cuda.threadIdx.x": t.tid, "cuda.blockIdx.x": t.block, "cuda.laneid": t.tid & 31, "cuda.blockDim.x": this.blockDim };
        if (name in special) return { t: "int32", v: special[name]! };
        if (name.startsWith("Math.")) return { t: "float64", v: Math[name.slice(5) as "PI"], weak: "float" };
        const { data, index } = this.element(n, t);
        return data[index]!;
      }
      case "UnaryExpression": return this.unary(n, t);
      case "BinaryExpression": {
        if (n.operator === "**") return square(this.expr(n.left, t));
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
        const c = truthy(this.expr(n.test, t));
        const a = this.expr(n.consequent, t), b = this.expr(n.alternate, t);
        const ty = a.t === "bool" && b.t === "bool" ? "bool" : common(a, b);
        return convert(c ? a : b, ty);
      }
      case "CallExpression": return this.call(n, t);
    }
    throw new Error(`reference: expression ${n.type}`);
  }

  private unary(n: Node, t: Thread): Val {
    if (n.operator === "-" && n.argument.type === "Literal") {
      return typeof n.argument.value === "bigint" ? { t: "int64", v: -n.argument.value } : literal(-n.argument.value);
    }
    const a = this.expr(n.argument, t);
    switch (n.operator) {
      case "!": return { t: "bool", v: truthy(a) ? 0 : 1 };
      case "+": return a.t === "bool" ? convert(a, "int32") : a;
      case "-": {
        const rt = a.weak ? a.t : promoteOne(a.t);
        const x = convert(a, rt);
        return { t: rt, v: isFloat(rt) ? -(x.v as number) : wrapInt(-BigInt(x.v), rt), weak: a.weak };
      }
      case "~": {
        const rt = isFloat(a.t) ? "int32" : promoteOne(a.t);
        return { t: rt, v: wrapInt(~BigInt(convert(a, rt).v), rt), weak: a.weak && "int" };
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
    return intDiv(convert(a, ty), convert(b, ty), ty, floor);
  }

  private call(n: Node, t: Thread): Val {
    const callee = n.callee;
    const args = () => n.arguments.map((a: Node) => this.expr(a, t)) as Val[];
    if (callee.type === "Identifier") {
      if (callee.name in BITS) return convert(this.expr(n.arguments[0], t), callee.name as ScalarName);
      const d = this.devices.get(callee.name);
      if (!d) throw new Error(`reference: unknown function ${callee.name}`);
      return this.device(d, args(), t);
    }
    const name = memberName(callee);
    switch (name) {
      case "cuda.grid": return { t: "int32", v: t.block * this.blockDim + t.tid };
      case "Math.floor": case "Math.trunc": {
        const d = this.intDivision(n.arguments[0], t, name === "Math.floor");
        if (d) return d;
        return roundingMath(name, args()[0]!);
      }
      case "Math.ceil": case "Math.round": case "Math.abs": case "Math.sqrt": return roundingMath(name, args()[0]!);
      case "Math.min": case "Math.max": return args().reduce((a, b) => minmax(name === "Math.min", a, b));
      case "Math.sign": {
        const a = args()[0]!;
        const ty = promoteOne(a.t);
        const x = convert(a, ty).v;
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

  private device(fn: Node, args: Val[], t: Thread): Val {
    const scope = new Map<string, Binding>();
    fn.params.forEach((p: Node, j: number) => {
      const a = args[j]!;
      scope.set(p.name, { kind: "val", val: a.weak ? convert({ t: a.t, v: a.v }, a.t) : a });
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

const isLiteral = (n: Node): boolean => n.type === "Literal" || (n.type === "UnaryExpression" && n.operator === "-" && n.argument.type === "Literal") || (n.type === "MemberExpression" && memberName(n.object) === "Math");

function unwrapCast(n: Node): Node {
  return n?.type === "CallExpression" && n.callee.type === "Identifier" && n.arguments.length === 1 ? n.arguments[0] : n;
}

function memberName(n: Node): string {
  if (n.type === "Identifier") return n.name;
  if (n.type === "MemberExpression" && !n.computed) return `${memberName(n.object)}.${n.property.name}`;
  return "";
}

function roundingMath(name: string, a: Val): Val {
  const f = name.slice(5);
  if (!isFloat(a.t) && a.weak !== "float") {
    if (f === "abs") { const ty = promoteOne(a.t); const x = BigInt(convert(a, ty).v); return { t: ty, v: wrapInt(x < 0n ? -x : x, ty) }; }
    if (f !== "sqrt") return a.weak ? a : convert(a, promoteOne(a.t));
  }
  const ft = a.weak || a.t === "float64" || !isFloat(a.t) ? "float64" : "float32";
  const x = toNumber(convert(a, ft));
  const r = f === "floor" ? Math.floor(x) : f === "ceil" ? Math.ceil(x) : f === "trunc" ? Math.trunc(x) : f === "round" ? Math.round(x) : f === "abs" ? Math.abs(x) : Math.sqrt(x);
  return { t: ft, v: roundTo(ft, r) };
}

/** JavaScript's Math.min/max: NaN if either is NaN, -0 below +0. */
function minmax(min: boolean, a: Val, b: Val): Val {
  const t = common(a, b);
  const x = convert(a, t).v, y = convert(b, t).v;
  if (!isFloat(t)) return { t, v: (min ? x < y : x > y) ? x : y };
  return { t, v: (min ? Math.min : Math.max)(x as number, y as number) };
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
