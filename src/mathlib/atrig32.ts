// Native float32 atan, atan2, asin, acos (no float64), in the numbats kernel language.
//
// Reduction (as fdlibm's, with c ∈ {0, 1, ∞}): atan|x| = atan|x| (|x| ≤ ½), π/4 + atan((|x| − 1)/(|x| + 1))
// (½ < |x| < 2), π/2 − atan(1/|x|) (|x| ≥ 2), so the kernel sees |v| ≤ ½. The quotient v is corrected by
// its fma residual (v + vl = the exact quotient to ~2^-48) and the base angle (π/4, π/2, 3π/4, π as float32
// head + tail) is added by Fast2Sum, so the result has one significant rounding. Kernel: atan v = v + v³·A(v²),
// A a degree-5 fit on v² ≤ ¼ (mpmath Chebyshev fit, coefficients rounded to float32, |error| ≤ 1.9e-8).

import { __f32bits, __f32frombits, __fma32 } from "./bits.js";
import { __divLo32, __poly5f32, __sumErr } from "./dd.js";

/** atan(v + vl) − v for |v| ≤ ½, |vl| ≲ ulp(v). */
export function __kAtan32(v: number, vl: number): number {
  const t = v * v;
  const p = __poly5f32(
    t,
    Math.fround(0.042256858199834824), Math.fround(-0.0823550596833229), Math.fround(0.11006880551576614),
    Math.fround(-0.14279800653457642), Math.fround(0.19999875128269196), Math.fround(-0.3333333432674408),
  );
  // atan(v + vl) ≈ atan v + vl/(1 + v²) ≈ atan v + vl·(1 − v²)
  return __fma32(v * t, p, __fma32(-t, vl, vl));
}

/** asin(v + vl) − v for |v| ≤ ½, |vl| ≲ ulp(v). */
export function __kAsin32(v: number, vl: number): number {
  const t = v * v;
  const p = __poly5f32(
    t,
    Math.fround(0.03369084745645523), Math.fround(0.017149237915873528), Math.fround(0.031100662425160408),
    Math.fround(0.04459940269589424), Math.fround(0.07500094175338745), Math.fround(0.1666666567325592),
  );
  // asin(v + vl) ≈ asin v + vl/√(1 − v²) ≈ asin v + vl·(1 + v²/2)
  return __fma32(v * t, p, __fma32(0.5 * t, vl, vl));
}

/**
 * base + m·(v + tail), rounded once: the base angle as head + tail, m = ±1 or ±2, and |base| ≥ 2|m·v|
 * unless base = 0 (Fast2Sum).
 */
export function __angleSum32(base: number, baseLo: number, m: number, v: number, tail: number): number {
  const mv = m * v; // exact
  const s = base + mv;
  const e = (base - s) + mv;
  return Math.fround(s + (e + __fma32(m, tail, baseLo)));
}

export function __atan32(x: number): number {
  const ax = Math.abs(x);
  if (!(ax < 67108864)) {
    // |x| ≥ 2^26: π/2 − 1/|x| rounds to π/2's float32; NaN stays NaN
    if (Number.isNaN(x)) return x;
    return x > 0 ? Math.fround(1.5707963705062866) : Math.fround(-1.5707963705062866);
  }
  if (ax < 2.44140625e-4) return x; // |x| < 2^-12: atan x = x rounded (keeps −0)
  let v = ax;
  let vl = Math.fround(0);
  let b = Math.fround(0);
  let bl = Math.fround(0);
  if (ax > 0.5 && ax < 2) {
    const n = ax - 1; // exact
    const d = ax + 1;
    const dl = __sumErr(ax, Math.fround(1), d);
    v = n / d;
    vl = __divLo32(n, d, dl, v);
    b = Math.fround(0.7853981852531433);
    bl = Math.fround(-2.1855694143368964e-8);
  } else if (ax >= 2) {
    const q = 1 / ax;
    v = -q;
    vl = -__divLo32(Math.fround(1), ax, Math.fround(0), q);
    b = Math.fround(1.5707963705062866);
    bl = Math.fround(-4.371138828673793e-8);
  }
  const res = __angleSum32(b, bl, Math.fround(1), v, __kAtan32(v, vl));
  return x < 0 ? -res : res;
}

