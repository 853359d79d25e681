// Exact floating-point helpers (a numeric leaf: the simulator, its runtime and the math library use them).
//
// fma with a single rounding, as the GPU's fma.rn does. JavaScript only has
// double arithmetic, so:
//  - float32/float16: the double product of two narrow floats is exact; the
//    sum p + c is formed with an error-free TwoSum and rounded to odd in
//    double, which then rounds to the narrow format without double-rounding
//    error (Boldo & Melquiond, IEEE TC 57(4), 2008: rounding to odd at
//    p + 2 bits or more is safe to round to nearest at p bits).
//  - float64: Dekker/Veltkamp TwoProduct, TwoSum, round-to-odd of the low
//    parts, one final rounding (the same paper's emulated FMA). Where that
//    proof's no-overflow/no-underflow conditions may fail, an exact BigInt
//    computation decides.

import { float16Round } from "./half.js";

// little-endian word views of one double: W[0] low 32 bits, W[1] high 32 bits
const F = new Float64Array(1);
const W = new Uint32Array(F.buffer);

/** The double nearest to s + e rounded to odd, given s = fl(s + e) and e its exact error. */
function roundToOdd(s: number, e: number): number {
  if (e === 0) return s;
  F[0] = s;
  const lo = W[0]!;
  if ((lo & 1) === 1) return s;
  // s is even and inexact: the exact value lies between s and its neighbour
  // toward e, which is odd. s is never 0 here (a TwoSum of 0 is exact).
  if (e > 0 === s > 0) W[0] = lo + 1; // lo is even: no carry
  else if (lo === 0) { W[0] = 0xffffffff; W[1] = W[1]! - 1; } else W[0] = lo - 1;
  return F[0]!;
}

/** fma for operands of a narrow float format whose products are exact in double. */
function fmaNarrow(a: number, b: number, c: number, round: (x: number) => number): number {
  const p = a * b;
  const s = p + c;
  if (!Number.isFinite(s)) return round(s);
  const bb = s - p;
  const e = (p - (s - bb)) + (c - bb);
  return round(roundToOdd(s, e));
}

/** float32 a*b+c with one rounding (operands must be float32 values). */
export const fma32 = (a: number, b: number, c: number): number => fmaNarrow(a, b, c, Math.fround);

/** float16 a*b+c with one rounding (operands must be float16 values). */
export const fma16 = (a: number, b: number, c: number): number => fmaNarrow(a, b, c, float16Round);

const SPLITTER = 134217729; // 2^27 + 1
const BIG = 2 ** 995;
const TINY = 2 ** -960;

/** float64 a*b+c with one rounding. */
export function fma64(a: number, b: number, c: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a * b + c;
  if (!Number.isFinite(c)) return c; // a finite product cannot change ±inf or NaN
  if (a === 0 || b === 0) return a * b + c; // the product is an exact ±0
  if (c === 0) return a * b; // one rounding of the exact product
  const uh = a * b;
  const au = Math.abs(uh);
  if (au > BIG || au < TINY || Math.abs(a) > BIG || Math.abs(b) > BIG || Math.abs(c) > BIG) return fmaExact(a, b, c);
  // TwoProduct: uh + ul = a*b exactly
  let t = SPLITTER * a;
  const ah = t - (t - a), al = a - ah;
  t = SPLITTER * b;
  const bh = t - (t - b), bl = b - bh;
  const ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl;
  // TwoSum: th + tl = c + uh exactly
  const th = c + uh;
  let bb = th - c;
  const tl = (c - (th - bb)) + (uh - bb);
  // v = RO(tl + ul)
  const s = tl + ul;
  bb = s - tl;
  const v = roundToOdd(s, (tl - (s - bb)) + (ul - bb));
  const z = th + v;
  if (Math.abs(z) < TINY) return fmaExact(a, b, c);
  return z;
}

/** a*b+c exactly in BigInt, then rounded once (finite nonzero a, b, c). */
function fmaExact(a: number, b: number, c: number): number {
  const x = decompose(a), y = decompose(b), z = decompose(c);
  const pe = x.e + y.e;
  const e = Math.min(pe, z.e);
  const sum = ((x.m * y.m) << BigInt(pe - e)) + (z.m << BigInt(z.e - e));
  return sum === 0n ? 0 : roundScaled(sum, e);
}

/** x = m * 2^e exactly, for a finite x. */
export function decompose(x: number): { m: bigint; e: number } {
  F[0] = x;
  const hi = W[1]!, lo = W[0]!;
  const exp = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (exp !== 0) m |= 1n << 52n;
  if (hi >>> 31) m = -m;
  return { m, e: exp === 0 ? -1074 : exp - 1075 };
}

export const bitLength = (n: bigint): number => (n === 0n ? 0 : n.toString(2).length);

/** The double nearest (ties to even) to n * 2^e. */
export function roundScaled(n: bigint, e: number): number {
  const neg = n < 0n;
  const a = neg ? -n : n;
  const shift = Math.max(bitLength(a) - 53, -1074 - e);
  let r: number;
  if (shift <= 0) {
    r = Number(a) * 2 ** e;
  } else {
    const sh = BigInt(shift);
    let q = a >> sh;
    const rem = a - (q << sh), half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
    r = Number(q) * 2 ** (e + shift);
  }
  return neg ? -r : r;
}

/**
 * A double that rounds to the same float32/float16 as the integer x would:
 * x itself when exact, else x rounded to odd at 53 bits (so a second rounding
 * to a narrower format is correct).
 */
export function bigToOddDouble(x: bigint): number {
  const neg = x < 0n;
  const a = neg ? -x : x;
  const len = bitLength(a);
  if (len <= 53) return Number(x);
  const sh = BigInt(len - 53);
  let q = a >> sh;
  if (q << sh !== a) q |= 1n;
  const r = Number(q) * 2 ** (len - 53);
  return neg ? -r : r;
}

/** sign bit of a double (true for -0 and negative NaNs) */
export function signBit(x: number): boolean {
  F[0] = x;
  return W[1]! >>> 31 === 1;
}

export const copysign = (a: number, b: number): number => (signBit(b) ? -Math.abs(a) : Math.abs(a));

/** round half to even, keeping the sign of zero (C rint) */
export function rint(x: number): number {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x), d = x - f;
  const r = d < 0.5 ? f : d > 0.5 ? f + 1 : f % 2 === 0 ? f : f + 1;
  return r === 0 ? (signBit(x) ? -0 : 0) : r;
}
