// Native float32 exp, exp2, expm1, sinh, cosh, tanh (no float64 on any path), in the numbats kernel language.
//
// Cody–Waite reduction x = k·ln2 + r, |r| ≤ ln2/2, with fma: ln2 = LN2HI + LN2LO (LN2HI = ln2 rounded
// to float32), x − k·LN2HI exact (|x − k·LN2HI| < ½ is a multiple of 2^-25), the tail's rounding error
// kept in cl. e^(r + cl) = 1 + r + t with t = r²·Q(r) + cl, Q a degree-5 fit of (e^r − 1 − r)/r² on
// |r| ≤ 0.34661 (Chebyshev fit with mpmath, coefficients rounded to float32; |error| ≤ 4.1e-9, so
// r²·|error| < 2^-31). 1 + r is split exactly (Fast2Sum), so y = e^r has one significant rounding.
// 2^k is applied in two exact power-of-two steps (one rounding, correct subnormals).
//
// Float literals here combine with float32 values, so they are float32 constants; each is written as the
// float32 value itself, so the plain-JS run uses the same constants. `__fma32` is an explicit fma, so no
// result depends on `options.fma` contraction.

import { __f32bits, __f32frombits, __fma32 } from "./bits.js";
import { __divLo32, __poly3f32, __poly5f32 } from "./dd.js";

/** y·2^k with one rounding, for k (int32) in [-151, 128] and y in [½, 2). */
export function __ldexp32(y: number, k: number): number {
  const k1 = k >> 1;
  const k2 = k - k1;
  return Math.fround(y * __f32frombits((k1 + 127) << 23) * __f32frombits((k2 + 127) << 23));
}

/** round(x/ln2) as a float32 integer (ties either way); expm1's k (exp, sinh, cosh, tanh use __expJ32). */
export function __expK32(x: number): number {
  return Math.floor(__fma32(x, 1.4426950216293335, 0.5));
}

/** r = x − k·ln2, rounded (k from __expK32). */
export function __expR32(x: number, k: number): number {
  return __fma32(-k, -1.9046542121259336e-09, __fma32(-k, 0.6931471824645996, x));
}

/** (x − k·ln2) − r: the rounding error of __expR32's r. */
export function __expRl32(x: number, k: number, r: number): number {
  return __fma32(-k, -1.9046542121259336e-09, __fma32(-k, 0.6931471824645996, x) - r);
}

/** Q(r) ≈ (e^r − 1 − r)/r², |r| ≤ 0.34661. */
export function __expQ32(r: number): number {
  return __poly5f32(
    r,
    Math.fround(0.00019890991097781807), Math.fround(0.0013933649752289057),
    Math.fround(0.00833331048488617), Math.fround(0.04166646674275398), Math.fround(0.1666666716337204),
    Math.fround(0.5),
  );
}

/** t with e^(r + cl) ≈ 1 + r + t, for |r| ≤ 0.34661 and |cl| ≲ ulp(r). */
export function __expT32(r: number, cl: number): number {
  return __fma32(r * r, __expQ32(r), cl);
}

/** e^(r + cl) in [0.7, 1.42]: (1 + r) split exactly, then one rounding. */
export function __expY32(r: number, cl: number): number {
  const h = 1 + r;
  const hl = (1 - h) + r;
  return h + (hl + __expT32(r, cl));
}

/**
 * 1.5·2^23 + round(x/ln2), ties to even (|x/ln2| < 2^22): k = j − 1.5·2^23 exactly, and __f32bits(j) −
 * 0x4b400000 is k as an int32, so neither a floor nor a float → int conversion is needed.
 */
export function __expJ32(x: number): number {
  return __fma32(x, 1.4426950216293335, 12582912);
}

/**
 * e^x·2^shift for −104 ≤ x ≤ 89.5 (shift an int32, k + shift in [-151, 128]), NaN for NaN. e^r = 1 + s with
 * s = u + (nk·LN2LO + r²·Q(r)): u = x − k·LN2HI is exact and r (u + nk·LN2LO rounded) is only the
 * polynomial's argument, so the reduction's rounding error never reaches the result; s and 1 + s round
 * (≤ ¼ and ½ ulp of e^r, the rest a small fraction of one; measured in docs/mathlib.md). y·2^(k + shift)
 * is y·2^(k + shift − kb), exact (normal: an integer add to y's exponent field), times 2^kb, kb = ±64 by
 * x's sign: one rounding, subnormal and overflowing results included; 2^kb is x·0 + 2^kb, which is NaN
 * for a NaN x, so NaN needs no test.
 */
