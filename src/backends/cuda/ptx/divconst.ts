// Magic numbers for integer division by a constant (Granlund & Montgomery,
// PLDI 1994; Warren, Hacker's Delight 2nd ed. §10). ptxas lowers `div` by a
// constant to the generic ~18-instruction sequence and never hoists it, so the
// emitter replaces it with a multiply-high and shifts using these.

/** signed: q = mulhi(m, n) (+n if `add` > 0, −n if < 0) >> shift, then +1 if negative */
export interface SignedMagic { readonly m: bigint; readonly shift: number; readonly add: -1 | 0 | 1 }

/** Hacker's Delight Figure 10-1, for 2 <= |d| < 2^(w-1), d not a power of two. */
export function signedMagic(d: bigint, w: number): SignedMagic {
  const mask = (x: bigint) => BigInt.asUintN(w, x);
  const two = 1n << BigInt(w - 1);
  const ad = d < 0n ? -d : d;
  const t = two + (d < 0n ? 1n : 0n);
  const anc = t - 1n - (t % ad);
  let p = w - 1;
  let q1 = two / anc, r1 = two - q1 * anc;
  let q2 = two / ad, r2 = two - q2 * ad;
  let delta: bigint;
  do {
    p++;
    q1 = mask(2n * q1); r1 = mask(2n * r1);
    if (r1 >= anc) { q1 = mask(q1 + 1n); r1 = mask(r1 - anc); }
    q2 = mask(2n * q2); r2 = mask(2n * r2);
    if (r2 >= ad) { q2 = mask(q2 + 1n); r2 = mask(r2 - ad); }
    delta = ad - r2;
  } while (q1 < delta || (q1 === delta && r1 === 0n));
  let m = BigInt.asIntN(w, q2 + 1n);
  if (d < 0n) m = BigInt.asIntN(w, -m);
  const add = d > 0n && m < 0n ? 1 : d < 0n && m > 0n ? -1 : 0;
  return { m, shift: p - w, add };
}

/** unsigned, any d >= 2 not a power of two: t = mulhi(m, n); q = (t + ((n − t) >> 1)) >> (l − 1) */
export interface UnsignedMagic { readonly m: bigint; readonly l: number }

export function unsignedMagic(d: bigint, w: number): UnsignedMagic {
  const l = ceilLog2(d);
  const m = ((1n << BigInt(w)) * ((1n << BigInt(l)) - d)) / d + 1n;
  return { m: BigInt.asUintN(w, m), l };
}

export const isPow2 = (d: bigint): boolean => d > 0n && (d & (d - 1n)) === 0n;

export function ceilLog2(d: bigint): number {
  let l = 0;
  while ((1n << BigInt(l)) < d) l++;
  return l;
}
