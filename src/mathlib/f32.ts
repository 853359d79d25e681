// float32 variants that still evaluate the float64 function once and round once: pow and hypot
// (every other float32 variant is native float32: exp32.ts, log32.ts, trig32.ts, atrig32.ts,
// misc32.ts), and the slow path of sin/cos/tan beyond |x| ≥ 105615 (trig32.ts, through `__toF64`).
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

import { __hypot64 } from "./misc.js";

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

export function __hypot32(x: number, y: number): number {
  return Math.fround(__hypot64(__toF64(x), __toF64(y)));
}
