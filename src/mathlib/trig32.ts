// Native float32 sin, cos, tan (no float64 below |x| < 105615), in the numbats kernel language.
//
// Cody–Waite with fma: x = k·π/2 + (rh + rl), π/2 = P1 + P2 + P3 (float32 pieces, 24 + 24 + 24 bits;
// the rest is 1.1e-23): x − k·P1 is exact (a multiple of 2^-24 below 1 in magnitude), k·P2 is split
// exactly by fma and subtracted by TwoSum, k·P3 goes into the tail. For |k| ≤ 67237 the reduced
// argument is accurate to ~2^-56 absolute. Kernels on |r| ≤ π/4: sin r = r + r³·S(r²), cos r = 1 − r²/2
// + r⁴·C(r²) (mpmath Chebyshev fits, coefficients rounded to float32; |error| ≤ 5.1e-9 resp. 2.5e-9),
// with the tail rl applied to first order and r²/2 kept as an exact pair in cos.
// Beyond the threshold (and for ±Inf, NaN) the float64 path (Payne–Hanek) is evaluated and rounded once.

import { __f32bits, __f64hi, __f64lo, __f64make, __fma32 } from "./bits.js";
import { __mulErr, __poly3f32, __sumErr } from "./dd.js";
import { __TWO_OVER_PI } from "./trig.js";
import { __toF64 } from "./f32.js";

/** sin(rh + rl) − rh for |rh| ≤ π/4, |rl| ≲ ulp(rh). */
export function __kSin32(rh: number, rl: number): number {
  const t = rh * rh;
  const p = __poly3f32(
    t,
    Math.fround(2.7249313916399842e-6), Math.fround(-0.00019840082677546889),
    Math.fround(0.008333331905305386), Math.fround(-0.1666666716337204),
  );
  // sin(rh + rl) ≈ rh + rh³·S + rl·(1 − rh²/2)
  return __fma32(rh * t, p, __fma32(t * -0.5, rl, rl));
}

/** cos(rh + rl) − w for |rh| ≤ π/4, |rl| ≲ ulp(rh), w = 1 − (rh·rh)/2 (rounded). */
export function __kCos32(rh: number, rl: number): number {
  const th = rh * rh;
  const tl = __fma32(rh, rh, -th); // rh² = th + tl exactly
  let p = __fma32(th, 2.4547436623834074e-5, -0.0013888300163671374);
  p = __fma32(p, th, 0.0416666641831398);
  const hz = 0.5 * th;
  const w = 1 - hz;
  const corr = (1 - w) - hz; // exact
  // cos(rh + rl) ≈ 1 − (rh² + 2·rh·rl)/2 + rh⁴·C
  return __fma32(th * th, p, corr - __fma32(rh, rl, 0.5 * tl));
}

/** tan of n·π/2 + rh + rl, for |rh| ≤ π/4 (n an int32). */
export function __tanTail32(n: number, rh: number, rl: number): number {
  // tan = sin/cos (n even) or −cos/sin (n odd), both as exact pairs; the quotient corrected by its fma residual
  const st = __kSin32(rh, rl);
  const sh = rh + st;
  const sl = (rh - sh) + st;
  const w = 1 - 0.5 * (rh * rh);
  const ct = __kCos32(rh, rl);
  const ch = w + ct;
  const cl = (w - ch) + ct;
  const odd = (n & 1) === 1;
  const a = odd ? ch : sh;
  const al = odd ? cl : sl;
  const b = odd ? sh : ch;
  const bl = odd ? sl : cl;
  const q = a / b;
  const res = Math.fround(q + (__fma32(-q, b, a) + __fma32(-q, bl, al)) / b);
  return odd ? -res : res;
}

/**
 * Payne–Hanek for a finite float32 with |x| ≥ 105615, in float64: the fraction f = x·(2/π) − n, |f| ≤ ½,
 * with n mod 4 stored in the two lowest bits of its float64 significand (2^-51 relative: harmless).
 * |x| = m·2^e (m a 24-bit integer, e ≥ −7); the 24-bit digits d_j of 2/π before j0 = max(0, ⌊(e − 2)/24⌋)
 * contribute multiples of 4 and are dropped; the next five give exact products m·d_j·2^(s − 24i),
 * s = e − 24·j0 − 24 ∈ [−31, −1] (the first two reduced mod 4, exactly), summed as a double-double;
 * what is left out is below 2^-72 (the closest float32 to a multiple of π/2, 16367173·2^72, is 1.03e-9 away
 * in units of π/2).
 */
