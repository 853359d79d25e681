// Native float32 log, log2, log10, log1p, asinh, acosh, atanh (no float64), in the numbats kernel language.
//
// x = 2^k·m, √½ ≤ m < √2, f = m − 1 (exact); log(1 + f) = f + T(f) with fdlibm's arrangement
// T = s·(f²/2 + R) − f²/2, s = f/(2 + f), R(z) = z·P(z), z = s², P a degree-3 fit of R/z on
// z ≤ 0.029443 (mpmath Chebyshev fit, coefficients rounded to float32, |error| ≤ 2.3e-8; it enters the
// result multiplied by s·z < 0.0051). f²/2 is kept as an exact pair (fma), and the sum of the large
// parts (k·ln2's head, f) is a Fast2Sum, so the result has one significant rounding. The constant heads
// (ln2, log10(2) to 16 bits) make k·HEAD exact for |k| ≤ 152. log itself skips the division: f + f²·Q(f)
// directly (`__logFast32`, Q degree 9); log2, log10, log1p, asinh, acosh, atanh keep the arrangement above.

import { __f32bits, __f32frombits, __fma32 } from "./bits.js";
import { __divLo32, __poly3f32, __sumErr } from "./dd.js";

/**
 * For finite x > 0: b with x = 2^(b >> 23)·m, m = __f32frombits((b & 0x7fffff) + 0x3f3504f3) in [√½, √2)
 * (the bits of x, of x·2^23 less 23 in the exponent when x is subnormal, minus the bits of √½).
 */
export function __logB32(x: number): number {
  let b = __f32bits(x);
  if (b < 0x00800000) b = __f32bits(x * 8388608) - 0x0b800000;
  return b - 0x3f3504f3;
}

/** f = m − 1 for b from __logB32 (exact: m is in [½, 2]). */
export function __logF32(b: number): number {
  return __f32frombits((b & 0x7fffff) + 0x3f3504f3) - 1;
}

/** log(1 + f) − f for f in [√½ − 1, √2 − 1]. */
export function __logT32(f: number): number {
  const s = f / (2 + f);
  const z = s * s;
  const p = __poly3f32(
    z,
    Math.fround(0.23330697417259216), Math.fround(0.2855081260204315), Math.fround(0.4000012278556824),
    Math.fround(0.6666666865348816),
  );
  const hf = 0.5 * f;
  const h = hf * f; // f²/2 = h + hl exactly
  const hl = __fma32(hf, f, -h);
  return __fma32(s, h + z * p, -h) - hl;
}

/** log(2^k·(1 + f)) + c (c a small correction), with k·ln2 + f summed exactly. */
export function __logSum32(k: number, f: number, c: number): number {
  const kf = Math.fround(k);
  const a = kf * 0.693145751953125; // ln2's 16-bit head: exact
  const s = a + f;
  const e = (a - s) + f; // |a| ≥ |f| unless k = 0 (then a = 0): Fast2Sum
  return Math.fround(s + (e + (__fma32(kf, 1.428606765330187e-6, __logT32(f)) + c)));
}

/**
 * log(2^k·(1 + f)) for f in [√½ − 1, √2 − 1], without a division, as [s, t] with s + t the logarithm to
 * ~2^-30 relative: k·ln2's head + f by Fast2Sum (s + e), then t = −f²/2 + f³·P(f) + (k·ln2's tail + e),
 * rounded once; Q = −½ + f·P a degree-9 fit of (log(1 + f) − f)/f² (mpmath, Lawson-weighted;
 * |f|·|error| ≤ 7.6e-10, about 0.013 ulp).
 */
export function __logFastParts32(k: number, f: number): [number, number] {
  const kf = __f32frombits(0x4b400000 + k) - 12582912; // k as a float32 without an int → float conversion
  const a = kf * 0.693145751953125; // ln2's 16-bit head: exact
  const s = a + f;
  const e = (a - s) + f; // |a| ≥ |f| unless k = 0 (then a = 0): Fast2Sum
  let p = __fma32(f, 0.06916290521621704, -0.11789555102586746);
  p = __fma32(p, f, 0.11872382462024689);
  p = __fma32(p, f, -0.12384352087974548);
  p = __fma32(p, f, 0.14218749105930328);
  p = __fma32(p, f, -0.16669254004955292);
  p = __fma32(p, f, 0.20002222061157227);
  p = __fma32(p, f, -0.24999986588954926);
  p = __fma32(p, f, 0.3333331048488617);
  // f²·Q = −f²/2 + f²·(f·P): −f²/2 enters through the last fma's single rounding
  const t = f * f;
  return [s, __fma32(t, -0.5, __fma32(t, f * p, __fma32(kf, 1.428606765330187e-6, e)))];
}

/** log(2^k·(1 + f)), rounded once (see __logFastParts32). */
export function __logFast32(k: number, f: number): number {
  const [s, t] = __logFastParts32(k, f);
  return Math.fround(s + t);
}

/** log(x) + c for a normal x > 0 and a small correction c (|c| ≲ 2^-20·|log x|, or c ≲ ulp), rounded once. */
export function __logPlus32(x: number, c: number): number {
  const b = __logB32(x);
  const [s, t] = __logFastParts32(b >> 23, __logF32(b));
  return Math.fround(s + (t + c));
}

/** No branch: the kernel runs for every input, and selects give ±0, negative numbers, +∞ and NaN their results. */
export function __log32(x: number): number {
  const b = __logB32(x);
  const res = __logFast32(b >> 23, __logF32(b));
  const special = x === 0 ? Math.fround(-Infinity) : x === Infinity ? x : Math.fround(NaN);
  return x > 0 && x < Infinity ? res : special;
}

