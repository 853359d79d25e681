// Native float32 erf, erfc, lgamma and tgamma (no float64 on any path), in the numbats kernel language.
//
// erf and erfc: fdlibm's arrangement (s_erf.c) with the float32 rational fits of FreeBSD's s_erff.c
// (|x| < 0.84375: |(erf(x) − x)/x − P/Q| < 2^-31; [0.84375, 1.25): < 2^-36 about erf(1) rounded to 16
// bits; the tail's log(x·erfc(x)) + x² + 0.5625 − R/S: < 2^-30 below 1/0.35, < 2^-42 beyond). x + x·P/Q is one fma; from 1.25, erf = 1 − erfc(|x|), where erfc ≤ 0.077 makes
// its few-ulp error a fraction of erf's last place; from 4, erf rounds to ±1. Γ and log Γ: below, before
// __gammaW32.

import { __f32bits, __f32frombits, __fma32 } from "./bits.js";
import { __divLo32 } from "./dd.js";
import { __exp32 } from "./exp32.js";
import { __log1pPair32, __log32, __logB32, __logF32, __logFastParts32, __logPlus32 } from "./log32.js";
import { __kCos32, __kSin32 } from "./trig32.js";

/** On |x| < 0.84375: y with erf(x) = x + x·y (|(erf(x) − x)/x − y| < 2^-31 before rounding). */
export function __erfSmall32(x: number): number {
  const z = x * x;
  return (0.12837916612625122 + z * (-0.33603039383888245 + z * -0.001862602191977203)) /
    (1 + z * (0.31232428550720215 + z * (0.02160703018307686 + z * -0.001988594187423587)));
}

/** erf(1 + s) − 0.8426971435546875 (erf(1) to 16 bits) for s = |x| − 1 in [−0.15625, 0.25). */
export function __erfNearOne32(s: number): number {
  return (3.649391373983235e-06 + s * (0.41510969400405884 + s * (-0.16517993807792664 + s * 0.11091449111700058))) /
    (1 + s * (0.602074384689331 + s * (0.5359346866607666 + s * (0.16857610642910004 + s * 0.05621812120079994))));
}

/**
 * erfc(a) for 1.25 ≤ a < 10.15: e^(c + v)/a with c = −z² − 0.5625 and v = (z − a)(z + a) + R/S, z = a to
 * 11 bits, so z² and c are exact; c + v is summed as an exact pair and only its head goes through one
 * __exp32 (below 10.15 the exponent stays above −104, where __exp32 clamps).
 */
export function __erfcTail32(a: number): number {
  const s = 1 / (a * a);
  let rs = Math.fround(0);
  if (a < 2.857142925262451) {
    rs = (-0.009871327318251133 + s * (-0.5536059141159058 + s * (-2.175891876220703 + s * -1.4326808452606201))) /
      (1 + s * (5.459954261779785 + s * (6.697980880737305 + s * (1.4311308860778809 + s * -0.0577397495508194))));
  } else {
    rs = (-0.009864943102002144 + s * (-0.6251712441444397 + s * (-6.16498327255249 + s * (-16.669687271118164 + s * -9.537643432617188)))) /
      (1 + s * (12.68848991394043 + s * (45.18395233154297 + s * (47.28102111816406 + s * 8.930333137512207))));
  }
  const z = __f32frombits(__f32bits(a) & -8192); // the top 11 bits of a
  const c = -z * z - 0.5625; // exact
  const v = (z - a) * (z + a) + rs;
  const h = c + v;
  const l = (c - h) + v; // Fast2Sum: |c| > 2 > |v|
  // e^(h + l) = e^h·(1 + l) (|l| ≤ 2^-18), over a: the quotient corrected by its fma residual, one rounding
  const e = __exp32(h);
  const q = e / a;
  return Math.fround(q + __fma32(q, l, __fma32(-q, a, e) / a));
}

export function __erf32(x: number): number {
  const ax = Math.abs(x);
  if (ax < 0.84375) return __fma32(x, __erfSmall32(x), x);
  if (Number.isNaN(x)) return x;
  let r = Math.fround(1);
  if (ax < 1.25) {
    r = 0.8426971435546875 + __erfNearOne32(ax - 1);
  } else if (ax < 4) {
    r = 1 - __erfcTail32(ax);
  }
  return x < 0 ? -r : r;
}

/**
 * erfc natively in float32: 1 − x − x·y with 1 − x as an exact pair below 0.84375; (1 − erf(1)'s 16-bit
 * head) ∓ P/Q on [0.84375, 1.25) (both constants exact); the tail from two float32 exps beyond, 2 − tail
 * for negative x; 0 from 10.15 (erfc rounds to 0 from 10.12762), 2 below −4.
 */
