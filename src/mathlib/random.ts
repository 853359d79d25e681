// The random draws of the kernel language (Numba's xoroshiro128p_* device
// functions): xoroshiro128+ with the 2016 parameters a=55, b=14, c=36, over a
// uint64 state array of 2n elements, (s0, s1) of generator i at [2i, 2i+1].
// The host side (seeding, jumps, state arrays) is src/random.ts.
//
// These are written in the kernel language and compile as device functions;
// they also run as plain JS on a BigUint64Array (stores into it wrap to 64
// bits; BigInt.asUintN wraps the sum).
import { float32, float64 } from "../dtypes.js";

// Only literals and calls between these functions: module-level constants are
// not visible inside kernels.

/** Returns the next uint64 of generator `i` and advances it (Numba's xoroshiro128p_next). */
export function xoroshiro128pNextAt(states: BigUint64Array, i: number): bigint {
  const s0 = states[2 * i];
  let s1 = states[2 * i + 1];
  const result = BigInt.asUintN(64, s0 + s1);
  s1 ^= s0;
  states[2 * i] = ((s0 << 55n) | (s0 >> 9n)) ^ s1 ^ (s1 << 14n);
  states[2 * i + 1] = (s1 << 36n) | (s1 >> 28n);
  return result;
}

/** A float64 in [0, 1) from generator `i`. */
export function xoroshiro128pUniformFloat64(states: BigUint64Array, i: number): number {
  return float64(xoroshiro128pNextAt(states, i) >> 11n) * 1.1102230246251565e-16; // 2^-53
}

/**
 * A float32 in [0, 1] from generator `i` (Numba rounds the float64 draw, so 1.0 is possible). Without
 * float64: the 53-bit draw m is exact in float64, and scaling by 2^-53 commutes with rounding, so
 * fround(m * 2^-53) is fround(m) * 2^-53, a float32 product.
 */
export function xoroshiro128pUniformFloat32(states: BigUint64Array, i: number): number {
  return float32(xoroshiro128pNextAt(states, i) >> 11n) * float32(1.1102230246251565e-16); // 2^-53
}

/** A standard normal float32 from generator `i` (Box–Muller; consumes two draws). */
export function xoroshiro128pNormalFloat32(states: BigUint64Array, i: number): number {
  const u1 = xoroshiro128pUniformFloat32(states, i);
  const u2 = xoroshiro128pUniformFloat32(states, i);
  // every step rounded to float32 (no-ops in a kernel, where these are float32 operations)
  const r = Math.fround(Math.sqrt(-2.0 * Math.fround(Math.log(u1))));
  return Math.fround(r * Math.fround(Math.cos(Math.fround(6.2831854820251465 * u2))));
}

/** A standard normal float64 from generator `i`; as in Numba the uniforms and the log are float32. */
export function xoroshiro128pNormalFloat64(states: BigUint64Array, i: number): number {
  const u1 = xoroshiro128pUniformFloat32(states, i);
  const u2 = xoroshiro128pUniformFloat32(states, i);
  return Math.sqrt(float64(-2.0) * Math.fround(Math.log(u1))) * Math.cos(6.283185307179586 * float64(u2));
}

/** The device functions by name, for registering with the compiler. */
export const RANDOM_DEVICE_FUNCTIONS = {
  xoroshiro128pNextAt,
  xoroshiro128pUniformFloat64,
  xoroshiro128pUniformFloat32,
  xoroshiro128pNormalFloat32,
  xoroshiro128pNormalFloat64,
} as const;

