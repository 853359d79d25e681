// The dtype table (DTYPE_INFO in src/dtypes.ts): the columns the stages read instead of keeping their own
// per-dtype maps, checked against what each stage needs of them.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DTYPE_INFO, SCALAR_NAMES, isBigInt } from "../../src/dtypes.js";
import { HALF_FLOAT, bfloat16FromBits, float16FromBits, isHalfFloat } from "../../src/half.js";

test("dtype table: the atomic view is an integer array of the element's width, of the storage's own signedness for integers", () => {
  for (const t of SCALAR_NAMES) {
    const { atomicView, array, size, cls } = DTYPE_INFO[t];
    const view = new atomicView(new SharedArrayBuffer(8), 0, 1);
    assert.equal(view.BYTES_PER_ELEMENT, size, t);
    // Atomics takes exactly the integer TypedArrays
    assert.doesNotThrow(() => Atomics.load(view, 0), t);
    if (cls === "int" || cls === "uint") assert.equal(atomicView, array, `${t}: Atomics wraps as the dtype does`);
  }
});

test("dtype table: the simulator's per-thread storage holds the dtype's extreme values exactly", () => {
  const extremes: Record<string, readonly (number | bigint | boolean)[]> = {
    bool: [true, false],
    float16: [float16FromBits(0x7bff), float16FromBits(0x0001)],
    bfloat16: [bfloat16FromBits(0x7f7f), bfloat16FromBits(0x0001)],
    float32: [3.4028234663852886e38, 2 ** -149],
    float64: [Number.MAX_VALUE, Number.MIN_VALUE],
  };
  for (const t of SCALAR_NAMES) {
    const { cls, bits, simLocal } = DTYPE_INFO[t];
    const ints = cls === "int" ? [-(2n ** BigInt(bits - 1)), 2n ** BigInt(bits - 1) - 1n] : [0n, 2n ** BigInt(bits) - 1n];
    const values = extremes[t] ?? ints.map((v) => (isBigInt(t) ? v : Number(v)));
    const Local = (globalThis as unknown as Record<string, new (n: number) => { [i: number]: unknown }>)[simLocal]!;
    for (const v of values) {
      const a = new Local(1);
      a[0] = v;
      assert.equal(a[0], v, `${t} ${v} in a ${simLocal}`);
    }
  }
});

test("dtype table: conversion ranks follow the width (C's usual arithmetic conversions), bool lowest", () => {
  for (const a of SCALAR_NAMES) {
    for (const b of SCALAR_NAMES) {
      const [x, y] = [DTYPE_INFO[a], DTYPE_INFO[b]];
      if (a === "bool" || b === "bool") continue;
      assert.equal(Math.sign(x.rank - y.rank), Math.sign(x.bits - y.bits), `${a} vs ${b}`);
    }
    if (a !== "bool") assert.ok(DTYPE_INFO[a].rank > DTYPE_INFO.bool.rank);
  }
});

test("dtype table: printf conversions are C's for the promoted value (64-bit integers: ll, unsigned: u, floats: as double)", () => {
  for (const t of SCALAR_NAMES) {
    const { cls, bits, printf } = DTYPE_INFO[t];
    const length = bits === 64 && cls !== "float" ? "ll" : "";
    assert.equal(printf, cls === "float" ? "%g" : `%${length}${cls === "uint" ? "u" : "d"}`, t);
  }
});

test("half.ts: the 16-bit float dtypes' conversions round-trip every bit pattern that is not a NaN", () => {
  for (const t of SCALAR_NAMES.filter(isHalfFloat)) {
    const { toBits, fromBits, round } = HALF_FLOAT[t];
    for (let h = 0; h < 0x10000; h++) {
      const x = fromBits(h);
      if (Number.isNaN(x)) continue;
      assert.equal(toBits(x), h, `${t} 0x${h.toString(16)}`);
      assert.equal(Object.is(round(x), x), true, `${t} 0x${h.toString(16)} is its own rounding`);
    }
  }
});
