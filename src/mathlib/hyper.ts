// sinh, cosh, tanh, asinh, acosh, atanh (float64), in the numbats kernel language.
//
// Algorithms: fdlibm e_sinh.c, e_cosh.c, s_tanh.c, s_asinh.c, e_acosh.c,
// e_atanh.c (Sun Microsystems 1993): expressed through expm1/exp and
// log1p/log so that small arguments keep full relative accuracy, and
// exp(|x|/2)² for results near the overflow threshold.

import { __exp64, __expm164 } from "./exp.js";
import { __log1p64, __log64 } from "./log.js";

export function __sinh64(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  const h = x < 0 ? -0.5 : 0.5;
  if (ax < 22.0) {
    if (ax < 3.725290298461914e-9) return x; // 2^-28 (keeps -0)
    const t = __expm164(ax);
    if (ax < 1.0) return h * (2.0 * t - t * t / (t + 1.0));
    return h * (t + t / (t + 1.0));
  }
  if (ax < 7.09782712893383973096e+02) return h * __exp64(ax);
  if (ax <= 7.10475860073943863426e+02) {
    // exp(|x|) overflows but sinh does not: h·e^(|x|/2)·e^(|x|/2)
    const w = __exp64(0.5 * ax);
    return (h * w) * w;
  }
  return x * Infinity;
}

export function __cosh64(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  if (ax < 0.34657359027997264) {
    // |x| < ln2/2: 1 + t²/(2(1 + t)), t = expm1(|x|)
    if (ax < 2.7755575615628914e-17) return 1.0; // 2^-55
    const t = __expm164(ax);
    const w = 1.0 + t;
    return 1.0 + (t * t) / (w + w);
  }
  if (ax < 22.0) {
    const t = __exp64(ax);
    return 0.5 * t + 0.5 / t;
  }
  if (ax < 7.09782712893383973096e+02) return 0.5 * __exp64(ax);
  if (ax <= 7.10475860073943863426e+02) {
    const w = __exp64(0.5 * ax);
    return (0.5 * w) * w;
  }
  return Infinity;
}

export function __tanh64(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  let z = 1.0;
  if (ax < 22.0) {
    if (ax < 2.7755575615628914e-17) return x; // 2^-55 (keeps -0)
    if (ax >= 1.0) {
      z = 1.0 - 2.0 / (__expm164(2.0 * ax) + 2.0);
    } else {
      const t = __expm164(-2.0 * ax);
      z = -t / (t + 2.0);
    }
  }
  return x < 0 ? -z : z;
}

export function __asinh64(x: number): number {
  if (Number.isNaN(x) || Math.abs(x) === Infinity) return x;
  const ax = Math.abs(x);
  if (ax < 3.725290298461914e-9) return x; // 2^-28 (keeps -0)
  let w = 0.0;
  if (ax > 268435456.0) {
    w = __log64(ax) + 6.93147180559945286227e-01; // |x| > 2^28
  } else if (ax > 2.0) {
    w = __log64(2.0 * ax + 1.0 / (Math.sqrt(x * x + 1.0) + ax));
  } else {
    const t = x * x;
    w = __log1p64(ax + t / (1.0 + Math.sqrt(1.0 + t)));
  }
  return x < 0 ? -w : w;
}

export function __acosh64(x: number): number {
  if (Number.isNaN(x) || x < 1.0) return NaN;
  if (x >= 268435456.0) {
    if (x === Infinity) return x;
    return __log64(x) + 6.93147180559945286227e-01; // x ≥ 2^28
  }
  if (x === 1.0) return 0.0;
  if (x > 2.0) return __log64(2.0 * x - 1.0 / (x + Math.sqrt(x * x - 1.0)));
  const t = x - 1.0;
  return __log1p64(t + Math.sqrt(2.0 * t + t * t));
}

export function __atanh64(x: number): number {
  const ax = Math.abs(x);
  if (Number.isNaN(x) || ax > 1.0) return NaN;
  if (ax === 1.0) return x * Infinity;
  if (ax < 3.725290298461914e-9) return x; // 2^-28 (keeps -0)
  let t = 0.0;
  if (ax < 0.5) {
    const a2 = ax + ax;
    t = 0.5 * __log1p64(a2 + a2 * ax / (1.0 - ax));
  } else {
    t = 0.5 * __log1p64((ax + ax) / (1.0 - ax));
  }
  return x < 0 ? -t : t;
}
