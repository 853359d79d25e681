// Random numbers as Numba's `numba.cuda.random`: xoroshiro128+ (the 2016
// parameters a=55, b=14, c=36), one generator per thread, each 2^64 steps
// (one jump) after the previous, seeded on the host with SplitMix64 exactly
// as Numba does, so the same seed gives the same numbers.
//
// State storage: a uint64 array of 2n elements, (s0, s1) of generator i at
// [2i, 2i+1].
//
// The draws themselves are device functions, in src/mathlib/random.ts.

import { endianness } from "node:os";
import type { Backend } from "./abi/backend.js";
import { DeviceArray, deviceArray, type StreamLike } from "./runtime/devicearray.js";
import { getBackend } from "./runtime/select.js";

const MASK64 = (1n << 64n) - 1n;
const JUMP = [0xbeac0467eba5facbn, 0xd86b048b86aa9922n] as const;

/** (s0, s1) of one generator */
export type Xoroshiro128pState = [bigint, bigint];

// ---------------------------------------------------------------------------
// Host reference: the algorithms as published, on BigInts.

/** Numba's state initialisation: one SplitMix64 output from `seed`, used for both s0 and s1. */
export function splitmix64(seed: bigint): bigint {
  let z = (seed + 0x9e3779b97f4a7c15n) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}

const rotl = (x: bigint, k: bigint) => ((x << k) | (x >> (64n - k))) & MASK64;

/** Returns the next uint64 and advances `state`. */
export function xoroshiro128pNext(state: Xoroshiro128pState): bigint {
  const [s0, s1in] = state;
  const result = (s0 + s1in) & MASK64;
  const s1 = s1in ^ s0;
  state[0] = rotl(s0, 55n) ^ s1 ^ ((s1 << 14n) & MASK64);
  state[1] = rotl(s1, 36n);
  return result;
}

/** Advances `state` by 2^64 steps (the published jump polynomial). */
export function xoroshiro128pJump(state: Xoroshiro128pState): void {
  let s0 = 0n;
  let s1 = 0n;
  for (const word of JUMP) {
    for (let b = 0n; b < 64n; b++) {
      if ((word >> b) & 1n) {
        s0 ^= state[0];
        s1 ^= state[1];
      }
      xoroshiro128pNext(state);
    }
  }
  state[0] = s0;
  state[1] = s1;
}

/** [0, 1): the top 53 bits times 2^-53 (Numba's uint64_to_unit_float64). */
export const uint64ToUnitFloat64 = (x: bigint) => Number(x >> 11n) * 2 ** -53;
/** Numba's uint64_to_unit_float32: the float64 value rounded to float32 (which can round up to 1.0). */
export const uint64ToUnitFloat32 = (x: bigint) => Math.fround(uint64ToUnitFloat64(x));

const TWO_PI_FLOAT32 = Math.fround(2 * Math.PI);

/** Box–Muller in float32 as Numba's xoroshiro128p_normal_float32 computes it (first value, second discarded). */
export function boxMullerFloat32(u1: number, u2: number): number {
  const f = Math.fround;
  return f(f(Math.sqrt(f(-2 * f(Math.log(u1))))) * f(Math.cos(f(TWO_PI_FLOAT32 * u2))));
}

/** Numba's xoroshiro128p_normal_float64: float32 uniforms and a float32 log, the rest in float64. */
export function boxMullerFloat64(u1: number, u2: number): number {
  return Math.sqrt(-2 * Math.fround(Math.log(u1))) * Math.cos(2 * Math.PI * u2);
}

// ---------------------------------------------------------------------------
// Fast jump. A jump is linear over GF(2) in the 128 state bits, so it is the
// XOR of the images of the state's bytes: 16 tables of 256 images, built once
// from the reference jump of the 128 unit vectors. State words are uint32,
// [s0 lo, s0 hi, s1 lo, s1 hi] (little-endian BigUint64Array order).

let jumpTable: Uint32Array | undefined;

function buildJumpTable(): Uint32Array {
  const table = new Uint32Array(16 * 256 * 4);
  for (let bit = 0; bit < 128; bit++) {
    const unit = 1n << BigInt(bit % 64);
    const state: Xoroshiro128pState = bit < 64 ? [unit, 0n] : [0n, unit];
    xoroshiro128pJump(state);
    const image = [state[0] & 0xffffffffn, state[0] >> 32n, state[1] & 0xffffffffn, state[1] >> 32n].map(Number);
    const byte = bit >> 3;
    const mask = 1 << (bit & 7);
    // every table entry whose byte value has this bit set gets the image XORed in
    for (let v = mask; v < 256; v = (v + 1) | mask) {
      for (let w = 0; w < 4; w++) table[(byte * 256 + v) * 4 + w]! ^= image[w]!;
    }
  }
  return table;
}

/** Jumps the state held in words[at .. at+4) by 2^64 steps. */
function jumpWords(words: Uint32Array, at: number): void {
  const t = (jumpTable ??= buildJumpTable());
  let a = 0, b = 0, c = 0, d = 0;
  for (let byte = 0; byte < 16; byte++) {
    const v = (words[at + (byte >> 2)]! >>> ((byte & 3) * 8)) & 255;
    const e = (byte * 256 + v) * 4;
    a ^= t[e]!; b ^= t[e + 1]!; c ^= t[e + 2]!; d ^= t[e + 3]!;
  }
  words[at] = a; words[at + 1] = b; words[at + 2] = c; words[at + 3] = d;
}

function toSeed(v: number | bigint, what: string): bigint {
  if (typeof v === "number" && !Number.isSafeInteger(v)) throw new RangeError(`${what} must be an integer, got ${v}`);
  return BigInt.asUintN(64, BigInt(v));
}

/**
 * Fills `states` (2n uint64s) as Numba's init_xoroshiro128p_states: generator 0
 * from SplitMix64(seed) jumped `subsequenceStart` times, each next one jump further.
 */
export function initXoroshiro128pStates(states: BigUint64Array, seed: number | bigint, subsequenceStart: number | bigint = 0): void {
  if (endianness() !== "LE") throw new Error("xoroshiro128p state initialisation assumes a little-endian host");
  if (states.length % 2 !== 0) throw new RangeError("a state array holds (s0, s1) pairs: its length must be even");
  const n = states.length / 2;
  if (n === 0) return;
  const z = splitmix64(toSeed(seed, "seed"));
  states[0] = z;
  states[1] = z;
  const words = new Uint32Array(states.buffer, states.byteOffset, states.length * 2);
  for (let j = 0n, m = toSeed(subsequenceStart, "subsequenceStart"); j < m; j++) jumpWords(words, 0);
  for (let i = 1; i < n; i++) {
    words.copyWithin(4 * i, 4 * (i - 1), 4 * i);
    jumpWords(words, 4 * i);
  }
}

/** n generator states on the device (Numba's create_xoroshiro128p_states); a uint64 DeviceArray of 2n. */
export function createXoroshiro128pStates(
  n: number, seed: number | bigint, backend: Backend = getBackend(), subsequenceStart: number | bigint = 0, stream?: StreamLike,
): DeviceArray<"uint64", 1> {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`number of states must be a non-negative integer, got ${n}`);
  const host = new BigUint64Array(2 * n);
  initXoroshiro128pStates(host, seed, subsequenceStart);
  const states = deviceArray(2 * n, "uint64", backend);
  states.copyToDevice(host, stream);
  if (stream) stream.synchronize(); // `host` must outlive an asynchronous copy
  return states;
}

// ---------------------------------------------------------------------------
