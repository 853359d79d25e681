// Native float32 cbrt, hypot and sign (no float64), in the numbats kernel language.
//
// cbrt:
// Initial estimate from the exponent bits (bits/3 + B1, fdlibm s_cbrtf.c's published B1; |error| < 1/32),
// two Newton steps in float32 (error ≈ 2^-20), then one correction y + (a − y³)/(3y²) with y³ formed
// from the exact square (fma), so the result has one significant rounding.
// hypot: both operands scaled by the same power of two so that the larger is in [1, 2) (exact, unless the
// smaller underflows, which is then below 2^-126 of the larger), a² + b² formed as a pair (fma squares,
// Fast2Sum), its square root corrected by the fma residual (__sqrtLo32), scaled back: one significant
// rounding, a subnormal result rounded once to its own quantum.

import { __f32bits, __f32frombits, __fma32 } from "./bits.js";
import { __sqrtLo32 } from "./log32.js";

export function __cbrt32(x: number): number {
  const ax = Math.abs(x);
  if (!(ax < Infinity) || ax === 0) return x; // ±0, ±Inf, NaN
  let a = ax;
  let scale = Math.fround(1);
  if (ax < 8.673617379884035e-19) {
    // |x| < 2^-60: cbrt(x·2^72) = cbrt(x)·2^24, so that a − y³ below stays a normal number (an adapter
    // that flushes subnormals, as WebGPU's may, would lose it) and subnormal x becomes normal
    a = ax * 4722366482869645213696;
    scale = Math.fround(5.960464477539063e-8);
  }
  let y = __f32frombits(((__f32bits(a) / 3) | 0) + 709958130);
  y = y + (a / (y * y) - y) * 0.3333333432674408;
  y = y + (a / (y * y) - y) * 0.3333333432674408;
  const y2 = y * y;
  const y2l = __fma32(y, y, -y2);
  const r = __fma32(-y2, y, a) - y2l * y; // a − y³
  const res = Math.fround((y + r / (3 * y2)) * scale);
  return x < 0 ? -res : res;
}

export function __hypot32(x: number, y: number): number {
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  if (ax === Infinity || ay === Infinity) return Math.fround(Infinity); // even with a NaN (JS)
  if (Number.isNaN(ax) || Number.isNaN(ay)) return Math.fround(NaN);
  const big = Math.max(ax, ay);
  if (big === 0) return Math.fround(0);
  // the exponent k of the larger (−127 for a subnormal), applied as two factors 2^∓k1, 2^∓k2 in [2^-64, 2^64]
  const k = (__f32bits(big) >> 23) - 127;
  const k1 = k >> 1;
  const k2 = k - k1;
  const d1 = __f32frombits((127 - k1) << 23);
  const d2 = __f32frombits((127 - k2) << 23);
  const a = Math.fround(big * d1) * d2; // in [1, 2), exact (fround: the plain-JS run computes in float64)
  const b = Math.fround(Math.fround(Math.min(ax, ay) * d1) * d2);
  // a² + b² = s + sl
  const a2 = a * a;
  const b2 = Math.fround(b * b);
  const s = Math.fround(a2 + b2);
  const sl = (((a2 - s) + b2) + __fma32(a, a, -a2)) + __fma32(b, b, -b2); // a² ≥ b²: Fast2Sum
  const r = Math.sqrt(s);
  const corr = __sqrtLo32(s, sl, r);
  let res = Math.fround(r + corr);
  if (k < -126 && res < __f32frombits((1 - k) << 23)) {
    // a subnormal result (below 2^(−126 − k) here): round r + corr once, to the multiple of the subnormal
    // quantum q = 2^(−149 − k) ≥ 2^-22: r (< 2^23·q) to the grid by the 2^23·q shifter, then up or down by q
    // where the rest (r − n, exact) + corr passes ±q/2 (compared without rounding)
    const q = __f32frombits((-22 - k) << 23);
    const c = 8388608 * q;
    const n = Math.fround(r + c) - c; // (fround: the plain-JS run computes in float64)
    const e = r - n;
    const h = 0.5 * q;
    res = e - h > -corr ? n + q : e + h < -corr ? n - q : n;
  }
  // exact but for overflow (res·2^k on the float32 grid)
  return Math.fround(Math.fround(res * __f32frombits((127 + k1) << 23)) * __f32frombits((127 + k2) << 23));
}

export function __sign32(x: number): number {
  return x > 0 ? Math.fround(1) : x < 0 ? Math.fround(-1) : x; // ±0 and NaN pass through
}
