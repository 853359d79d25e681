// erf, erfc, lgamma, tgamma (float64), in the numbats kernel language, and their float32 variants.
//
// erf, erfc: fdlibm s_erf.c (Sun Microsystems 1993): x + x·R(x²) on |x| < 0.84375, erf(1) − c +
// P/Q(|x| − 1) on [0.84375, 1.25), and exp(−z² − 0.5625)·exp((z − x)(z + x) + R/S(1/x²))/x beyond
// (z = x with its low word cleared, so z² is exact); the published rational coefficients.
// lgamma: fdlibm e_lgamma_r.c: reduction of 0 < x < 8 to [2, 3) by lgamma(x + 1) = log(x) + lgamma(x),
// polynomials around the minimum (1.4616…) and on the primary intervals, Stirling's series in 1/x
// from 8, and the reflection log(π/|x·sin(πx)|) − lgamma(−x) for x < 0.
// tgamma: the Lanczos approximation (N = 12, g = 6.0246800407767296; Godfrey's coefficients, as in
// musl's tgamma.c): Γ(x) = S(x)·(x + g − ½)^(x − ½)·e^-(x + g − ½), the rounding error of x + g − ½
// corrected to first order, the power split in two halves so it cannot overflow early; x < 0 by the
// reflection Γ(x) = −π/(x·sin(πx)·Γ(−x)); integers up to 23 are exact products.
//
// The float32 variants are native float32 (special32.ts).

import { __f64hi, __f64lo, __f64make } from "./bits.js";
import { __exp64 } from "./exp.js";
import { __log64 } from "./log.js";
import { __pow64 } from "./pow.js";
import { __kCos, __kSin } from "./trig.js";

/** On |x| < 0.84375: the rational y with erf(x) = x + x·y. */
export function __erfSmall(x: number): number {
  const z = x * x;
  const r = 1.28379167095512558561e-01 + z * (-3.25042107247001499370e-01 + z * (-2.84817495755985104766e-02 +
    z * (-5.77027029648944159157e-03 + z * -2.37630166566501626084e-05)));
  const s = 1.0 + z * (3.97917223959155352819e-01 + z * (6.50222499887672944485e-02 + z * (5.08130628187576562776e-03 +
    z * (1.32494738004321644526e-04 + z * -3.96022827877536812320e-06))));
  return r / s;
}

/** erf(1 + s) − c (c = 0.845062911510467529297, erf(1) rounded to 24 bits) for s = |x| − 1 in [−0.15625, 0.25). */
export function __erfNearOne(s: number): number {
  const p = -2.36211856075265944077e-03 + s * (4.14856118683748331666e-01 + s * (-3.72207876035701323847e-01 +
    s * (3.18346619901161753674e-01 + s * (-1.10894694282396677476e-01 + s * (3.54783043256182359371e-02 +
    s * -2.16637559486879084300e-03)))));
  const q = 1.0 + s * (1.06420880400844228286e-01 + s * (5.40397917702171048937e-01 + s * (7.18286544141962662868e-02 +
    s * (1.26171219808761642112e-01 + s * (1.36370839120290507362e-02 + s * 1.19844998467991074170e-02)))));
  return p / q;
}

/** erfc(a) for 1.25 ≤ a < 28: exp(−a² − 0.5625 + R/S(1/a²))/a, a² as the exact z² plus (z − a)(z + a). */
export function __erfcTail(a: number): number {
  const s = 1.0 / (a * a);
  let r = 0.0;
  if (__f64hi(a) < 0x4006db6e) { // a < 1/0.35
    r = (-9.86494403484714822705e-03 + s * (-6.93858572707181764372e-01 + s * (-1.05586262253232909814e+01 +
      s * (-6.23753324503260060396e+01 + s * (-1.62396669462573470355e+02 + s * (-1.84605092906711035994e+02 +
      s * (-8.12874355063065934246e+01 + s * -9.81432934416914548592e+00))))))) /
      (1.0 + s * (1.96512716674392571292e+01 + s * (1.37657754143519042600e+02 + s * (4.34565877475229228821e+02 +
      s * (6.45387271733267880336e+02 + s * (4.29008140027567833386e+02 + s * (1.08635005541779435134e+02 +
      s * (6.57024977031928170135e+00 + s * -6.04244152148580987438e-02))))))));
  } else {
    r = (-9.86494292470009928597e-03 + s * (-7.99283237680523006574e-01 + s * (-1.77579549177547519889e+01 +
      s * (-1.60636384855821916062e+02 + s * (-6.37566443368389627722e+02 + s * (-1.02509513161107724954e+03 +
      s * -4.83519191608651397019e+02)))))) /
      (1.0 + s * (3.03380607434824582924e+01 + s * (3.25792512996573918826e+02 + s * (1.53672958608443695994e+03 +
      s * (3.19985821950859553908e+03 + s * (2.55305040643316442583e+03 + s * (4.74528541206955367215e+02 +
      s * -2.24409524465858183362e+01)))))));
  }
  const z = __f64make(__f64hi(a), 0);
  return __exp64(-z * z - 0.5625) * __exp64((z - a) * (z + a) + r) / a;
}

