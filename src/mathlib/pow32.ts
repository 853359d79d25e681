// Native float32 pow (no float64), with JavaScript's Math.pow special cases, in the numbats kernel language.
//
// pow(x, y) = 2^(y·log2|x|) with log2|x| as a double-float32 (a float32 pair, fma-based products):
// x = 2^k·m, √½ ≤ m < √2, s = (m − 1)/(m + 1) as a pair (|s| ≤ 0.1716), log2 m = 2·atanh(s)/ln2 =
// A1·s + A3·s³ + s⁵·(A5 + A7·s² + A9·s⁴ + A11·s⁶) (Taylor, A_i = 2/(i·ln2); truncation below 2^-34
// relative): A1·s and A3·s³ as pairs, the rest in float32 (it is below 2^-12 of the sum), and k added
// exactly, so log2|x| is accurate to about 2^-40 relative. t = y·log2|x| is formed as a pair (fma) and
// 2^t = 2^n·e^((t − n)·ln2) by exp32.ts's kernel on the pair, with one rounding (two for subnormal results).

import { __f32bits, __fma32 } from "./bits.js";
import { __divLo32 } from "./dd.js";
import { __expY32, __ldexp32 } from "./exp32.js";
import { __logB32, __logF32 } from "./log32.js";

/** log2 x for finite x > 0 as [h, l], h + l accurate to ~2^-40 relative (see the header). */
export function __log2Pair32(x: number): [number, number] {
  const b = __logB32(x);
  const f = __logF32(b);
  const kf = Math.fround(b >> 23);
  // s = f/(2 + f) = sh + sl
  const d = Math.fround(2 + f); // (fround: the plain-JS run computes in float64)
  const dl = (2 - d) + f; // Fast2Sum
  const sh = Math.fround(f / d);
  const sl = __divLo32(f, d, dl, sh);
  // s² = z + zl, s³ = ch + cl
  const z = Math.fround(sh * sh);
  const zl = __fma32(sh, sh, -z) + 2 * sh * sl;
  const ch = Math.fround(sh * z);
  const cl = __fma32(sh, z, -ch) + __fma32(sh, zl, sl * z);
  // A1·s = ah + al, A3·s³ = bh + bl, the rest r
  const ah = Math.fround(sh * 2.885390043258667);
  const al = __fma32(sh, 2.885390043258667, -ah) + __fma32(sh, 3.851926067000022e-8, sl * 2.885390043258667);
  const bh = Math.fround(ch * 0.9617967009544373);
  const bl = __fma32(ch, 0.9617967009544373, -bh) + __fma32(ch, -7.028461812552678e-9, cl * 0.9617967009544373);
  const p = __fma32(__fma32(__fma32(z, 0.26230818033218384, 0.32059890031814575), z, 0.41219857335090637), z, 0.5770780444145203);
  const r = ch * z * p;
  // k + ah + bh, each a Fast2Sum (|k| ≥ 1 > |ah| unless k = 0; |ah| > 100·|bh|)
  const u = Math.fround(ah + bh);
  const ul = (ah - u) + bh;
  const h = Math.fround(kf + u);
  const hl = (kf - h) + u;
  const lo = hl + (ul + (al + (bl + r)));
  const lh = Math.fround(h + lo);
  return [lh, Math.fround((h - lh) + lo)];
}

/** 2^(th + tl) for −152 < th < 129, |tl| ≲ ulp(th): n = round(th), e^((th − n + tl)·ln2)·2^n, th − n + tl as a pair. */
export function __exp2Pair32(th: number, tl: number): number {
  const j = Math.fround(th + 12582912); // 1.5·2^23 + round(th)
  const rh = th - (j - 12582912); // exact, |rh| ≤ ½, a multiple of ulp(th): |rh| ≥ |tl| or rh = 0
  const r = Math.fround(rh + tl); // (fround: the plain-JS run computes in float64)
  const rl = (rh - r) + tl; // Fast2Sum
  // r·ln2 = ph + pl, |pl| ≲ ulp(ph) as __expY32 needs
  const ph = Math.fround(r * 0.6931471824645996);
  const pl = __fma32(r, 0.6931471824645996, -ph) + __fma32(r, -1.9046542121259336e-9, rl * 0.6931471824645996);
  return __ldexp32(__expY32(ph, pl), __f32bits(j) - 0x4b400000);
}

export function __pow32(x: number, y: number): number {
  if (Number.isNaN(y)) return Math.fround(NaN);
  if (y === 0) return Math.fround(1); // even for x = NaN
  if (Number.isNaN(x)) return Math.fround(NaN);
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  if (ay === Infinity) {
    if (ax === 1) return Math.fround(NaN); // JS, unlike C
    return (ax > 1) === (y > 0) ? Math.fround(Infinity) : Math.fround(0);
  }
  // a float32 of magnitude ≥ 2^24 is an even integer
  const yInt = ay >= 16777216 || Math.floor(y) === y;
  const yOdd = ay < 16777216 && yInt && Math.floor(y * 0.5) !== y * 0.5;
  const negX = __f32bits(x) < 0;
  if (ax === 0 || ax === Infinity) {
    // |x|^y is 0 or Infinity; the sign is x's for odd integer y
    const mag = (ax === 0) === (y < 0) ? Math.fround(Infinity) : Math.fround(0);
    return negX && yOdd ? -mag : mag;
  }
  if (negX && !yInt) return Math.fround(NaN);
  // the sign is applied by negation, never by multiplying by -1: a WGSL compiler may fold `s * 0` to +0
  const negative = negX && yOdd;
  let r = Math.fround(1);
  if (ax !== 1) {
    const [lh, ll] = __log2Pair32(ax);
    const th = Math.fround(y * lh);
    if (!(th < 129)) r = Math.fround(Infinity); // 2^t overflows (th = +Inf included)
    else if (!(th > -152)) r = Math.fround(0); // below half the least subnormal
    else r = __exp2Pair32(th, __fma32(y, lh, -th) + y * ll);
  }
  return negative ? -r : r;
}
