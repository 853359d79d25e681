import assert from "node:assert/strict";
import { test } from "node:test";
import {
  boxMullerFloat32, boxMullerFloat64, createXoroshiro128pStates, initXoroshiro128pStates, splitmix64,
  uint64ToUnitFloat32, uint64ToUnitFloat64, xoroshiro128pJump, xoroshiro128pNext, type Xoroshiro128pState,
} from "../../src/random.js";
import {
  xoroshiro128pNextAt, xoroshiro128pNormalFloat32, xoroshiro128pNormalFloat64, xoroshiro128pUniformFloat32, xoroshiro128pUniformFloat64,
} from "../../src/mathlib/random.js";
import { createSimBackend } from "../../src/backends/sim/runtime/sim-backend.js";

// Published SplitMix64 vector (Rosetta Code "Pseudo-random numbers/Splitmix64", seed 1234567):
// output k is splitmix64 applied to seed + (k-1) * golden gamma.
const GAMMA = 0x9e3779b97f4a7c15n;
const SPLITMIX_1234567 = [6457827717110365317n, 3203168211198807973n, 9817491932198370423n, 4593380528125082431n, 16408922859458223821n];

// xoroshiro128+ (55, 14, 36) vectors from the Zig standard library's test of the
// reference algorithm: six outputs from a given state, then six after one jump.
const ZIG_STATE: Xoroshiro128pState = [0xaeecf86f7878dd75n, 0x01cd153642e72622n];
const ZIG_SEQ = [0xb0ba0da5bb600397n, 0x18a08afde614dcccn, 0xa2635b956a31b929n, 0xabe633c971efa045n, 0x9ac19f9706ca3cacn, 0xf62b426578c1e3fbn];
const ZIG_AFTER_JUMP = [0x95344a13556d3e22n, 0xb4fb32dafa4d00dfn, 0xb2011d9ccdcfe2ddn, 0x05679a9b2119b908n, 0xa860a1da7c9cd8a0n, 0x658a96efe3f86550n];

test("splitmix64 matches the published vector", () => {
  SPLITMIX_1234567.forEach((want, k) => {
    assert.equal(splitmix64(BigInt.asUintN(64, 1234567n + BigInt(k) * GAMMA)), want);
  });
});

test("host reference xoroshiro128+ and its jump match published vectors", () => {
  const s: Xoroshiro128pState = [...ZIG_STATE];
  assert.deepEqual(ZIG_SEQ.map(() => xoroshiro128pNext(s)), ZIG_SEQ);
  xoroshiro128pJump(s);
  assert.deepEqual(ZIG_AFTER_JUMP.map(() => xoroshiro128pNext(s)), ZIG_AFTER_JUMP);
});

test("the device draw running as plain JS matches the vectors, and the fast jump the reference jump", () => {
  const states = new BigUint64Array([0n, 0n, ...ZIG_STATE]);
  assert.deepEqual(ZIG_SEQ.map(() => xoroshiro128pNextAt(states, 1)), ZIG_SEQ);
  assert.deepEqual([states[0], states[1]], [0n, 0n]);
  // init with n = 2 puts generator 1 one (fast) jump after generator 0
  const two = new BigUint64Array(4);
  initXoroshiro128pStates(two, 42);
  const ref: Xoroshiro128pState = [two[0]!, two[1]!];
  xoroshiro128pJump(ref);
  assert.deepEqual([two[2], two[3]], ref);
});

test("state initialisation follows Numba: SplitMix64 seed in s0 and s1, one jump apart, subsequence offset", () => {
  const n = 6;
  const states = new BigUint64Array(2 * n);
  initXoroshiro128pStates(states, 1);
  const z = splitmix64(1n);
  const ref: Xoroshiro128pState = [z, z];
  for (let i = 0; i < n; i++) {
    assert.deepEqual([states[2 * i], states[2 * i + 1]], ref, `generator ${i}`);
    xoroshiro128pJump(ref);
  }
  // Numba's test_create_subsequence_start: s1[3:] == s2[:-3]
  const shifted = new BigUint64Array(2 * n);
  initXoroshiro128pStates(shifted, 1, 3);
  assert.deepEqual([...shifted.subarray(0, 2 * (n - 3))], [...states.subarray(6)]);
  // seeds wrap to uint64 as Numba's uint64(seed)
  const neg = new BigUint64Array(2);
  initXoroshiro128pStates(neg, -1);
  assert.equal(neg[0], splitmix64(2n ** 64n - 1n));
  assert.throws(() => initXoroshiro128pStates(new BigUint64Array(2), 1.5), /integer/);
});