export function __erf64(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  if (ax < 0.84375) {
    // |x| < 2^-28: x·2/√π, scaled up below 2^-1015 so the product does not round as a subnormal
    if (ax < 3.725290298461914e-9) return ax < 2.848094538889218e-306 ? 0.125 * (8.0 * x + 1.02703333676410069053e+00 * x) : x + 1.28379167095512586316e-01 * x;
    return x + x * __erfSmall(x);
  }
  let r = 1.0;
  if (ax < 1.25) r = 8.45062911510467529297e-01 + __erfNearOne(ax - 1.0);
  else if (ax < 6) r = 1.0 - __erfcTail(ax); // beyond 6, erf rounds to ±1
  return x < 0 ? -r : r;
}

export function __erfc64(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  if (ax < 0.84375) {
    if (ax < 1.3877787807814457e-17) return 1.0 - x; // |x| < 2^-56
    const y = __erfSmall(x);
    if (x < 0.25) return 1.0 - (x + x * y);
    return 0.5 - (x * y + (x - 0.5));
  }
  if (ax < 1.25) {
    const p = __erfNearOne(ax - 1.0);
    return x > 0 ? 1.54937088489532470703e-01 - p : 1.0 + (8.45062911510467529297e-01 + p); // 1 − c is exact
  }
  if (x > 0) return x < 28 ? __erfcTail(x) : 0.0;
  return x > -6 ? 2.0 - __erfcTail(ax) : 2.0;
}

/** sin(πa) for a > 0 not an integer: a mod 2 (exact), then a kernel on an argument within π/4. */
export function __sinPi64(a: number): number {
  const y = 2.0 * (0.5 * a - Math.floor(0.5 * a)); // a mod 2, exact
  const n = (y * 4.0) | 0;
  const PI = 3.14159265358979311600e+00;
  if (n === 0) return __kSin(PI * y, 0.0);
  if (n <= 2) return __kCos(PI * (0.5 - y), 0.0);
  if (n <= 4) return __kSin(PI * (1.0 - y), 0.0);
  if (n <= 6) return -__kCos(PI * (y - 1.5), 0.0);
  return __kSin(PI * (y - 2.0), 0.0);
}

