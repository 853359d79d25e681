// The exact float64 functions of `cuda.math` (C's copysign, fmod, remainder, ldexp, nextafter, modf,
// frexp), in the numbats kernel language: bit manipulation and exact operations only, so every result
// is the exact one (rounded once where it must be: ldexp into the subnormal range).

import { __f64hi, __f64lo, __f64make } from "./bits.js";

/** |x| with the sign bit of y (NaNs included). */
export function __copysign64(x: number, y: number): number {
  return __f64make((__f64hi(x) & 0x7fffffff) | (__f64hi(y) & ~0x7fffffff), __f64lo(x));
}

/** x − trunc(x/y)·y, exact (the kernel language's float `%` is C's fmod). */
export function __fmod64(x: number, y: number): number {
  return x % y;
}

/** x − n·y with n = x/y rounded to the nearest integer, ties to even; exact. */
export function __remainder64(x: number, y: number): number {
  return __remainderIn(x, y, 8.98846567431158e307, 4.450147717014403e-308);
}

/**
 * remainder(x, y) for float64 or float32 x, y (specialised per type): ax = |x| mod 2|y| (exact), then at
 * most two exact subtractions of |y|. `yOverflowsDoubled` is 2^emax (from there 2|y| overflows), `halfExact` the
 * least |y| whose half is exact (2^(emin+1)): below it 2·ax is compared with |y| instead.
 */
export function __remainderIn(x: number, y: number, yOverflowsDoubled: number, halfExact: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return x + y;
  let ax = Math.abs(x);
  const ay = Math.abs(y);
  if (ay === 0 || ax === Infinity) return (x - x) / (y - y); // NaN of the operands' type
  if (ax === 0 || ay === Infinity) return x; // ±0 keeps its sign
  if (ay < yOverflowsDoubled) ax = ax % (ay + ay); // now ax < 2·ay
  if (ay < halfExact) {
    if (ax + ax > ay) {
      ax = ax - ay;
      if (ax + ax >= ay) ax = ax - ay;
    }
  } else {
    const half = 0.5 * ay;
    if (ax > half) {
      ax = ax - ay;
      if (ax >= half) ax = ax - ay;
    }
  }
  return x < 0 ? -ax : ax; // −0 when a negative x is a multiple of y
}

/**
 * x·2^n, rounded once. Large |n| is applied in steps that cannot round: 2^1023 twice (a finite result
 * needs at most that), or 2^-969 = 2^-1022·2^53 twice, which keeps a result that will be subnormal
 * normal until the last multiply.
 */
export function __ldexp64(x: number, n: number): number {
  let y = x;
  let k = n;
  if (k > 1023) {
    y = y * 8.98846567431158e307;
    k = k - 1023;
    if (k > 1023) {
      y = y * 8.98846567431158e307;
      k = k - 1023;
      if (k > 1023) k = 1023;
    }
  } else if (k < -1022) {
    y = y * 2.004168360008973e-292;
    k = k + 969;
    if (k < -1022) {
      y = y * 2.004168360008973e-292;
      k = k + 969;
      if (k < -1022) k = -1022;
    }
  }
  return y * __f64make((k + 1023) << 20, 0);
}

/** The next float64 after x in the direction of y; y itself when x == y (so ±0 take y's sign). */
export function __nextafter64(x: number, y: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return x + y;
  if (x === y) return y;
  if (x === 0) return y > 0 ? 5e-324 : -5e-324;
  const hi = __f64hi(x);
  const lo = __f64lo(x);
  // away from zero: the bit pattern (sign apart) plus one, with the carry into the high word
  if ((x < y) === (x > 0)) return __f64make(lo === -1 ? hi + 1 : hi, lo + 1);
  return __f64make(lo === 0 ? hi - 1 : hi, lo - 1);
}

/** [fractional part, integral part], both with x's sign: modf(±∞) = [±0, ±∞]. */
export function __modf64(x: number): [number, number] {
  const whole = Math.trunc(x);
  const frac = Math.abs(x) === Infinity ? 0.0 : x - whole;
  return [__copysign64(frac, x), whole];
}

/** [m, e] with x = m·2^e, ½ ≤ |m| < 1 (e int32); [x, 0] for ±0, ±∞ and NaN. */
export function __frexp64(x: number): [number, number] {
  let y = x;
  let e = 0;
  let ix = __f64hi(x) & 0x7fffffff;
  if (ix >= 0x7ff00000 || (ix | __f64lo(x)) === 0) return [x, e];
  if (ix < 0x00100000) {
    y = x * 18014398509481984.0; // subnormal: scale by 2^54
    e = -54;
    ix = __f64hi(y) & 0x7fffffff;
  }
  e = e + (ix >> 20) - 1022;
  return [__f64make((__f64hi(y) & ~0x7ff00000) | 0x3fe00000, __f64lo(y)), e];
}