export function __erfc32(x: number): number {
  const ax = Math.abs(x);
  if (ax < 0.84375) {
    const h = 1 - x;
    const hl = (1 - h) - x; // exact: |x| < 1
    return h + __fma32(-x, __erfSmall32(x), hl);
  }
  if (Number.isNaN(x)) return x;
  if (ax < 1.25) {
    const p = __erfNearOne32(ax - 1);
    return x > 0 ? 0.1573028564453125 - p : 1.8426971435546875 + p;
  }
  if (x > 0) return x < 10.149999618530273 ? __erfcTail32(x) : Math.fround(0);
  return x > -4 ? 2 - __erfcTail32(ax) : Math.fround(2);
}

// Γ and log Γ natively in float32. On the base interval 0.75 ≤ b < 2.5, 1/Γ(b) = 1 + w with
// w = (b − 1)(b − 2)·S(b): 1/Γ is entire, so S converges fast (a degree-9 fit in b − 1.625, mpmath
// Chebyshev, coefficients rounded to float32; relative error ≤ 2.9e-8), and the factors (b − 1)(b − 2)
// keep lgamma's zeros at 1 and 2 relatively accurate. Other arguments reach the base by the recurrence
// Γ(x) = (x − 1)·Γ(x − 1), the product of the (exact) factors kept as a float32 pair by fma.

/**
 * 1/Γ(b) − 1 as a pair [w, wl] for 0.75 ≤ b < 2.5, given c1 = b − 1 and c2 = b − 2 (each as exact as the
 * caller has them): c1·c2 and its product with S as fma pairs, so only S's own error remains.
 */
export function __gammaW32(b: number, c1: number, c2: number): [number, number] {
  const t = b - 1.625; // exact
  let p = __fma32(t, -1.1259588973189238e-05, 1.571843313286081e-05);
  p = __fma32(p, t, 0.00016750593204051256);
  p = __fma32(p, t, -0.0009674265165813267);
  p = __fma32(p, t, 0.0013810257660225034);
  p = __fma32(p, t, 0.0074380203150212765);
  p = __fma32(p, t, -0.038151904940605164);
  p = __fma32(p, t, 0.03757740184664726);
  p = __fma32(p, t, 0.17593708634376526);
  p = __fma32(p, t, -0.4921879768371582);
  const m = c1 * c2;
  const w = m * p;
  return [w, __fma32(m, p, -w) + __fma32(c1, c2, -m) * p];
}

/**
 * For x ≥ 0.75: [b, nh, nl] with b = x − n in [0.75, 2.5) (n ≥ 0, 1.5 ≤ b when n > 0) and
 * nh + nl = h0·(x − 1)(x − 2)…(x − n), each factor exact and the product an fma pair.
 */
export function __gammaUp32(x: number, h0: number): [number, number, number] {
  let b = x;
  let nh = h0;
  let nl = Math.fround(0);
  while (b >= 2.5) {
    b = b - 1; // exact: b < 2^24, b − 1 ≥ 1.5
    const p = nh * b;
    nl = __fma32(nh, b, -p) + nl * b;
    nh = p;
  }
  return [b, nh, nl];
}

/**
 * Γ(x) natively in float32: (x − 1)…(x − n)·Γ(b) for x ≥ 2.5 and Γ(b)/(x(x + 1)…(x + n − 1)) for x < 0.75,
 * 1/Γ(b) = 1 + w on the base, one quotient of pairs corrected by its fma residual. The numerator starts at
 * ½ (so it cannot overflow below 35.05) and the denominator is scaled by 2^-90 when it passes 2^90 (as it
 * does below −34); the result is scaled back by one multiply. Poles and −∞ give NaN, ±0 ±∞, 35.05 up +∞
 * (Γ overflows from 35.0401), below −43 ±0 (|Γ| < 2^-150) with the sign of Γ.
 */
export function __tgamma32(x: number): number {
  if (!(x < 35.04999923706055)) return x * Math.fround(Infinity); // NaN stays NaN
  if (Math.abs(x) < 2.9802322387695312e-8) return 1 / x; // |x| < 2^-25: Γ(x) = 1/x − γ + …, rounded; ±∞ at ±0
  const fl = Math.floor(x);
  if (x < 0 && x === fl) return Math.fround(NaN); // a pole, or −∞
  // below −43: underflow; Γ(x) < 0 where ⌊x⌋ is odd (fl is an integer ≥ −2^24 here)
  if (x < -43) return ((fl | 0) & 1) === 0 ? Math.fround(0) : -Math.fround(0);
  const [b0, nh, nl] = __gammaUp32(x, Math.fround(0.5));
  let b = b0;
  let c1 = b - 1; // exact for b in [0.75, 2.5)
  let dh = Math.fround(1);
  let dl = Math.fround(0);
  let scale = Math.fround(2);
  while (b < 0.75) {
    const p = dh * b; // the factor x + k, exact unless |x| < 1.75
    dl = __fma32(dh, b, -p) + dl * b;
    dh = p;
    c1 = b; // (b + 1) − 1, exactly
    b = b + 1;
    if (Math.abs(dh) > 1.2379400392853803e27) { // 2^90
      dh = dh * 8.077935669463161e-28; // 2^-90
      dl = dl * 8.077935669463161e-28;
      scale = Math.fround(1.6155871338926322e-27); // 2^-89
    }
  }
  const [w, wl] = __gammaW32(b, c1, c1 - 1);
  const d = 1 + w;
  const dw = ((1 - d) + w) + wl; // (1 − d) + w exact: |w| < 1
  // e = (dh + dl)·(d + dw) as a pair, then (nh + nl)/e
  const eh = dh * d;
  const el = __fma32(dh, d, -eh) + __fma32(dh, dw, dl * d);
  const q = nh / eh;
  const ql = __divLo32(nh, eh, el, q) + nl / eh;
  return Math.fround((q + ql) * scale);
}

