// Error-free transformations (Dekker 1971, Knuth TAOCP vol. 2 §4.2.2) without fma,
// as scalar helpers: the caller keeps the rounded result, the helper returns the
// exact error, so no tuple returns are needed.

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