export function __trigPH32(x: number): number {
  const e = ((__f32bits(x) >> 23) & 0xff) - 150;
  const m = __toF64(Math.abs(x)) * __f64make((1023 - e) << 20, 0); // exact
  const j0 = e < 2 ? 0 : ((e - 2) / 24) | 0;
  const s = e - 24 * j0 - 24;
  let t0 = m * __TWO_OVER_PI[j0] * __f64make((1023 + s) << 20, 0);
  t0 = t0 - 4 * Math.floor(t0 * 0.25); // mod 4, exact
  let t1 = m * __TWO_OVER_PI[j0 + 1] * __f64make((999 + s) << 20, 0);
  t1 = t1 - 4 * Math.floor(t1 * 0.25);
  const t2 = m * __TWO_OVER_PI[j0 + 2] * __f64make((975 + s) << 20, 0);
  const t3 = m * __TWO_OVER_PI[j0 + 3] * __f64make((951 + s) << 20, 0);
  const t4 = m * __TWO_OVER_PI[j0 + 4] * __f64make((927 + s) << 20, 0);
  const hi = t0 + t1;
  const h2 = hi + t2;
  const lo = (__sumErr(t0, t1, hi) + __sumErr(hi, t2, h2)) + (t3 + t4);
  const n = Math.floor(h2 + 0.5);
  let q = (n - 4 * Math.floor(n * 0.25)) | 0; // n mod 4
  let f = (h2 - n) + lo; // h2 − n is exact
  if (x < 0) {
    f = -f;
    q = (4 - q) & 3;
  }
  return __f64make(__f64hi(f), (__f64lo(f) & -4) | q);
}

/**
 * [n, rh, rl] with x = n·π/2 + rh + rl, |rh| ≤ π/4 (n an int32, only n mod 4 meaningful), for finite x;
 * ±Inf and NaN give NaN for rh and rl.
 */
export function __trigReduce32(x: number): [number, number, number] {
  const ax = Math.abs(x);
  if (ax < 105615) {
    // Cody–Waite; k = round(x·2/π) (ties to even) by the 1.5·2^23 shifter, n = k mod 4 from j's low bits
    // (no floor, no float → int conversion)
    const j = __fma32(x, 0.6366197466850281, 12582912);
    const k = j - 12582912; // exact
    const r1 = __fma32(-k, 1.5707963705062866, x); // exact
    const ph = k * -4.371138828673793e-8;
    const pl = __fma32(k, -4.371138828673793e-8, -ph); // k·P2 = ph + pl exactly
    const rh = r1 - ph;
    return [__f32bits(j), rh, __fma32(-k, -1.7151245100058819e-15, __sumErr(r1, -ph, rh) - pl)];
  }
  if (ax === Infinity || Number.isNaN(x)) return [0, Math.fround(NaN), Math.fround(NaN)];
  // Payne–Hanek: f·π/2 as a double-double, rounded to a float32 pair
  const f = __trigPH32(x);
  const ph = f * 1.5707963267948966;
  const pl = __mulErr(f, 1.5707963267948966, ph) + f * 6.123233995736766e-17;
  const rh = Math.fround(ph + pl);
  return [__f64lo(f) & 3, rh, Math.fround((ph - rh) + pl)];
}

/**
 * [sin x, cos x] of a float32 from one argument reduction: both kernels are evaluated anyway (the
 * quadrant picks which is which), so Math.sin and Math.cos of one value share this call (see the
 * compiler's sincos pass).
 */
export function __sincos32(x: number): [number, number] {
  const [n, rh, rl] = __trigReduce32(x);
  const s = Math.fround(rh + __kSin32(rh, rl));
  const c = Math.fround((1 - 0.5 * (rh * rh)) + __kCos32(rh, rl));
  const odd = (n & 1) === 1;
  const sv = odd ? c : s;
  const cv = odd ? s : c;
  // sin(x) = ±sin r or ±cos r by n mod 4; cos(x) = sin(x + π/2), quadrant n + 1; |x| < 2^-12 (a select, not a
  // branch): sin x = x, cos x = 1 rounded (keeps −0)
  const tiny = Math.abs(x) < 2.44140625e-4;
  return [tiny ? x : (n & 2) === 0 ? sv : -sv, tiny ? Math.fround(1) : ((n + 1) & 2) === 0 ? cv : -cv];
}

export function __sin32(x: number): number {
  return __sincos32(x)[0];
}

export function __cos32(x: number): number {
  return __sincos32(x)[1];
}

export function __tan32(x: number): number {
  if (Math.abs(x) < 2.44140625e-4) return x; // |x| < 2^-12: tan x = x rounded
  const [n, rh, rl] = __trigReduce32(x);
  return __tanTail32(n, rh, rl);
}