/** |sin(πa)| for a > 0 not an integer (a < 2^23): reduced exactly to u in [0, ¼], then sin or cos of πu. */
export function __sinPiAbs32(a: number): number {
  const r = a - Math.floor(a); // exact
  const h = r > 0.5 ? 1 - r : r; // exact
  const u = h > 0.25 ? 0.5 - h : h; // exact
  const ph = u * 3.1415927410125732; // π·u = ph + pl
  const pl = __fma32(u, 3.1415927410125732, -ph) + u * -8.742277657347586e-8;
  return h > 0.25 ? Math.fround((1 - 0.5 * (ph * ph)) + __kCos32(ph, pl)) : Math.fround(ph + __kSin32(ph, pl));
}

/** log |Γ(x)| for −0.25 < x < 0.75, |x| ≥ 2^-25: Γ(x) = Γ(x + 1)/x, so −log |e|, e = x·(1 + w(x + 1)) as a pair. */
export function __lgammaSmall32(x: number): number {
  const [w, wl] = __gammaW32(x + 1, x, x - 1);
  const d = 1 + w;
  const eh = x * d;
  const el = __fma32(x, d, -eh) + x * (((1 - d) + w) + wl);
  return -__logPlus32(Math.abs(eh), el / eh);
}

/**
 * log |Γ(x)| for x > −0.25, |x| ≥ 2^-25: __lgammaSmall32 below 0.75; −log1p(w + wl) on [0.75, 2.5); log of the
 * quotient (x − 1)…(x − n)/(1 + w) as a pair up to 8; Stirling's (x − ½)(log x − 1) + (½·log 2π − ½) + 1/(12x)
 * − 1/(360x³) + 1/(1260x⁵) from 8, with log x as an unrounded pair and x·(log x − 1) as an fma pair.
 */
export function __lgammaPos32(x: number): number {
  if (x >= 8) {
    const lb = __logB32(x);
    const [s0, t0] = __logFastParts32(lb >> 23, __logF32(lb));
    const s = s0 + t0;
    const t = (s0 - s) + t0; // Fast2Sum: so that (x − ½)·(s − 1) does not overflow before t is added
    const sm = s - 1; // exact: s > 2
    const ph = x * sm; // (x − ½)·(s − 1) = ph + (x·sm − ph) − sm/2, the first two exactly
    const z = 1 / x;
    const y = z * z;
    const w = z * __fma32(y, __fma32(y, 0.0007936508045531809, -0.0027777778450399637), 0.0833333358168602);
    const tail = (__fma32(x, sm, -ph) - 0.5 * sm) + (__fma32(x - 0.5, t, 0.418938547372818) + w);
    return ph === Infinity ? ph : Math.fround(ph + tail); // overflow from 4.085e36
  }
  if (x < 0.75) return __lgammaSmall32(x);
  const [b, nh, nl] = __gammaUp32(x, Math.fround(1));
  const [w, wl] = __gammaW32(b, b - 1, b - 2);
  if (x < 2.5) return -__log1pPair32(w, wl);
  const d = 1 + w;
  const q = nh / d;
  return __logPlus32(q, (__divLo32(nh, d, ((1 - d) + w) + wl, q) + nl / d) / q);
}

/**
 * lgamma natively in float32 (log |Γ(x)|): __lgammaPos32 above −0.25, below it the reflection
 * log(π/|x·sin(πx)|) − lgamma(|x|), log π as a float32 head and tail; +∞ at 0, the poles and ±∞;
 * −log|x| for |x| < 2^-25.
 */
export function __lgamma32(x: number): number {
  const ax = Math.abs(x);
  if (!(ax < Infinity)) return x * x; // NaN; +∞ at ±∞
  if (ax < 2.9802322387695312e-8) return -__log32(ax); // |x| < 2^-25: −log|x| − γx, rounded; +∞ at ±0
  if (x < 0 && x === Math.floor(x)) return Math.fround(Infinity); // a pole (every x ≤ −2^23 is an integer)
  const direct = x > -0.25;
  const r = __lgammaPos32(direct ? x : ax); // one call site, so the kernel holds one copy
  if (direct) return r;
  const s = __sinPiAbs32(ax);
  const p = ax * s;
  const nadj = 1.1447298526763916 - __logPlus32(p, __fma32(ax, s, -p) / p - 3.317300922844879e-8);
  return nadj - r;
}
