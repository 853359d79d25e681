// The exact float32 functions of `cuda.math` in native float32 (float32 bits and exact float32
// operations; see fpmanip.ts for the float64 versions and the shared remainder).

import { __f32bits, __f32frombits } from "./bits.js";
import { __remainderIn } from "./fpmanip.js";

export function __copysign32(x: number, y: number): number {
  return __f32frombits((__f32bits(x) & 0x7fffffff) | (__f32bits(y) & ~0x7fffffff));
}

export function __fmod32(x: number, y: number): number {
  return x % y;
}

export function __remainder32(x: number, y: number): number {
  return __remainderIn(x, y, Math.fround(1.7014118346046923e38), Math.fround(2.350988701644575e-38));
}

/** x·2^n rounded once: steps of 2^127 or 2^-102 = 2^-126·2^24 that cannot round, as in __ldexp64. */
export function __ldexpf32(x: number, n: number): number {
  let y = x;
  let k = n;
  if (k > 127) {
    y = Math.fround(y * 1.7014118346046923e38);
    k = k - 127;
    if (k > 127) {
      y = Math.fround(y * 1.7014118346046923e38);
      k = k - 127;
      if (k > 127) k = 127;
    }
  } else if (k < -126) {
    y = Math.fround(y * 1.9721522630525295e-31);
    k = k + 102;
    if (k < -126) {
      y = Math.fround(y * 1.9721522630525295e-31);
      k = k + 102;
      if (k < -126) k = -126;
    }
  }
  return Math.fround(y * __f32frombits((k + 127) << 23));
}

export function __nextafter32(x: number, y: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return x + y;
  if (x === y) return y;
  if (x === 0) return __f32frombits(y > 0 ? 1 : -2147483647); // ±the smallest subnormal
  // the bit pattern as sign and magnitude: ±1 moves the magnitude
  const bits = __f32bits(x);
  return __f32frombits((x < y) === (x > 0) ? bits + 1 : bits - 1);
}

export function __modf32(x: number): [number, number] {
  const whole = Math.trunc(x);
  const frac = Math.abs(x) === Infinity ? Math.fround(0) : x - whole;
  return [__copysign32(frac, x), whole];
}

export function __frexp32(x: number): [number, number] {
  let y = x;
  let e = 0;
  let ix = __f32bits(x) & 0x7fffffff;
  if (ix >= 0x7f800000 || ix === 0) return [x, e];
  if (ix < 0x00800000) {
    y = Math.fround(x * 16777216); // subnormal: scale by 2^24
    e = -24;
    ix = __f32bits(y) & 0x7fffffff;
  }
  e = e + (ix >> 23) - 126;
  return [__f32frombits((__f32bits(y) & ~0x7f800000) | 0x3f000000), e];
}