export function __atan232(y: number, x: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return Math.fround(NaN);
  const xneg = __f32bits(x) < 0; // −0 counts as negative
  const yneg = __f32bits(y) < 0;
  let ax = Math.abs(x);
  let ay = Math.abs(y);
  let res = Math.fround(0);
  if (ay === 0) {
    res = xneg ? Math.fround(3.1415927410125732) : Math.fround(0);
  } else if (ay === Infinity) {
    if (ax === Infinity) res = xneg ? Math.fround(2.356194496154785) : Math.fround(0.7853981852531433);
    else res = Math.fround(1.5707963705062866);
  } else if (ax === Infinity) {
    res = xneg ? Math.fround(3.1415927410125732) : Math.fround(0);
  } else {
    if (ax < 5.421010862427522e-20 && ay < 5.421010862427522e-20) {
      // both below 2^-64: scale by 2^64 (exact) so the division residual is representable
      ax = ax * __f32frombits(0x5f800000);
      ay = ay * __f32frombits(0x5f800000);
    }
    // atan2 = B ± atan(v): v = ay/ax (B = 0), (ay − ax)/(ay + ax) (B = π/4), −ax/ay (B = π/2); x < 0: π − that
    let v = Math.fround(0);
    let vl = Math.fround(0);
    let b = Math.fround(0);
    let bl = Math.fround(0);
    if (ay + ay <= ax) {
      v = ay / ax;
      vl = __divLo32(ay, ax, Math.fround(0), v);
      if (xneg) {
        b = Math.fround(3.1415927410125732);
        bl = Math.fround(-8.742277657347586e-8);
      }
    } else if (ay < ax + ax) {
      if (ax > __f32frombits(0x7e800000)) {
        // ≥ 2^126: quarter both (exact) so that ay + ax stays finite
        ax = ax * 0.25;
        ay = ay * 0.25;
      }
      const n = ay - ax; // exact
      const d = ay + ax;
      const dl = __sumErr(ay, ax, d);
      v = n / d;
      vl = __divLo32(n, d, dl, v);
      b = xneg ? Math.fround(2.356194496154785) : Math.fround(0.7853981852531433);
      bl = xneg ? Math.fround(-5.962440319251527e-9) : Math.fround(-2.1855694143368964e-8);
    } else {
      const q = ax / ay;
      v = -q;
      vl = -__divLo32(ax, ay, Math.fround(0), q);
      b = Math.fround(1.5707963705062866);
      bl = Math.fround(-4.371138828673793e-8);
    }
    if (xneg) {
      v = -v;
      vl = -vl;
    }
    res = __angleSum32(b, bl, Math.fround(1), v, __kAtan32(v, vl));
  }
  return yneg ? -res : res;
}

/** asin (which = 0) or acos (which = 1) of a float32. */
export function __asinAcos32(x: number, which: number): number {
  const ax = Math.abs(x);
  if (!(ax < 1)) {
    if (ax === 1) {
      if (which === 0) return x > 0 ? Math.fround(1.5707963705062866) : Math.fround(-1.5707963705062866);
      return x > 0 ? Math.fround(0) : Math.fround(3.1415927410125732);
    }
    return Math.fround(NaN); // |x| > 1, NaN
  }
  if (ax < 0.5) {
    // asin x = x + T; acos x = π/2 − x − T
    if (which === 0) return ax < 2.44140625e-4 ? x : Math.fround(x + __kAsin32(x, Math.fround(0)));
    return __angleSum32(Math.fround(1.5707963705062866), Math.fround(-4.371138828673793e-8), Math.fround(-1), x, __kAsin32(x, Math.fround(0)));
  }
  // |x| ≥ ½: asin|x| = π/2 − 2·asin(s), acos(±|x|) = (0 or π) ± 2·asin(s), s = √((1 − |x|)/2) (+ sl, from the fma residual)
  const z = 0.5 * (1 - ax); // exact
  const s = Math.sqrt(z);
  const sl = __fma32(-s, s, z) / (s + s);
  const tail = __kAsin32(s, sl);
  if (which === 0) {
    const res = __angleSum32(Math.fround(1.5707963705062866), Math.fround(-4.371138828673793e-8), Math.fround(-2), s, tail);
    return x < 0 ? -res : res;
  }
  if (x > 0) return __angleSum32(Math.fround(0), Math.fround(0), Math.fround(2), s, tail);
  return __angleSum32(Math.fround(3.1415927410125732), Math.fround(-8.742277657347586e-8), Math.fround(-2), s, tail);
}

export function __asin32(x: number): number {
  return __asinAcos32(x, 0);
}

export function __acos32(x: number): number {
  return __asinAcos32(x, 1);
}