export function __expScaled32(x: number, shift: number): number {
  const j = __expJ32(x);
  const nk = 12582912 - j; // −k, exact
  const u = __fma32(nk, 0.6931471824645996, x); // x − k·LN2HI, exact
  const r = __fma32(nk, -1.9046542121259336e-09, u);
  const s = u + __fma32(r * r, __expQ32(r), nk * -1.9046542121259336e-09);
  const y = 1 + s;
  const down = x < 0 ? 128 : 0; // kb = 64 − down
  // __f32bits(j) is 0x4b400000 + k, and 0x4b400000 << 23 vanishes in 32 bits
  const t = __f32frombits(__f32bits(y) + ((__f32bits(j) + shift - 64 + down) << 23));
  // 2^kb from its bits; fround: the plain-JS run multiplies in float64
  return Math.fround(t * __fma32(x, 0, __f32frombits(0x5f800000 - (down << 23))));
}

/**
 * No branch: x is clamped to [−104, 89], where e^x already rounds to 0 resp. ∞ (below −103.97208, above
 * 88.72283), so out-of-range inputs need no test of their own; NaN is selected at the end.
 */
export function __exp32(x: number): number {
  const lo = x < -104 ? Math.fround(-104) : x;
  const res = __expScaled32(lo > 89 ? Math.fround(89) : lo, 0);
  // NaN by its own test: the WebGPU adapters' compilers fold __expScaled32's x·0 to 0
  return Number.isNaN(x) ? x : res;
}

export function __exp232(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x >= 128) return Math.fround(Infinity);
  if (x <= -150) return Math.fround(0); // 2^-150 rounds to 0 (ties to even)
  const k = Math.floor(x + 0.5);
  const r = x - k; // exact, |r| ≤ ½
  // r·ln2 as rh + rl: the product's rounding error by fma, plus r·(ln2 − LN2HI)
  const rh = r * 0.6931471824645996;
  const rl = __fma32(r, -1.9046542121259336e-09, __fma32(r, 0.6931471824645996, -rh));
  return __ldexp32(__expY32(rh, rl), k | 0);
}

export function __expm132(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x > 88.72283172607422) return Math.fround(Infinity);
  if (x <= -17.32868003845215) return Math.fround(-1); // e^x ≤ 2^-25: −1 + e^x rounds to −1
  if (Math.abs(x) < 2.9802322387695312e-8) return x; // |x| < 2^-25: x²/2 is below half an ulp (keeps −0)
  const k = __expK32(x);
  const r = __expR32(x, k);
  const t = __expT32(r, __expRl32(x, k, r));
  if (k === 0) return Math.fround(r + t);
  const ki = k | 0;
  if (ki > 40) {
    // e^x (−1 is below 2^-16 ulp): 2^k·(1 + r + t), 1 + r split exactly as in __expY32
    const h = 1 + r;
    return __ldexp32(h + (((1 - h) + r) + t), ki);
  }
  // e^x − 1 = (2^k − 1) + 2^k·r + 2^k·t, 2^k − 1 as an exact pair (a, al) (TwoSum)
  const p = __f32frombits((ki + 127) << 23); // 2^k, k in [-25, 40]
  const a = p - 1;
  const bb = a - p;
  const al = (p - (a - bb)) + (-1 - bb);
  const pr = p * r; // exact
  const s = a + pr; // |a| ≥ |pr| for every k ≠ 0: Fast2Sum
  const se = (a - s) + pr;
  return Math.fround(s + ((se + al) + p * t));
}

/**
 * For 0 ≤ x < 18.1: sinh x (which = 0), cosh x (1) or tanh(x/2) (2) from e^x = 2^k·(y + yl) as an exact
 * pair and its reciprocal (or 2/(e^x + 1), by Newton steps instead of a division) corrected by the fma
 * residual; one final rounding.
 */
