// atan, atan2, asin, acos (float64), in the numbats kernel language.
//
// Algorithms and coefficients: fdlibm s_atan.c, e_atan2.c, e_asin.c, e_acos.c
// (Sun Microsystems 1993). atan reduces |x| to [0, 7/16] with the identities
// atan(x) = atan(c) + atan((x − c)/(1 + c·x)), c ∈ {1/2, 1, 3/2, ∞}, then an
// odd degree-22 minimax polynomial (aT0..aT10). asin/acos use a rational
// minimax R(x²) on [0, 1/2] and asin(x) = π/2 − 2·asin(√((1 − x)/2)) above.

import { __f64hi, __f64lo, __f64make } from "./bits.js";

export function __atan64(x0: number): number {
  const hx = __f64hi(x0);
  const ix = hx & 0x7fffffff;
  if (Number.isNaN(x0)) return x0;
  if (ix >= 0x44100000) return hx < 0 ? -1.5707963267948966 : 1.5707963267948966; // |x| ≥ 2^66
  if (ix < 0x3e200000) return x0; // |x| < 2^-29 (keeps -0)
  let x = x0;
  let id = -1;
  let hi = 0.0;
  let lo = 0.0;
  if (ix >= 0x3fdc0000) {
    x = Math.abs(x0);
    if (ix < 0x3fe60000) {
      id = 0; // 7/16 ≤ |x| < 11/16
      x = (2.0 * x - 1.0) / (2.0 + x);
      hi = 4.63647609000806093515e-01;
      lo = 2.26987774529616870924e-17;
    } else if (ix < 0x3ff30000) {
      id = 1; // < 19/16
      x = (x - 1.0) / (x + 1.0);
      hi = 7.85398163397448278999e-01;
      lo = 3.06161699786838301793e-17;
    } else if (ix < 0x40038000) {
      id = 2; // < 39/16
      x = (x - 1.5) / (1.0 + 1.5 * x);
      hi = 9.82793723247329054082e-01;
      lo = 1.39033110312309984516e-17;
    } else {
      id = 3;
      x = -1.0 / x;
      hi = 1.57079632679489655800e+00;
      lo = 6.12323399573676603587e-17;
    }
  }
  const z = x * x;
  const w = z * z;
  const s1 = z * (3.33333333333329318027e-01 + w * (1.42857142725034663711e-01 + w * (9.09088713343650656196e-02 +
    w * (6.66107313738753120669e-02 + w * (4.97687799461593236017e-02 + w * 1.62858201153657823623e-02)))));
  const s2 = w * (-1.99999999998764832476e-01 + w * (-1.11111104054623557880e-01 + w * (-7.69187620504482999495e-02 +
    w * (-5.83357013379057348645e-02 + w * -3.65315727442169155270e-02))));
  if (id < 0) return x - x * (s1 + s2);
  const r = hi - ((x * (s1 + s2) - lo) - x);
  return hx < 0 ? -r : r;
}

export function __atan264(y: number, x: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  const [PI, PI_LO, PIO2, PIO4] = [
    3.1415926535897931160, 1.2246467991473531772e-16, 1.5707963267948966, 0.7853981633974483,
  ];
  const hx = __f64hi(x);
  const hy = __f64hi(y);
  const m = (hy < 0 ? 1 : 0) + (hx < 0 ? 2 : 0); // bit 0: sign of y, bit 1: sign of x
  if (y === 0) {
    if (m < 2) return y; // atan2(±0, +anything) = ±0
    return m === 2 ? PI : -PI;
  }
  if (x === 0) return hy < 0 ? -PIO2 : PIO2;
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  if (ax === Infinity) {
    if (ay === Infinity) {
      if (m === 0) return PIO4;
      if (m === 1) return -PIO4;
      if (m === 2) return 3.0 * PIO4;
      return -3.0 * PIO4;
    }
    if (m < 2) return y * 0; // ±0 with y's sign (y is finite); no `-0.0` literal, which a reprint makes the int 0
    if (m === 2) return PI;
    return -PI;
  }
  if (ay === Infinity) return hy < 0 ? -PIO2 : PIO2;
  const k = (((hy & 0x7fffffff) >> 20) - ((hx & 0x7fffffff) >> 20)); // exponent difference
  let z = 0.0;
  if (k > 60) z = PIO2 + 0.5 * PI_LO; // |y/x| > 2^60
  else if (hx < 0 && k < -60) z = 0.0; // |y/x| < 2^-60 with x < 0: the result is ±π
  else z = __atan64(ay / ax);
  if (m === 0) return z;
  if (m === 1) return -z;
  if (m === 2) return PI - (z - PI_LO);
  return (z - PI_LO) - PI;
}

