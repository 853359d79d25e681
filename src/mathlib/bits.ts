// Host implementations of the bit-access builtins the math library uses.
//
// The compiler recognises these exact names and lowers them to IR `words`
// (`__f64hi`, `__f64lo`, `__f64make`) and `bitcast` (`__f32bits`,
// `__f32frombits`) nodes, so these bodies only run when the library runs as
// plain JavaScript (tests, host fallbacks).

import { fma32 } from "../fp.js";

const word = new DataView(new ArrayBuffer(8));

/** Upper 32 bits of a float64 (sign, exponent, top 20 mantissa bits) as int32. */
export const __f64hi = (x: number): number => (word.setFloat64(0, x), word.getInt32(0));
/** Lower 32 bits of a float64 as int32. */
export const __f64lo = (x: number): number => (word.setFloat64(0, x), word.getInt32(4));
/** The float64 whose upper/lower 32-bit words are `hi`/`lo`. */
export const __f64make = (hi: number, lo: number): number => (word.setInt32(0, hi), word.setInt32(4, lo), word.getFloat64(0));
/** The bits of a float32 as int32. */
export const __f32bits = (x: number): number => (word.setFloat32(0, x), word.getInt32(0));
/** The float32 with bits `i` (int32). */
export const __f32frombits = (i: number): number => (word.setInt32(0, i), word.getFloat32(0));

/**
 * float32 a·b + c with a single rounding (IR `fma` of type float32). On the host the operands of library
 * code may be unrounded float64 intermediates; the result is then a·b + c in float64, rounded to float32.
 */
export function __fma32(a: number, b: number, c: number): number {
  return fma32(a, b, c);
}
