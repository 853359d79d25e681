// Native float32 cbrt and sign (no float64), in the numbats kernel language.
//
// Initial estimate from the exponent bits (bits/3 + B1, fdlibm s_cbrtf.c's published B1; |error| < 1/32),
// two Newton steps in float32 (error ≈ 2^-20), then one correction y + (a − y³)/(3y²) with y³ formed
// from the exact square (fma), so the result has one significant rounding.

import { __f32bits, __f32frombits, __fma32 } from "./bits.js";

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

export function __sign32(x: number): number {
  return x > 0 ? Math.fround(1) : x < 0 ? Math.fround(-1) : x; // ±0 and NaN pass through
}