/** fdlibm's R(z) = (asin(√z) − √z)/√z³ ≈ p(z)/q(z) on [0, 1/4], returned as z·p/q. */
export function __asinR(z: number): number {
  const p = z * (1.66666666666666657415e-01 + z * (-3.25565818622400915405e-01 + z * (2.01212532134862925881e-01 +
    z * (-4.00555345006794114027e-02 + z * (7.91534994289814532176e-04 + z * 3.47933107596021167570e-05)))));
  const q = 1.0 + z * (-2.40339491173441421878e+00 + z * (2.02094576023350569471e+00 +
    z * (-6.88283971605453293030e-01 + z * 7.70381505559019352791e-02)));
  return p / q;
}

export function __asin64(x: number): number {
  const PIO2_HI = 1.57079632679489655800e+00;
  const PIO2_LO = 6.12323399573676603587e-17;
  const PIO4_HI = 7.85398163397448278999e-01;
  const hx = __f64hi(x);
  const ix = hx & 0x7fffffff;
  if (Number.isNaN(x)) return x;
  if (ix >= 0x3ff00000) {
    if (((ix - 0x3ff00000) | __f64lo(x)) === 0) return x * PIO2_HI + x * PIO2_LO; // ±1
    return NaN;
  }
  if (ix < 0x3fe00000) {
    // |x| < 1/2
    if (ix < 0x3e400000) return x; // |x| < 2^-27
    return x + x * __asinR(x * x);
  }
  const t = (1.0 - Math.abs(x)) * 0.5;
  const r = __asinR(t);
  const s = Math.sqrt(t);
  let res = 0.0;
  if (ix >= 0x3fef3333) {
    // |x| > 0.975
    res = PIO2_HI - (2.0 * (s + s * r) - PIO2_LO);
  } else {
    // s = sh + c with sh's low word cleared, so 2·sh and pio4 − 2·sh are exact
    const sh = __f64make(__f64hi(s), 0);
    const c = (t - sh * sh) / (s + sh);
    const p = 2.0 * s * r - (PIO2_LO - 2.0 * c);
    const q = PIO4_HI - 2.0 * sh;
    res = PIO4_HI - (p - q);
  }
  return hx < 0 ? -res : res;
}

export function __acos64(x: number): number {
  const PI = 3.14159265358979311600e+00;
  const PIO2_HI = 1.57079632679489655800e+00;
  const PIO2_LO = 6.12323399573676603587e-17;
  const hx = __f64hi(x);
  const ix = hx & 0x7fffffff;
  if (Number.isNaN(x)) return x;
  if (ix >= 0x3ff00000) {
    if (((ix - 0x3ff00000) | __f64lo(x)) === 0) return hx > 0 ? 0.0 : PI + 2.0 * PIO2_LO;
    return NaN;
  }
  if (ix < 0x3fe00000) {
    // |x| < 1/2: π/2 − asin(x)
    if (ix <= 0x3c600000) return PIO2_HI + PIO2_LO; // |x| ≤ 2^-57
    return PIO2_HI - (x - (PIO2_LO - x * __asinR(x * x)));
  }
  if (hx < 0) {
    // x ≤ -1/2: π − 2·asin(√((1 + x)/2))
    const z = (1.0 + x) * 0.5;
    const s = Math.sqrt(z);
    const w = __asinR(z) * s - PIO2_LO;
    return PI - 2.0 * (s + w);
  }
  // x ≥ 1/2: 2·asin(√((1 − x)/2)), √ split into a 21-bit head and a correction
  const z = (1.0 - x) * 0.5;
  const s = Math.sqrt(z);
  const df = __f64make(__f64hi(s), 0);
  const c = (z - df * df) / (s + df);
  const w = __asinR(z) * s + c;
  return 2.0 * (df + w);
}
