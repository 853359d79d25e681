// exp, exp2, expm1 (float64), in the numbats kernel language.
//
// Algorithm: Cody–Waite reduction x = k·ln2 + r, |r| ≤ ln2/2, with ln2 split
// into a 32-bit head (k·LN2_HI is exact) and a tail; exp(r) from fdlibm's
// rational form 1 + r + r·c/(2 − c), c = r − r²·P(r²). Coefficients P1..P5,
// Q1..Q5 and the thresholds are fdlibm's published constants (e_exp.c,
// s_expm1.c, Sun Microsystems 1993/2004).

import { __f64hi, __f64make } from "./bits.js";
import { __mulErr } from "./dd.js";

/** y·2^k with a single rounding, for |k| ≤ 2000 (two exact power-of-two steps). */
export function __scalbn(y: number, k: number): number {
  const k1 = k >> 1;
  const k2 = k - k1;
  return y * __f64make((k1 + 1023) << 20, 0) * __f64make((k2 + 1023) << 20, 0);
}

/** 2^k · exp(hi − lo) for |hi − lo| ≲ 0.35, k in [-1080, 1025] (fdlibm's rational kernel). */
export function __expk(hi: number, lo: number, k: number): number {
  const [P1, P2, P3, P4, P5] = [
    1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
    -1.65339022054652515390e-06, 4.13813679705723846039e-08,
  ];
  const r = hi - lo;
  const t = r * r;
  const c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  const y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
  return __scalbn(y, k);
}

export function __exp64(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x > 7.09782712893383973096e+02) return Infinity;
  if (x < -7.45133219101941108420e+02) return 0.0;
  if ((__f64hi(x) & 0x7fffffff) < 0x3e300000) return 1.0 + x; // |x| < 2^-28
  const LN2_HI = 6.93147180369123816490e-01;
  const LN2_LO = 1.90821492927058770002e-10;
  const k = Math.floor(x * 1.44269504088896338700 + 0.5) | 0;
  return __expk(x - k * LN2_HI, k * LN2_LO, k);
}

export function __exp264(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x >= 1024.0) return Infinity;
  if (x < -1080.0) return 0.0;
  const k = Math.floor(x + 0.5) | 0;
  const r = x - k; // exact
  // r·ln2 as p + e (ln2 as a double-double; Dekker's exact product): exp2(x) = 2^k·exp(p + e)
  const LN2 = 0.6931471805599453;
  const p = r * LN2;
  const e = __mulErr(r, LN2, p) + r * 2.3190468138462996e-17;
  return __expk(p, -e, k);
}

export function __expm164(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x > 7.09782712893383973096e+02) return Infinity;
  if (x < -38.816242111356935) return -1.0; // x < -56·ln2: exp(x) < 2^-56
  const hx = __f64hi(x) & 0x7fffffff;
  if (hx < 0x3c900000) return x; // |x| < 2^-54 (keeps -0)
  const LN2_HI = 6.93147180369123816490e-01;
  const LN2_LO = 1.90821492927058770002e-10;
  let k = 0;
  let r = x;
  let c = 0.0;
  if (hx > 0x3fd62e42) {
    // |x| > ln2/2: reduce, keeping the rounding error of r in c
    k = Math.floor(x * 1.44269504088896338700 + 0.5) | 0;
    const hi = x - k * LN2_HI;
    const lo = k * LN2_LO;
    r = hi - lo;
    c = (hi - r) - lo;
  }
  // expm1(r) = r + r²/2 + r³/2·[(3 − (R1 + R1·r/2)) / (6 − r(3 − R1·r/2))], R1 a polynomial in r²/2
  const [Q1, Q2, Q3, Q4, Q5] = [
    -3.33333333333331316428e-02, 1.58730158725481460165e-03, -7.93650757867487942473e-05,
    4.00821782732936239552e-06, -2.01099218183624371326e-07,
  ];
  const hfx = 0.5 * r;
  const hxs = r * hfx;
  const r1 = 1.0 + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
  const t = 3.0 - r1 * hfx;
  let e = hxs * ((r1 - t) / (6.0 - r * t));
  if (k === 0) return r - (r * e - hxs);
  // expm1(r + c) ≈ expm1(r) + c + r·c; then scale: 2^k·(1 + expm1(r)) − 1
  e = (r * (e - c) - c) - hxs;
  if (k === -1) return 0.5 * (r - e) - 0.5;
  if (k === 1) {
    if (r < -0.25) return -2.0 * (e - (r + 0.5));
    return 1.0 + 2.0 * (r - e);
  }
  if (k <= -2 || k > 56) return __scalbn(1.0 - (e - r), k) - 1.0;
  if (k < 20) {
    const oneMinus = __f64make(0x3ff00000 - (0x200000 >> k), 0); // 1 − 2^-k
    return __scalbn(oneMinus - (e - r), k);
  }
  const twoMinusK = __f64make((0x3ff - k) << 20, 0); // 2^-k
  return __scalbn((r - (e + twoMinusK)) + 1.0, k);
}