export function __expHyp32(x: number, which: number): number {
  const j = __expJ32(x);
  const nk = 12582912 - j; // −k, exact
  const xr = __fma32(nk, 0.6931471824645996, x); // x − k·LN2HI, exact
  const r = __fma32(nk, -1.9046542121259336e-09, xr); // only the polynomial's argument, as in __expScaled32
  const h = 1 + xr;
  const u = ((1 - h) + xr) + __fma32(r * r, __expQ32(r), nk * -1.9046542121259336e-09);
  const y = h + u;
  const p = __f32frombits((__f32bits(j) - 0x4b400000 + 127) << 23); // 2^k, k ≤ 26
  const e = p * y; // exact
  const el = p * ((h - y) + u);
  if (which === 2) {
    // tanh(x/2) = 1 − 2/(e^x + 1)
    const d = e + 1;
    const dl = ((e - d) + 1) + el; // e ≥ 1: Fast2Sum
    // 1/d without a division: an exponent-bit seed (relative error ≤ 0.051) and two Newton steps
    // (≤ 6.5e-6); q = 2/d is then corrected by its residual (2 − q·(d + dl))·(1/d), whose error is
    // below 2^-36 relative to q
    let v = __f32frombits(0x7ef311c3 - __f32bits(d));
    v = __fma32(v, __fma32(-d, v, 1), v);
    v = __fma32(v, __fma32(-d, v, 1), v);
    const q = v + v;
    const w = 1 - q;
    return Math.fround(w + __fma32(-__fma32(-q, dl, __fma32(-q, d, 2)), v, (1 - w) - q));
  }
  // (e^x ∓ e^-x)/2
  const q = 1 / e;
  const sq = which === 0 ? -q : q;
  const ql = __divLo32(Math.fround(1), e, el, q);
  const s = e + sq;
  const se = (e - s) + sq; // e ≥ 1 ≥ q: Fast2Sum
  return Math.fround(0.5 * (s + (se + (el + (which === 0 ? -ql : ql)))));
}

export function __sinh32(x: number): number {
  const ax = Math.abs(x);
  if (!(ax < 16)) {
    if (Number.isNaN(x)) return x;
    if (ax > 89.41598510742188) return x > 0 ? Math.fround(Infinity) : Math.fround(-Infinity);
    const big = __expScaled32(ax, -1); // e^|x|/2: e^-|x| is below 2^-40 ulp
    return x < 0 ? -big : big;
  }
  if (ax < 2.44140625e-4) return x; // |x| < 2^-12: sinh x = x rounded (keeps −0)
  if (ax < 1) {
    // sinh x = x + x³·S(x²), S a degree-3 fit on x² ≤ 1 (mpmath Chebyshev fit, |error| ≤ 5.4e-9)
    const z = x * x;
    const p = __poly3f32(
      z,
      Math.fround(2.806280235745362e-6), Math.fround(0.00019838102161884308),
      Math.fround(0.008333339355885983), Math.fround(0.1666666716337204),
    );
    return __fma32(x * z, p, x);
  }
  const res = __expHyp32(ax, 0);
  return x < 0 ? -res : res;
}

export function __cosh32(x: number): number {
  const ax = Math.abs(x);
  if (ax < 16) return __expHyp32(ax, 1);
  if (Number.isNaN(x)) return x;
  if (ax > 89.41598510742188) return Math.fround(Infinity);
  return __expScaled32(ax, -1);
}

export function __tanh32(x: number): number {
  // Both paths for every input, then one select: a warp with inputs on both sides of 0.625 does not diverge.
  // Both give tanh |x|, and x's sign is copied onto the result (so −0 stays −0, with no test of its own).
  const ax = Math.abs(x);
  // |x| < 0.625: tanh |x| = |x| + |x|³·T(x²), T a degree-5 fit on x² ≤ 0.390625 (mpmath Chebyshev fit, |error| ≤ 1.3e-8);
  // below 2^-12 this rounds to |x| itself (|x|³/3 is below half an ulp)
  const z = x * x;
  const p = __poly5f32(
    z,
    Math.fround(0.002292744815349579), Math.fround(-0.008343945257365704),
    Math.fround(0.02176891826093197), Math.fround(-0.053959257900714874),
    Math.fround(0.13333304226398468), Math.fround(-0.3333333432674408),
  );
  const near = __fma32(ax * z, p, ax);
  // 0.625 ≤ |x|: tanh |x| = 1 − 2/(e^2|x| + 1), which rounds to 1 from 9.0109 on: |x| is capped there (NaN too)
  const capped = ax < 9.010913848876953 ? ax : Math.fround(9.010913848876953);
  const far = __expHyp32(capped + capped, 2);
  // NaN takes the first arm (its comparisons are false) and stays NaN
  const res = !(ax >= 0.625) ? near : far;
  return __f32frombits((__f32bits(res) & 0x7fffffff) | (__f32bits(x) & -2147483648));
}