/** lgamma(x) for 0 < x < 2, x ≠ 1: fdlibm's three polynomials around 1, the minimum and 2. */
export function __lgammaBelow2(x: number): number {
  // fdlibm's intervals, by the high word: i = 0 near 1 or 2, 1 around the minimum tc, 2 near 0 or 1
  const TC = 1.46163214496836224576e+00;
  const ix = __f64hi(x);
  let r = 0.0;
  let y = 0.0;
  let i = 0;
  if (ix <= 0x3feccccc) {
    r = -__log64(x); // lgamma(x) = lgamma(x + 1) − log(x)
    if (ix >= 0x3fe76944) y = 1.0 - x;
    else if (ix >= 0x3fcda661) { y = x - (TC - 1.0); i = 1; }
    else { y = x; i = 2; }
  } else if (ix >= 0x3ffbb4c3) y = 2.0 - x;
  else if (ix >= 0x3ff3b4c4) { y = x - TC; i = 1; }
  else { y = x - 1.0; i = 2; }
  if (i === 0) {
    const z = y * y;
    const p1 = 7.72156649015328655494e-02 + z * (6.73523010531292681824e-02 + z * (7.38555086081402883957e-03 +
      z * (1.19270763183362067845e-03 + z * (2.20862790713908385557e-04 + z * 2.52144565451257326939e-05))));
    const p2 = z * (3.22467033424113591611e-01 + z * (2.05808084325167332806e-02 + z * (2.89051383673415629091e-03 +
      z * (5.10069792153511336608e-04 + z * (1.08011567247583939954e-04 + z * 4.48640949618915160150e-05)))));
    return r + ((y * p1 + p2) - 0.5 * y);
  }
  if (i === 1) {
    const z = y * y;
    const w = z * y;
    const p1 = 4.83836122723810047042e-01 + w * (-3.27885410759859649565e-02 + w * (6.10053870246291332635e-03 +
      w * (-1.40346469989232843813e-03 + w * 3.15632070903625950361e-04)));
    const p2 = -1.47587722994593911752e-01 + w * (1.79706750811820387126e-02 + w * (-3.68452016781138256760e-03 +
      w * (8.81081882437654011382e-04 + w * -3.12754168375120860518e-04)));
    const p3 = 6.46249402391333854778e-02 + w * (-1.03142241298341437450e-02 + w * (2.25964780900612472250e-03 +
      w * (-5.38595305356740546715e-04 + w * 3.35529192635519073543e-04)));
    const p = z * p1 - (-3.63867699703950536541e-18 - w * (p2 + y * p3));
    return r + (-1.21486290535849611461e-01 + p); // the minimum's value (head) + the tail-corrected poly
  }
  const p1 = y * (-7.72156649015328655494e-02 + y * (6.32827064025093366517e-01 + y * (1.45492250137234768737e+00 +
    y * (9.77717527963372745603e-01 + y * (2.28963728064692451092e-01 + y * 1.33810918536787660377e-02)))));
  const p2 = 1.0 + y * (2.45597793713041134822e+00 + y * (2.12848976379893395361e+00 + y * (7.69285150456672783825e-01 +
    y * (1.04222645593369134254e-01 + y * 3.21709242282423911810e-03))));
  return r + (-0.5 * y + p1 / p2);
}

/** lgamma(x) for 2 ≤ x < 8: lgamma(2 + y) by a rational function, times the product (2 + y)…(x − 1). */
export function __lgamma2to8(x: number): number {
  const i = x | 0;
  const y = x - Math.floor(x);
  const p = y * (-7.72156649015328655494e-02 + y * (2.14982415960608852501e-01 + y * (3.25778796408930981787e-01 +
    y * (1.46350472652464452805e-01 + y * (2.66422703033638609560e-02 + y * (1.84028451407337715652e-03 +
    y * 3.19475326584100867617e-05))))));
  const q = 1.0 + y * (1.39200533467621045958e+00 + y * (7.21935547567138069525e-01 + y * (1.71933865632803078993e-01 +
    y * (1.86459191715652901344e-02 + y * (7.77942496381893596434e-04 + y * 7.32668430744625636189e-06)))));
  const r = 0.5 * y + p / q;
  if (i < 3) return r;
  let z = 1.0;
  for (let k = i - 1; k >= 2; k--) z = z * (y + k);
  return r + __log64(z);
}

export function __lgamma64(x: number): number {
  const ax = Math.abs(x);
  if (!(ax < Infinity)) return x * x; // NaN, +∞ for ±∞
  if (ax === 0) return Infinity;
  if (ax < 8.470329472543003e-22) return -__log64(ax); // |x| < 2^-70
  let nadj = 0.0; // x < 0: log(π/|x·sin(πx)|), from which lgamma(−x) is subtracted
  if (x < 0) {
    if (x === Math.floor(x)) return Infinity; // a pole (every x ≤ −2^52 is an integer)
    nadj = __log64(3.14159265358979311600e+00 / Math.abs(__sinPi64(ax) * x));
  }
  let r = 0.0;
  if (ax === 1 || ax === 2) r = 0.0;
  else if (ax < 2) r = __lgammaBelow2(ax);
  else if (ax < 8) r = __lgamma2to8(ax);
  else if (ax < 2.8823037615171174e17) {
    // Stirling: (x − ½)(log x − 1) + w(1/x), from 8 to 2^58
    const z = 1.0 / ax;
    const y = z * z;
    const w = 4.18938533204672725052e-01 + z * (8.33333333333329678849e-02 + y * (-2.77777777728775536470e-03 +
      y * (7.93650558643019558500e-04 + y * (-5.95187557450339963135e-04 + y * (8.36339918996282139126e-04 +
      y * -1.63092934096575273989e-03)))));
    r = (ax - 0.5) * (__log64(ax) - 1.0) + w;
  } else r = ax * (__log64(ax) - 1.0);
  return x < 0 ? nadj - r : r;
}

