// float32 variants: evaluate the float64 function once and round once.
//
// The float64 versions are accurate to < 1 ulp of float64 (2^-53 relative),
// so the single final rounding to float32 is within 1 ulp of the correctly
// rounded float32 result (it is wrong only when the exact value lies within
// about 2^-29 ulp of a float32 rounding boundary). The price is float64
// arithmetic, which is slow on consumer GPUs; see docs/mathlib.md.
//
// Parameters arrive as float32; `__toF64` widens them explicitly so the
// callee is specialised for float64 (a literal `float64(x)` cast would box
// the value when this file runs as plain JavaScript).

import { __exp64, __exp264, __expm164 } from "./exp.js";
import { __log64, __log264, __log1064, __log1p64 } from "./log.js";
import { __sin64, __cos64, __tan64 } from "./trig.js";
import { __asin64, __acos64, __atan64, __atan264 } from "./atrig.js";
import { __sinh64, __cosh64, __tanh64, __asinh64, __acosh64, __atanh64 } from "./hyper.js";
import { __cbrt64, __sign64, __hypot64 } from "./misc.js";
import { __pow64 } from "./pow.js";

/**
 * float32 (or any float) → float64, as a typed assignment: the local is float64 from its literal.
 * The literal has a fraction so that it stays a float however a tool reprints the source
 * (esbuild prints `0.0` as `0`, an int, and the local would then take x's float32).
 */
export function __toF64(x: number): number {
  let d = 0.5;
  d = x;
  return d;
}

export function __exp32(x: number): number {
  return Math.fround(__exp64(__toF64(x)));
}

export function __exp232(x: number): number {
  return Math.fround(__exp264(__toF64(x)));
}

export function __expm132(x: number): number {
  return Math.fround(__expm164(__toF64(x)));
}

export function __log32(x: number): number {
  return Math.fround(__log64(__toF64(x)));
}

export function __log232(x: number): number {
  return Math.fround(__log264(__toF64(x)));
}

export function __log1032(x: number): number {
  return Math.fround(__log1064(__toF64(x)));
}

export function __log1p32(x: number): number {
  return Math.fround(__log1p64(__toF64(x)));
}

export function __sin32(x: number): number {
  return Math.fround(__sin64(__toF64(x)));
}

export function __cos32(x: number): number {
  return Math.fround(__cos64(__toF64(x)));
}

export function __tan32(x: number): number {
  return Math.fround(__tan64(__toF64(x)));
}

export function __asin32(x: number): number {
  return Math.fround(__asin64(__toF64(x)));
}

export function __acos32(x: number): number {
  return Math.fround(__acos64(__toF64(x)));
}

export function __atan32(x: number): number {
  return Math.fround(__atan64(__toF64(x)));
}

export function __sinh32(x: number): number {
  return Math.fround(__sinh64(__toF64(x)));
}

export function __cosh32(x: number): number {
  return Math.fround(__cosh64(__toF64(x)));
}

export function __tanh32(x: number): number {
  return Math.fround(__tanh64(__toF64(x)));
}

export function __asinh32(x: number): number {
  return Math.fround(__asinh64(__toF64(x)));
}

export function __acosh32(x: number): number {
  return Math.fround(__acosh64(__toF64(x)));
}

export function __atanh32(x: number): number {
  return Math.fround(__atanh64(__toF64(x)));
}

export function __cbrt32(x: number): number {
  return Math.fround(__cbrt64(__toF64(x)));
}

export function __sign32(x: number): number {
  return Math.fround(__sign64(__toF64(x)));
}

export function __pow32(x: number, y: number): number {
  return Math.fround(__pow64(__toF64(x), __toF64(y)));
}

export function __atan232(x: number, y: number): number {
  return Math.fround(__atan264(__toF64(x), __toF64(y)));
}

export function __hypot32(x: number, y: number): number {
  return Math.fround(__hypot64(__toF64(x), __toF64(y)));
}
