// cbrt, hypot, sign (float64), in the numbats kernel language.
//
// cbrt: fdlibm s_cbrt.c (Sun Microsystems 1993): a 5-bit estimate from the
// exponent bits (B1, B2), a rational step to 23 bits (C..G), rounding to 21
// bits and one Newton step in float64 (error < 0.667 ulp).
// hypot: scale by 2^±600 away from overflow/underflow, form a² + b² exactly
// as a double-double (Dekker products), take the square root and correct it
// with one Newton step on the residual (error ≈ 0.5 ulp).

import { __f64hi, __f64lo, __f64make } from "./bits.js";
import { __mulErr, __sumErr } from "./dd.js";

export function __cbrt64(x: number): number {
  const hx0 = __f64hi(x);
  const hx = hx0 & 0x7fffffff;
  if (hx >= 0x7ff00000) return x + x; // NaN, ±Inf
  if ((hx | __f64lo(x)) === 0) return x; // ±0
  const ax = __f64make(hx, __f64lo(x));
  let t = 0.0;
  if (hx < 0x00100000) {
    // subnormal: estimate from 2^54·|x|
    const big = ax * 18014398509481984.0;
    t = __f64make(((__f64hi(big) / 3) | 0) + 696219795, 0);
  } else {
    t = __f64make(((hx / 3) | 0) + 715094163, 0);
  }
  // to 23 bits
  let r = t * t / ax;
  let s = 5.42857142857142815906e-01 + r * t;
  t = t * (3.57142857142857150787e-01 + 1.60714285714285720630e+00 /
    (s + 1.41428571428571436819e+00 + -7.05306122448979611050e-01 / s));
  // chop to 20 bits, rounded up, so t·t is exact
  t = __f64make(__f64hi(t) + 1, 0);
  s = t * t;
  r = ax / s;
  const w = t + t;
  r = (r - t) / (w + r);
  t = t + t * r;
  return hx0 < 0 ? -t : t;
}

export function __hypot64(x: number, y: number): number {
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  if (ax === Infinity || ay === Infinity) return Infinity; // even with a NaN (JS)
  if (Number.isNaN(ax) || Number.isNaN(ay)) return NaN;
  let a = Math.max(ax, ay);
  let b = Math.min(ax, ay);
  if (b === 0) return a;
  const ea = __f64hi(a) >> 20;
  const eb = __f64hi(b) >> 20;
  if (ea - eb > 60) return a + b; // b²/a² below half an ulp
  let scale = 1.0;
  if (ea > 1023 + 500) {
    a = a * 2.409919865102884e-181; // 2^-600
    b = b * 2.409919865102884e-181;
    scale = 4.149515568880993e+180;
  } else if (eb < 1023 - 500) {
    a = a * 4.149515568880993e+180;
    b = b * 4.149515568880993e+180;
    scale = 2.409919865102884e-181;
  }
  // a² + b² = sh + sl
  const pa = a * a;
  const pb = b * b;
  const sh = pa + pb;
  const sl = __sumErr(pa, pb, sh) + (__mulErr(a, a, pa) + __mulErr(b, b, pb));
  const h = Math.sqrt(sh + sl);
  const hh = h * h;
  const res = ((sh - hh) - __mulErr(h, h, hh)) + sl; // a² + b² − h²
  return (h + res / (2.0 * h)) * scale;
}

export function __sign64(x: number): number {
  if (x > 0) return 1.0;
  if (x < 0) return -1.0;
  return x; // ±0, NaN
}