test("createXoroshiro128pStates puts the same states on the device", () => {
  const sim = createSimBackend();
  const d = createXoroshiro128pStates(10, 1234, sim);
  assert.equal(d.dtype, "uint64");
  assert.deepEqual(d.shape, [20]);
  const host = new BigUint64Array(20);
  initXoroshiro128pStates(host, 1234);
  const got = d.copyToHost() as BigUint64Array;
  assert.deepEqual([...got], [...host]);
  const pairs = new Set(Array.from({ length: 10 }, (_, i) => `${got[2 * i]},${got[2 * i + 1]}`));
  assert.equal(pairs.size, 10); // Numba's test_create: all states distinct
  const again = createXoroshiro128pStates(10, 1234, sim).copyToHost() as BigUint64Array;
  assert.deepEqual([...again], [...got]);
});

test("uniform draws equal the reference conversion of the reference sequence", () => {
  const n = 4;
  const states = new BigUint64Array(2 * n);
  initXoroshiro128pStates(states, 7);
  const refs = Array.from({ length: n }, (_, i): Xoroshiro128pState => [states[2 * i]!, states[2 * i + 1]!]);
  for (let k = 0; k < 50; k++) {
    for (let i = 0; i < n; i++) {
      const want64 = uint64ToUnitFloat64(xoroshiro128pNext(refs[i]!));
      const want32 = uint64ToUnitFloat32(xoroshiro128pNext(refs[i]!));
      assert.equal(xoroshiro128pUniformFloat64(states, i), want64);
      assert.equal(xoroshiro128pUniformFloat32(states, i), want32);
    }
  }
  assert.equal(uint64ToUnitFloat64(0n), 0);
  assert.equal(uint64ToUnitFloat64(2n ** 64n - 1n), 1 - 2 ** -53);
  assert.equal(uint64ToUnitFloat32(2n ** 64n - 1n), 1); // float32 rounding, as Numba
});

test("normal draws are Box–Muller of two reference uniforms", () => {
  const states = new BigUint64Array(2);
  initXoroshiro128pStates(states, 99);
  const ref: Xoroshiro128pState = [states[0]!, states[1]!];
  const u = () => uint64ToUnitFloat32(xoroshiro128pNext(ref));
  for (let k = 0; k < 100; k++) {
    const [a, b] = [u(), u()];
    assert.equal(xoroshiro128pNormalFloat32(states, 0), boxMullerFloat32(a, b));
    const [c, d] = [u(), u()];
    assert.equal(xoroshiro128pNormalFloat64(states, 0), boxMullerFloat64(c, d));
  }
  // u1 = e^-2 → sqrt(4) = 2; u2 = 0 → cos 0 = 1
  assert.equal(boxMullerFloat64(Math.fround(Math.exp(-2)), 0), Math.sqrt(-2 * Math.fround(Math.log(Math.fround(Math.exp(-2))))));
  assert.ok(Math.abs(boxMullerFloat64(Math.fround(Math.exp(-2)), 0.5) + 2) < 1e-6);
  assert.equal(Math.fround(boxMullerFloat32(0.25, 0.125)), boxMullerFloat32(0.25, 0.125));
});

test("distribution statistics as in Numba's tests (64 generators × 32 draws)", () => {
  const n = 64, count = 32;
  const draw = (fn: (s: BigUint64Array, i: number) => number) => {
    const states = new BigUint64Array(2 * n);
    initXoroshiro128pStates(states, 1);
    const out: number[] = [];
    for (let i = 0; i < n; i++) for (let k = 0; k < count; k++) out.push(fn(states, i));
    const mean = out.reduce((a, b) => a + b, 0) / out.length;
    const std = Math.sqrt(out.reduce((a, b) => a + (b - mean) ** 2, 0) / out.length);
    return { out, mean, std };
  };
  for (const fn of [xoroshiro128pUniformFloat32, xoroshiro128pUniformFloat64]) {
    const { out, mean, std } = draw(fn);
    assert.ok(Math.min(...out) >= 0 && Math.min(...out) < 1e-3);
    assert.ok(Math.max(...out) <= 1 && Math.max(...out) > 1 - 1e-3);
    assert.ok(Math.abs(mean - 0.5) < 1.5e-2, `mean ${mean}`);
    assert.ok(Math.abs(std - 1 / (2 * Math.sqrt(3))) < 6e-3, `std ${std}`);
  }
  for (const fn of [xoroshiro128pNormalFloat32, xoroshiro128pNormalFloat64]) {
    const { mean, std } = draw(fn);
    // Numba's deltas are 4e-3 / 2e-3 for its seed-1 stream on 2048 draws; these are 3σ bounds
    assert.ok(Math.abs(mean) < 3 / Math.sqrt(2048), `mean ${mean}`);
    assert.ok(Math.abs(std - 1) < 3 / Math.sqrt(2 * 2048), `std ${std}`);
  }
});
