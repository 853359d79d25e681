// Native float32 sin, cos, tan (no float64, no 64-bit integers), in the numbats kernel language.
//
// Cody–Waite with fma: x = k·π/2 + (rh + rl), π/2 = P1 + P2 + P3 (float32 pieces, 24 + 24 + 24 bits;
// the rest is 1.1e-23): x − k·P1 is exact (a multiple of 2^-24 below 1 in magnitude), k·P2 is split
// exactly by fma and subtracted by TwoSum, k·P3 goes into the tail. For |k| ≤ 67237 the reduced
// argument is accurate to ~2^-56 absolute. Kernels on |r| ≤ π/4: sin r = r + r³·S(r²), cos r = 1 − r²/2
// + r⁴·C(r²) (mpmath Chebyshev fits, coefficients rounded to float32; |error| ≤ 5.1e-9 resp. 2.5e-9),
// with the tail rl applied to first order and r²/2 kept as an exact pair in cos.
// Beyond |x| ≥ 105615 the reduction is Payne–Hanek in 32-bit integer arithmetic (__trigPH32).

import { __f32bits, __fma32 } from "./bits.js";
import { __poly3f32, __sumErr } from "./dd.js";

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
 * 2/π in 24-bit digits after one zero digit: 2/π·2^-24 = Σ T[j]·2^(-24(j+1)) (the first nine digits of
 * trig.ts's __TWO_OVER_PI, enough for every float32 exponent).
 */
export const __TWO_OVER_PI_I32 = Int32Array.from([0, 0xa2f983, 0x6e4e44, 0x1529fc, 0x2757d1, 0xf534dd, 0xc0db62, 0x95993c, 0x439041, 0xfe5163]);

/** The 24-bit digit j of 2/π (__TWO_OVER_PI_I32) shifted left by r bits (0 ≤ r < 24), the next digit's top bits filled in. */
export function __phWord32(j: number, r: number): number {
  return ((__TWO_OVER_PI_I32[j] << r) | (__TWO_OVER_PI_I32[j + 1] >> (24 - r))) & 0xffffff;
}

/**
 * Payne–Hanek for a finite float32 with |x| ≥ 105615 in 32-bit integers: [n mod 4, rh, rl] with
 * x = n·π/2 + rh + rl. |x| = m·2^E (m a 24-bit integer, E ≥ −7); y = 2^E·(2/π) mod 4 needs only the bits of
 * 2/π from b_(E−1) on (b_1 the first), taken as a 96-bit window Y = y/4 of four 24-bit digits (funnel
 * shifts of the table). m·Y mod 1 is the low 96 bits of m·Y·2^96, formed from 12-bit limbs (every product
 * and column sum below 2^26, so no int32 wraps and the plain-JS run agrees), and 4·(m·Y mod 1) =
 * x·(2/π) mod 4 to 2^-70 (the 2/π bits left out). Its top two bits and the next (rounding) bit give n, the
 * rest f = x·(2/π) − n, |f| ≤ ½ (a negative f as the ones' complement: 2^-94 off), as three float32 parts
 * summed to a pair; the closest float32 to a multiple of π/2, 16367173·2^72, is 1.03e-9 away in units of π/2,
 * so f keeps ≥ 40 significant bits. f·π/2 is then a double-float32 product.
 */
export function __trigPH32(x: number): [number, number, number] {
  const bits = __f32bits(x);
  const m = (bits & 0x7fffff) | 0x800000;
  const m0 = m & 0xfff;
  const m1 = m >> 12;
  const q = ((bits >> 23) & 0xff) - 128; // E + 22: the first bit used is bit q of the table (0-based)
  const j = (q / 24) | 0;
  const r = q - 24 * j;
  // Y·2^96 = d0·2^72 + d1·2^48 + d2·2^24 + d3; its 12-bit limbs a7 (top) … a0
  const d0 = __phWord32(j, r);
  const d1 = __phWord32(j + 1, r);
  const d2 = __phWord32(j + 2, r);
  const d3 = __phWord32(j + 3, r);
  const [a7, a6, a5, a4, a3, a2, a1, a0] = [d0 >> 12, d0 & 0xfff, d1 >> 12, d1 & 0xfff, d2 >> 12, d2 & 0xfff, d3 >> 12, d3 & 0xfff];
  // m·Y·2^96 mod 2^96, column by column: limb k = m0·a_k + m1·a_(k−1) + the carry
  let v = m0 * a0;
  v = (v >> 12) + m0 * a1 + m1 * a0;
  v = (v >> 12) + m0 * a2 + m1 * a1;
  const c2 = v & 0xfff;
  v = (v >> 12) + m0 * a3 + m1 * a2;
  const c3 = v & 0xfff;
  v = (v >> 12) + m0 * a4 + m1 * a3;
  const c4 = v & 0xfff;
  v = (v >> 12) + m0 * a5 + m1 * a4;
  const c5 = v & 0xfff;
  v = (v >> 12) + m0 * a6 + m1 * a5;
  const c6 = v & 0xfff;
  v = (v >> 12) + m0 * a7 + m1 * a6;
  const c7 = v & 0xfff;
  const up = (c7 >> 9) & 1; // f < 0: n rounded up, |f| the complement of the fraction bits
  const flip = up === 1 ? 0xfff : 0;
  const n = ((c7 >> 10) + up) & 3;
  const w0 = Math.fround((((c7 ^ flip) & 0x1ff) << 12) | (c6 ^ flip)) * 2.384185791015625e-7; // 2^-22
  const w1 = Math.fround(((c5 ^ flip) << 12) | (c4 ^ flip)) * 1.4210854715202004e-14; // 2^-46
  const w2 = Math.fround(((c3 ^ flip) << 12) | (c2 ^ flip)) * 8.470329472543003e-22; // 2^-70
  const fh = Math.fround(w0 + w1);
  const fl = Math.fround(((w0 - fh) + w1) + w2); // w0 = 0 or w0 > w1: Fast2Sum
  // |f|·π/2 = (fh + fl)·(PIO2H + PIO2L)
  const ph = fh * 1.5707963705062866;
  const pl = __fma32(fh, 1.5707963705062866, -ph) + __fma32(fh, -4.371138828673793e-8, fl * 1.5707963705062866);
  const rh = Math.fround(ph + pl);
  const rl = Math.fround((ph - rh) + pl);
  const neg = (x < 0) !== (up === 1);
  return [x < 0 ? (4 - n) & 3 : n, neg ? -rh : rh, neg ? -rl : rl];
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
  return __trigPH32(x);
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
  // branch): sin x = x (keeps −0; the kernels round cos x to 1 there themselves)
  const tiny = Math.abs(x) < 2.44140625e-4;
  return [tiny ? x : (n & 2) === 0 ? sv : -sv, ((n + 1) & 2) === 0 ? cv : -cv];
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
