// log, log2, log10, log1p (float64), in the numbats kernel language.
//
// Algorithm (fdlibm e_log.c / e_log2.c / s_log1p.c, Sun Microsystems 1993):
// x = 2^k·(1 + f) with √½ ≤ 1 + f < √2; log(1 + f) = f − f²/2 + s·(f²/2 + R(s²)),
// s = f/(2 + f), R a degree-14 even minimax polynomial (Lg1..Lg7, fdlibm's
// published coefficients, error < 2^-58.45). log2/log10 split f − f²/2 into a
// 21-bit head and a tail so the head times the 21-bit head of 1/ln2 (1/ln10)
// is exact; the split constants come from test/fixtures/mathlib/gen.py.

import { __f64hi, __f64lo, __f64make } from "./bits.js";

/** k with x = 2^k·m, √½ ≤ m < √2, for normal positive x. */
export function __logK(x: number): number {
  const hx = __f64hi(x);
  const i = ((hx & 0xfffff) + 0x95f64) & 0x100000; // set when m would be ≥ √2
  return ((hx >> 20) - 1023) + (i >> 20);
}

/** f = m − 1 with x = 2^k·m, √½ ≤ m < √2, for normal positive x (exact). */
export function __logF(x: number): number {
  const hx = __f64hi(x);
  const i = ((hx & 0xfffff) + 0x95f64) & 0x100000;
  return __f64make((hx & 0xfffff) | (i ^ 0x3ff00000), __f64lo(x)) - 1.0;
}

/** [k, f] with x = 2^k·(1 + f), √½ ≤ 1 + f < √2, for finite positive x (subnormals scaled by 2^54 first; f exact). */
export function __logReduce(x: number): [number, number] {
  let v = x;
  let k = 0;
  if (v < 2.2250738585072014e-308) {
    v = v * 18014398509481984.0;
    k = -54;
  }
  return [k + __logK(v), __logF(v)];
}

/** [k, f, f²/2, R] of finite positive x: x = 2^k·(1 + f) as __logReduce gives, and log(1 + f) = f − f²/2 + R. */
export function __logTerms(x: number): [number, number, number, number] {
  const [k, f] = __logReduce(x);
  return [k, f, 0.5 * f * f, __logPoly(f)];
}

/** s·(f²/2 + R(s²)), s = f/(2 + f): log(1 + f) = f − f²/2 + this. */
export function __logPoly(f: number): number {
  const [Lg1, Lg2, Lg3, Lg4, Lg5, Lg6, Lg7] = [
    6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
    1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01,
  ];
  const s = f / (2.0 + f);
  const z = s * s;
  const w = z * z;
  const t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  return s * (0.5 * f * f + t1 + t2);
}

export function __log64(x: number): number {
  if (Number.isNaN(x) || x < 0) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return x;
  const [k, f, hfsq, R] = __logTerms(x);
  return k * 6.93147180369123816490e-01 - ((hfsq - (R + k * 1.90821492927058770002e-10)) - f);
}

/** Shared tail of log2/log10: k·c + (f − f²/2 + R)/ln(base), with heads chosen so products are exact. */
export function __logScaled(x: number, invHi: number, invLo: number, kHi: number, kLo: number): number {
  if (Number.isNaN(x) || x < 0) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return x;
  const [k, f, hfsq, R] = __logTerms(x);
  const hi = __f64make(__f64hi(f - hfsq), 0);
  const lo = ((f - hi) - hfsq) + R;
  let valHi = hi * invHi;
  const yHi = k * kHi;
  let valLo = k * kLo + (lo + hi) * invLo + lo * invHi;
  const w = yHi + valHi;
  valLo = valLo + ((yHi - w) + valHi);
  valHi = w;
  return valLo + valHi;
}

export function __log264(x: number): number {
  // 1/ln2 = IVLN2_HI + IVLN2_LO; log2(2^k) = k exactly (kHi = 1, kLo = 0)
  return __logScaled(x, 1.4426946640014648, 3.768874985636099e-07, 1.0, 0.0);
}

export function __log1064(x: number): number {
  return __logScaled(x, 0.4342944622039795, 1.9699272335463627e-08, 0.30102992057800293, 7.508597826552624e-08);
}

export function __log1p64(x: number): number {
  if (Number.isNaN(x) || x < -1.0) return NaN;
  if (x === -1.0) return -Infinity;
  if (x === Infinity) return x;
  if ((__f64hi(x) & 0x7fffffff) < 0x3c900000) return x; // |x| < 2^-54 (keeps -0)
  const u = 1.0 + x;
  const k = __logK(u);
  const f = __logF(u);
  // c/u corrects for the rounding of 1 + x (log(1 + x) ≈ log(u) + c/u)
  let c = 0.0;
  if (k < 54) c = (k > 0 ? 1.0 - (u - x) : x - (u - 1.0)) / u;
  const hfsq = 0.5 * f * f;
  const R = __logPoly(f);
  return k * 6.93147180369123816490e-01 - ((hfsq - (R + (k * 1.90821492927058770002e-10 + c))) - f);
}
