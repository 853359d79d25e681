// Error-free transformations (Dekker 1971, Knuth TAOCP vol. 2 §4.2.2) as scalar helpers: the caller
// keeps the rounded result, the helper returns the exact error, so no tuple returns are needed.
// __mulErr is float64 without fma; __sumErr works in either format (the float32 library calls it with
// float32 operands); __divLo32 is float32 with fma. Last, the float32 Horner helpers of the native
// float32 kernels.

import { __fma32 } from "./bits.js";

/** a·b − p exactly, for p = fl(a·b) (Veltkamp split; |a|, |b| < 2^996, no underflow). */
export function __mulErr(a: number, b: number, p: number): number {
  const SPLIT = 134217729.0; // 2^27 + 1
  const ca = SPLIT * a;
  const ah = ca - (ca - a);
  const al = a - ah;
  const cb = SPLIT * b;
  const bh = cb - (cb - b);
  const bl = b - bh;
  return (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
}

/** (a + b) − s exactly, for s = fl(a + b) (Knuth's TwoSum, any magnitudes). */
export function __sumErr(a: number, b: number, s: number): number {
  const bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

/** The correction (n − v·(d + dl))/(d + dl) to v = fl(n/d), from the exact fma residual n − v·d. */
export function __divLo32(n: number, d: number, dl: number, v: number): number {
  return __fma32(-v, dl, __fma32(-v, d, n)) / d;
}

/** c3·t³ + c2·t² + c1·t + c0 by Horner's rule in float32 fma (coefficients passed as float32). */
export function __poly3f32(t: number, c3: number, c2: number, c1: number, c0: number): number {
  return __fma32(__fma32(__fma32(t, c3, c2), t, c1), t, c0);
}

/** c5·t⁵ + … + c0 by Horner's rule in float32 fma (coefficients passed as float32). */
export function __poly5f32(t: number, c5: number, c4: number, c3: number, c2: number, c1: number, c0: number): number {
  return __fma32(__fma32(__poly3f32(t, c5, c4, c3, c2), t, c1), t, c0);
}
