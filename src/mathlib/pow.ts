// pow (float64) with JavaScript's Math.pow special cases, in the kernel language.
//
// Algorithm: pow(x, y) = exp(y·log|x|) with log|x| carried as a double-double
// to about 2^-67 relative error, so that y·log|x| (up to ±745) is accurate to
// far below half an ulp of the result. log|x| = k·ln2 + 2·atanh(s),
// s = f/(2 + f) (x = 2^k·(1 + f), √½ ≤ 1 + f < √2): 2s and (2/3)s³ are kept as
// double-doubles (Dekker products), the rest 2s⁵·Σ s^(2i)/(2i + 5) is the
// atanh Taylor series (|s| ≤ 0.1716, 11 terms: truncation < 2^-56 of the
// tail, itself < 2^-12 of the result). The exponential reuses exp's kernel.

import { __f64hi } from "./bits.js";
import { __mulErr, __sumErr } from "./dd.js";
import { __expk } from "./exp.js";
import { __logReduce } from "./log.js";

/** JavaScript's Math.pow special cases (NaN/±0/±Inf operands and huge |y|) apply before this. */
export function __pow64(x: number, y: number): number {
  if (Number.isNaN(y)) return NaN;
  if (y === 0) return 1.0; // even for x = NaN
  if (Number.isNaN(x)) return NaN;
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  if (ay === Infinity) {
    if (ax === 1.0) return NaN; // JS, unlike C
    return (ax > 1.0) === (y > 0) ? Infinity : 0.0;
  }
  let yInt = true;
  let yOdd = false;
  if (ay < 9007199254740992.0) {
    yInt = Math.floor(y) === y;
    yOdd = yInt && Math.floor(y * 0.5) !== y * 0.5;
  }
  const negX = __f64hi(x) < 0;
  if (ax === 0 || ax === Infinity) {
    // |x|^y is 0 or Infinity; the sign is x's for odd integer y
    const big = (ax === 0) === (y < 0);
    const mag = big ? Infinity : 0.0;
    return negX && yOdd ? -mag : mag;
  }
  if (negX && !yInt) return NaN;
  const sign = negX && yOdd ? -1.0 : 1.0;
  if (ax === 1.0) return sign;
  if (ay > 1.8446744073709552e19) {
    // |y| > 2^64 and |log x| ≥ 2^-53: far beyond the exponent range
    return (ax > 1.0) === (y > 0) ? Infinity : 0.0;
  }

  // log|x| = lh + ll
  const [k, f] = __logReduce(ax);
  const d = 2.0 + f;
  const dl = f - (d - 2.0); // 2 + f = d + dl exactly
  const sh = f / d;
  const p = sh * d;
  const sl = (((f - p) - __mulErr(sh, d, p)) - sh * dl) / d; // s = sh + sl
  const zh = sh * sh;
  const zl = __mulErr(sh, sh, zh) + 2.0 * sh * sl; // s² = zh + zl
  const ch = sh * zh;
  const cl = __mulErr(sh, zh, ch) + (sh * zl + sl * zh); // s³ = ch + cl
  const TWO_THIRDS = 0.6666666666666666;
  const th = TWO_THIRDS * ch;
  const tl = __mulErr(TWO_THIRDS, ch, th) + (TWO_THIRDS * cl + 3.700743415417188e-17 * ch);
  const q =
    0.2 + zh * (1.0 / 7.0 + zh * (1.0 / 9.0 + zh * (1.0 / 11.0 + zh * (1.0 / 13.0 + zh * (1.0 / 15.0 +
    zh * (1.0 / 17.0 + zh * (1.0 / 19.0 + zh * (1.0 / 21.0 + zh * (1.0 / 23.0 + zh * (1.0 / 25.0))))))))));
  const tail = 2.0 * ch * zh * q;
  const LN2_HI = 6.93147180369123816490e-01; // 32 bits: k·LN2_HI is exact
  const kh = k * LN2_HI;
  const s1 = kh + 2.0 * sh;
  const e1 = __sumErr(kh, 2.0 * sh, s1);
  const s2 = s1 + th;
  const e2 = __sumErr(s1, th, s2);
  const lo = e1 + e2 + (2.0 * sl + tl + tail + k * 1.90821492927058770002e-10);
  const lh = s2 + lo;
  const ll = lo - (lh - s2);

  // t = y·log|x| = th2 + tl2, then exp(t) = 2^n·exp(t − n·ln2)
  const t = y * lh;
  const tt = __mulErr(y, lh, t) + y * ll;
  if (t > 710.0) return sign * Infinity;
  if (t < -746.0) return sign * Number.MIN_VALUE * 0.5; // underflows to ±0 (`sign * 0.0` would lose -0 if `0.0` were read as an int)
  const n = Math.floor(t * 1.44269504088896338700 + 0.5) | 0;
  return sign * __expk(t - n * LN2_HI, n * 1.90821492927058770002e-10 - tt, n);
}
