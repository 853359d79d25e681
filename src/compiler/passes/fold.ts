// Constant folding with the IR's exact semantics (ir.ts), so a folded
// expression gives the bits the targets would have computed.

import { DTYPE_INFO, isBigInt, isFloat, roundToFloat, type ScalarName } from "../../dtypes.js";
import { bigToOddDouble } from "../../fp.js";
import type { BinaryOp, CompareOp, ConstExpr, Expr, UnaryOp } from "../ir.js";
import { constExpr } from "../ir.js";
import { compareValues } from "../walk.js";

type Scalar = number | bigint | boolean;

/** Folds `e` if all its operands are constants; otherwise returns it unchanged. */
export function foldExpr(e: Expr): Expr {
  switch (e.k) {
    case "cast": return e.x.k === "const" ? constExpr(e.type, castValue(e.type, e.x.type, e.x.value)) : e;
    case "unary": {
      if (e.x.k !== "const") return e;
      const v = unaryValue(e.op, e.type, e.x.type, e.x.value);
      return v === undefined ? e : constExpr(e.type, v);
    }
    case "binary": {
      if (e.a.k !== "const" || e.b.k !== "const") return e;
      const v = binaryValue(e.op, e.type, e.a.value, e.b.value);
      return v === undefined ? e : constExpr(e.type, v);
    }
    case "compare": return e.a.k === "const" && e.b.k === "const" ? constExpr("bool", compareValues(e.op, e.a.value, e.b.value)) : e;
    case "logical": {
      if (e.a.k !== "const") return e;
      const a = e.a.value as boolean;
      if (e.op === "and") return a ? e.b : e.a;
      return a ? e.a : e.b;
    }
    case "select": return e.cond.k === "const" ? (e.cond.value ? e.a : e.b) : e;
    default: return e;
  }
}

/** A scalar value rounded or wrapped to dtype `t` (the value is already of a numeric kind). */
function fit(t: ScalarName, v: number | bigint): number | bigint {
  const info = DTYPE_INFO[t];
  if (info.cls === "float") return roundToFloat(t, Number(v));
  const big = typeof v === "bigint" ? v : BigInt(v);
  const w = info.cls === "int" ? BigInt.asIntN(info.bits, big) : BigInt.asUintN(info.bits, big);
  return isBigInt(t) ? w : Number(w);
}

/** ir.ts CastExpr: float→int truncates and saturates (NaN → 0); →bool is `!= 0`. */
export function castValue(to: ScalarName, from: ScalarName, v: Scalar): Scalar {
  if (to === "bool") return typeof v === "boolean" ? v : typeof v === "bigint" ? v !== 0n : v !== 0;
  const n = typeof v === "boolean" ? (v ? 1 : 0) : v;
  // a 64-bit integer rounds once to a narrower float: through a double rounded to odd, as the targets do
  if (isFloat(to)) return fit(to, typeof n === "bigint" && to !== "float64" ? bigToOddDouble(n) : Number(n));
  if (isFloat(from)) {
    const x = Number(n);
    if (Number.isNaN(x)) return fit(to, 0);
    const info = DTYPE_INFO[to];
    const lo = info.cls === "int" ? -(2n ** BigInt(info.bits - 1)) : 0n;
    const hi = info.cls === "int" ? 2n ** BigInt(info.bits - 1) - 1n : 2n ** BigInt(info.bits) - 1n;
    if (!Number.isFinite(x)) return fit(to, x > 0 ? hi : lo);
    let b = BigInt(Math.trunc(x));
    if (b < lo) b = lo;
    if (b > hi) b = hi;
    return fit(to, b);
  }
  return fit(to, n);
}

/** `t` is the result's type, `operand` the operand's (they differ for isnan/isfinite/isinf: float → bool) */
function unaryValue(op: UnaryOp, t: ScalarName, operand: ScalarName, v: Scalar): Scalar | undefined {
  if (op === "not") return !v;
  if (typeof v === "boolean") return undefined;
  if (isFloat(operand)) {
    const x = Number(v);
    const f: Partial<Record<UnaryOp, (x: number) => Scalar>> = {
      neg: (x) => -x, abs: Math.abs, sqrt: Math.sqrt, floor: Math.floor, ceil: Math.ceil, trunc: Math.trunc, round: Math.round,
      isnan: Number.isNaN, isfinite: Number.isFinite, isinf: (x) => x === Infinity || x === -Infinity,
    };
    const r = f[op]?.(x);
    if (r === undefined) return undefined;
    return typeof r === "boolean" ? r : fit(t, r);
  }
  const b = BigInt(v);
  if (op === "neg") return fit(t, -b);
  if (op === "bitnot") return fit(t, ~b);
  if (op === "abs") return fit(t, b < 0n ? -b : b);
  return undefined;
}

const FLOAT_BINARY: Partial<Record<BinaryOp, (a: number, b: number) => number>> = {
  add: (a, b) => a + b, sub: (a, b) => a - b, mul: (a, b) => a * b, div: (a, b) => a / b, rem: (a, b) => a % b,
  min: Math.min, max: Math.max,
};

function binaryValue(op: BinaryOp, t: ScalarName, a: Scalar, b: Scalar): Scalar | undefined {
  if (t === "bool") {
    const x = Boolean(a), y = Boolean(b);
    return op === "and" ? x && y : op === "or" ? x || y : op === "xor" ? x !== y : undefined;
  }
  if (isFloat(t)) {
    const f = FLOAT_BINARY[op];
    return f ? fit(t, f(Number(a), Number(b))) : undefined;
  }
  const x = BigInt(a as number | bigint), y = BigInt(b as number | bigint);
  const bits = BigInt(DTYPE_INFO[t].bits);
  switch (op) {
    case "add": return fit(t, x + y);
    case "sub": return fit(t, x - y);
    case "mul": return fit(t, x * y);
    case "div": return fit(t, y === 0n ? 0n : x / y);
    case "rem": return fit(t, y === 0n ? 0n : x % y);
    case "floordiv": {
      if (y === 0n) return fit(t, 0n);
      const q = x / y;
      return fit(t, q * y !== x && (x < 0n) !== (y < 0n) ? q - 1n : q);
    }
    case "and": return fit(t, x & y);
    case "or": return fit(t, x | y);
    case "xor": return fit(t, x ^ y);
    case "shl": return fit(t, x << BigInt.asUintN(64, y) % bits);
    case "shr": return fit(t, x >> BigInt.asUintN(64, y) % bits);
    case "min": return fit(t, x < y ? x : y);
    case "max": return fit(t, x > y ? x : y);
    default: return undefined;
  }
}
