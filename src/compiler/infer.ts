// The typing rules of docs/language.md: weak literals and CUDA C++ promotion.
// Pure functions over dtypes; the lowering applies them and inserts casts.

import { DTYPE_INFO, isFloat, isInteger, isSigned, type ScalarName } from "../dtypes.js";
import { isHalfFloat } from "../half.js";

/** A literal whose type yields to the other operand's, by its value ('int': `1`, also written `1.0`; 'float': `0.5`). */
export type Weak = "int" | "float";

/** The weakness of a result of two operands: weak only when both are, and a float when either is. */
export const bothWeak = (a: Weak | undefined, b: Weak | undefined): Weak | undefined => (a && b ? (a === "float" || b === "float" ? "float" : "int") : undefined);

/** The type a weak literal takes on its own. */
export const weakDefault = (w: Weak): ScalarName => (w === "int" ? "int32" : "float64");

/** the conversion rank of the usual arithmetic conversions */
const rank = (t: ScalarName): number => DTYPE_INFO[t].rank;

/** Integer promotion: anything narrower than int32 (incl. bool) becomes int32; float16 and bfloat16 compute as float32. */
export function promoteOne(t: ScalarName): ScalarName {
  if (isHalfFloat(t)) return "float32";
  if (t === "bool" || (isInteger(t) && DTYPE_INFO[t].bits < 32)) return "int32";
  return t;
}

/** Usual arithmetic conversions of C/CUDA C++ for two operand types. */
export function promote(a: ScalarName, b: ScalarName): ScalarName {
  const x = promoteOne(a);
  const y = promoteOne(b);
  if (x === y) return x;
  if (isFloat(x) || isFloat(y)) {
    if (x === "float64" || y === "float64") return "float64";
    return "float32";
  }
  if (isSigned(x) === isSigned(y)) return rank(x) >= rank(y) ? x : y;
  const [s, u] = isSigned(x) ? [x, y] : [y, x];
  if (rank(u) >= rank(s)) return u;
  // the signed type is wider: it holds every value of the unsigned one (int64 vs uint32)
  return s;
}

/**
 * The type of a `let` that holds values of types `a` and `b`, as Numba unifies a variable's types
 * (docs/language.md, "Locals"): integers of one signedness join to the wider; mixed signedness to the
 * smallest signed type that holds both (int32 ∪ uint32 is int64), float64 when none does (int64 ∪
 * uint64); bool with an integer to that integer; floats to the wider float; an integer (bool included)
 * with any float to float64, as an untyped JS number is a double.
 */
export function join(a: ScalarName, b: ScalarName): ScalarName {
  if (a === b) return a;
  const af = isFloat(a), bf = isFloat(b);
  if (af && bf) return isHalfFloat(a) && isHalfFloat(b) ? "float32" : rank(a) >= rank(b) ? a : b;
  if (af || bf) return "float64";
  if (a === "bool" || b === "bool") return a === "bool" ? b : a;
  if (isSigned(a) === isSigned(b)) return rank(a) >= rank(b) ? a : b;
  const [s, u] = isSigned(a) ? [a, b] : [b, a];
  const bits = Math.max(DTYPE_INFO[s].bits, 2 * DTYPE_INFO[u].bits);
  return SIGNED_OF_WIDTH[bits] ?? "float64";
}

const SIGNED_OF_WIDTH: Readonly<Partial<Record<number, ScalarName>>> = { 8: "int8", 16: "int16", 32: "int32", 64: "int64" };

/** The type a weak literal takes next to an operand of type `other`. */
export function adaptWeak(w: Weak, other: ScalarName): ScalarName {
  const o = promoteOne(other);
  if (w === "int") return o;
  return isFloat(o) ? o : "float64";
}

/** Result type of a binary arithmetic operation, honouring weak literals. */
export function binaryType(a: ScalarName, aw: Weak | undefined, b: ScalarName, bw: Weak | undefined): ScalarName {
  if (aw && bw) return promote(a, b);
  if (aw) return promote(adaptWeak(aw, b), b);
  if (bw) return promote(a, adaptWeak(bw, a));
  return promote(a, b);
}

/** Type of an integer literal's value: int32, else uint32 if it fits, else int64. */
export function integerLiteralType(v: number): ScalarName {
  if (v >= -(2 ** 31) && v < 2 ** 31) return "int32";
  if (v >= 0 && v < 2 ** 32) return "uint32";
  return "int64";
}

/** The float type arithmetic on `t` uses (ints go to float64, as JS numbers are doubles). */
export const floatTypeOf = (t: ScalarName): ScalarName => (t === "float32" || isHalfFloat(t) ? "float32" : "float64");