/** Lanczos' S(a) = num(a)/den(a), polynomials of degree 12 (Godfrey's coefficients; den = a(a + 1)…(a + 11)). */
export function __lanczosS(a: number): number {
  if (a < 8) {
    const num = 23531376880.410759688572007674451636754734846804940 + a * (42919803642.649098768957899047001988850926355848959 +
      a * (35711959237.355668049440185451547166705960488635843 + a * (17921034426.037209699919755754458931112671403265390 +
      a * (6039542586.3520280050642916443072979210699388420708 + a * (1439720407.3117216736632230727949123939715485786772 +
      a * (248874557.86205415651146038641322942321632125127801 + a * (31426415.585400194380614231628318205362874684987640 +
      a * (2876370.6289353724412254090516208496135991145378768 + a * (186056.26539522349504029498971604569928220784236328 +
      a * (8071.6720023658162106380029022722506138218516325024 + a * (210.82427775157934587250973392071336271166969580291 +
      a * 2.5066282746310002701649081771338373386264310793408)))))))))));
    const den = a * (39916800.0 + a * (120543840.0 + a * (150917976.0 + a * (105258076.0 + a * (45995730.0 +
      a * (13339535.0 + a * (2637558.0 + a * (357423.0 + a * (32670.0 + a * (1925.0 + a * (66.0 + a)))))))))));
    return num / den;
  }
  // the same sums in 1/a, each step a division by a (as the polynomial in a would overflow)
  const num = 2.5066282746310002701649081771338373386264310793408 + (210.82427775157934587250973392071336271166969580291 +
    (8071.6720023658162106380029022722506138218516325024 + (186056.26539522349504029498971604569928220784236328 +
    (2876370.6289353724412254090516208496135991145378768 + (31426415.585400194380614231628318205362874684987640 +
    (248874557.86205415651146038641322942321632125127801 + (1439720407.3117216736632230727949123939715485786772 +
    (6039542586.3520280050642916443072979210699388420708 + (17921034426.037209699919755754458931112671403265390 +
    (35711959237.355668049440185451547166705960488635843 + (42919803642.649098768957899047001988850926355848959 +
    23531376880.410759688572007674451636754734846804940 / a) / a) / a) / a) / a) / a) / a) / a) / a) / a) / a) / a;
  const den = 1.0 + (66.0 + (1925.0 + (32670.0 + (357423.0 + (2637558.0 + (13339535.0 + (45995730.0 + (105258076.0 +
    (150917976.0 + (120543840.0 + 39916800.0 / a) / a) / a) / a) / a) / a) / a) / a) / a) / a) / a;
  return num / den;
}

export function __tgamma64(x: number): number {
  const ax = Math.abs(x);
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === -Infinity) return NaN;
  if (ax < 5.551115123125783e-17) return 1.0 / x; // |x| < 2^-54 (±0: ±∞)
  if (x === Math.floor(x)) {
    if (x < 0) return NaN; // a pole
    if (x <= 23) {
      // (x − 1)! is exact up to 22!
      let f = 1.0;
      for (let k = x - 1.0; k > 1.0; k = k - 1.0) f = f * k; // k is a float: an int32 product would wrap
      return f;
    }
  }
  if (ax >= 184) {
    if (x > 0) return Infinity;
    return Math.floor(x) * 0.5 === Math.floor(x * 0.5) ? 0.0 : -0.0; // underflow; the sign of sin(πx)
  }
  const GMHALF = 5.524680040776729583740234375; // g − ½
  let y = ax + GMHALF;
  let dy = ax > GMHALF ? (y - ax) - GMHALF : (y - GMHALF) - ax; // the rounding error of y
  let z = ax - 0.5;
  let r = __lanczosS(ax) * __exp64(-y);
  if (x < 0) {
    r = -3.141592653589793 / (__sinPi64(ax) * ax * r);
    dy = -dy;
    z = -z;
  }
  r = r + dy * (GMHALF + 0.5) * r / y;
  const h = __pow64(y, 0.5 * z);
  return r * h * h;
}