/** log(1 + a + al) for a > −1 finite, |al| ≲ ulp(a): log(u) + c/u, u = fl(1 + a), c = 1 + a + al − u. */
export function __log1pPair32(a: number, al: number): number {
  const u = Math.fround(1 + a); // (fround: the plain-JS run computes in float64)
  const c = (a < 1 ? (1 - u) + a : (a - u) + 1) + al; // Fast2Sum
  const b = __logB32(u);
  return __logSum32(b >> 23, __logF32(b), c / u);
}

export function __log1p32(x: number): number {
  if (!(x > -1)) return x === -1 ? Math.fround(-Infinity) : Math.fround(NaN);
  if (x === Infinity) return x;
  if (Math.abs(x) < 2.9802322387695312e-8) return x; // |x| < 2^-25: x²/2 is below half an ulp (keeps −0)
  return __log1pPair32(x, Math.fround(0));
}

/** √(h + l) as s + (returned) correction, s = fl(√h): the fma residual h − s² plus l, over 2s. */
export function __sqrtLo32(h: number, l: number, s: number): number {
  return (__fma32(-s, s, h) + l) / (s + s);
}

export function __asinh32(x: number): number {
  const ax = Math.abs(x);
  if (!(ax < Infinity)) return x; // ±Inf, NaN
  if (ax < 2.44140625e-4) return x; // |x| < 2^-12: asinh x = x rounded (keeps −0)
  let res = Math.fround(0);
  if (ax >= 4096) {
    // log(2|x|) + 1/(4x²): the second term is below 2^-26 relative
    const b = __logB32(ax);
    res = __logSum32((b >> 23) + 1, __logF32(b), Math.fround(0));
  } else {
    // log1p(a), a = |x| + x²/(1 + √(1 + x²)), every step as an exact pair
    const x2 = ax * ax;
    const x2l = __fma32(ax, ax, -x2);
    const w = 1 + x2;
    const wl = __sumErr(Math.fround(1), x2, w) + x2l;
    const sq = Math.sqrt(w);
    const d = 1 + sq;
    const dl = ((sq - d) + 1) + __sqrtLo32(w, wl, sq); // sq ≥ 1: Fast2Sum
    const t = x2 / d;
    const tl = __divLo32(x2, d, dl, t) + x2l / d;
    const a = ax + t;
    const al = ((ax - a) + t) + tl; // |x| ≥ t: Fast2Sum
    res = __log1pPair32(a, al);
  }
  return x < 0 ? -res : res;
}

export function __acosh32(x: number): number {
  if (!(x >= 1)) return Math.fround(NaN); // x < 1, NaN
  if (x === Infinity) return x;
  if (x === 1) return Math.fround(0);
  if (x >= 4096) {
    // log(2x) − 1/(4x²)
    const b = __logB32(x);
    return __logSum32((b >> 23) + 1, __logF32(b), Math.fround(0));
  }
  // log1p(a), a = (x − 1) + √((x − 1)(x + 1)), as exact pairs
  const m = x - 1; // exact
  const xp = x + 1;
  const xpl = __sumErr(x, Math.fround(1), xp);
  const p = m * xp;
  const pl = __fma32(m, xp, -p) + m * xpl;
  const sq = Math.sqrt(p);
  const a = sq + m;
  const al = ((sq - a) + m) + __sqrtLo32(p, pl, sq); // √(x² − 1) ≥ x − 1: Fast2Sum
  return __log1pPair32(a, al);
}

export function __atanh32(x: number): number {
  const ax = Math.abs(x);
  if (!(ax < 1)) return ax === 1 ? (x > 0 ? Math.fround(Infinity) : Math.fround(-Infinity)) : Math.fround(NaN);
  if (ax < 2.44140625e-4) return x; // |x| < 2^-12: atanh x = x rounded (keeps −0)
  // ½·log1p(2|x|/(1 − |x|)), the quotient as an exact pair
  const n = ax + ax;
  const d = 1 - ax;
  const dl = (1 - d) - ax; // Fast2Sum
  const q = n / d;
  const res = 0.5 * __log1pPair32(q, __divLo32(n, d, dl, q));
  return x < 0 ? -res : res;
}

/** log2 (ten = 0) or log10 (ten = 1) of a float32: k·log_b(2) + (f + T)·log_b(e). */
export function __log2or1032(x: number, ten: number): number {
  if (!(x > 0)) return x === 0 ? Math.fround(-Infinity) : Math.fround(NaN);
  if (x === Infinity) return x;
  const b = __logB32(x);
  const kf = Math.fround(b >> 23);
  const f = __logF32(b);
  // log_b(2) = 1 (log2), or a 16-bit head (k·head exact) + tail; log_b(e) = c + cl, f·c = ph + pl exactly (fma)
  const a = ten === 0 ? kf : kf * 0.301025390625;
  const al = ten === 0 ? Math.fround(0) : Math.fround(4.605039066518657e-6);
  const c = ten === 0 ? Math.fround(1.4426950216293335) : Math.fround(0.4342944920063019);
  const cl = ten === 0 ? Math.fround(1.925963033500011e-8) : Math.fround(-1.0103049952192578e-8);
  const ph = f * c;
  const pl = __fma32(f, c, -ph);
  const s = a + ph;
  const e = (a - s) + ph; // |a| ≥ 0.30 > |ph| unless k = 0 (a = 0): Fast2Sum
  const tail = __fma32(kf, al, __fma32(f, cl, __logT32(f) * c));
  return Math.fround(s + (e + (pl + tail)));
}

export function __log232(x: number): number {
  return __log2or1032(x, 0);
}

export function __log1032(x: number): number {
  return __log2or1032(x, 1);
}
