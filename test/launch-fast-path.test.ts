// The launch's fast path: a launch that repeats the previous one's argument kinds (numbers, the same
// DeviceArrays) skips argument typing; every other launch must behave exactly as the general path.
// Each kernel's PTX also goes through ptxas.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, float32, LaunchError, type Kernel } from "../src/index.js";
import { hasPtxas, ptxasCheck } from "./helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

function ptxChecked<K extends Kernel>(k: K): K {
  if (hasPtxas()) for (const sig of k.signatures) ptxasCheck(k.inspectAsm(sig, { computeCapability: [8, 0] }), "sm_80");
  return k;
}

test("without a signature, each number is typed as ever: -0 and fractions are float64, integers int32", () => {
  const store = cuda.jit((o: Float64Array, x: number) => { o[0] = x * 2; });
  const o = cuda.deviceArray(1, "float64");
  const launch = store.configure(1, 1);
  const result = () => o.copyToHost()[0];
  launch(o, 3);
  assert.equal(result(), 6);
  launch(o, -0); // an int32 launch just before: -0 must still make a float64 specialisation
  assert.ok(Object.is(result(), -0));
  launch(o, 2.25);
  assert.equal(result(), 4.5);
  launch(o, 2 ** 31);
  assert.equal(result(), 2 ** 32);
  launch(o, 5);
  assert.equal(result(), 10);
  assert.deepEqual(store.signatures.sort(), ["void(array(float64, 1d, C), float64)", "void(array(float64, 1d, C), int32)"]);
  ptxChecked(store);
});

test("an eager kernel converts each number on every launch: float32 rounds, int32 refuses fractions", () => {
  const k = ptxChecked(cuda.jit((o: Float64Array, x: number, n: number) => { o[0] = x; o[1] = n; }, { signature: "void(float64[::1], float32, int32)" }));
  const o = cuda.deviceArray(2, "float64");
  const launch = k.configure(1, 1);
  launch(o, 0.1, 7);
  assert.deepEqual(Array.from(o.copyToHost()), [Math.fround(0.1), 7]);
  launch(o, 1 / 3, -2);
  assert.deepEqual(Array.from(o.copyToHost()), [Math.fround(1 / 3), -2]);
  assert.throws(() => launch(o, 1, 2.5), (e: unknown) => e instanceof LaunchError && /'n'\) is 2.5/.test(e.message));
  launch(o, float32(4), 3); // a typed scalar takes the general path
  assert.deepEqual(Array.from(o.copyToHost()), [4, 3]);
});

test("a DeviceArray launched before is still checked: another array is used, a freed one refused", () => {
  const k = ptxChecked(cuda.jit((a: Float32Array, v: number) => { a[cuda.grid(1)] = v; }, { signature: "void(float32[::1], float32)" }));
  const launch = k.configure(1, 2);
  const first = cuda.deviceArray(2, float32), second = cuda.deviceArray(2, float32);
  launch(first, 1);
  launch(first, 2);
  launch(second, 3);
  assert.deepEqual(Array.from(first.copyToHost()), [2, 2]);
  assert.deepEqual(Array.from(second.copyToHost()), [3, 3]);
  launch(first, 4);
  first.free();
  assert.throws(() => launch(first, 4), /used after its device memory was released/);
  const host = new Float32Array(2);
  launch(host, 5); // a host array after device arrays: copied in and back
  assert.deepEqual(Array.from(host), [5, 5]);
  launch(second, 6);
  assert.deepEqual(Array.from(second.copyToHost()), [6, 6]);
});

test("a bad argument after fast launches gets the general path's error", () => {
  const k = ptxChecked(cuda.jit((a: Float32Array, v: number) => { a[0] = v; }, { signature: "void(float32[::1], float32)" }));
  const launch = k.configure(1, 1);
  const a = cuda.deviceArray(1, float32);
  launch(a, 1);
  launch(a, 1);
  // @ts-expect-error a string is no kernel argument
  assert.throws(() => launch(a, "x"), (e: unknown) => e instanceof LaunchError && /argument 2 is a string/.test(e.message));
  // @ts-expect-error nor is a float64 array for a float32 parameter
  assert.throws(() => launch(new Float64Array(1), 1), /compiled for void\(array\(float32, 1d, C\), float32\)/);
  launch(a, 9);
  assert.deepEqual(Array.from(a.copyToHost()), [9]);
});

test("scalars of each fast kind keep their values across fast, general and refused launches", () => {
  const k = ptxChecked(cuda.jit((o: Float64Array, a: number, b: number, c: number, d: number) => { o[0] = a; o[1] = b; o[2] = c; o[3] = d; }, { signature: "void(float64[::1], float32, float64, int32, float32)" }));
  const o = cuda.deviceArray(4, "float64");
  const launch = k.configure(1, 1);
  const expect = (a: number, b: number, c: number, d: number) => assert.deepEqual(Array.from(o.copyToHost()), [Math.fround(a), b, c, Math.fround(d)]);
  launch(o, 0.1, 0.2, 3, 0.4); // general: the first launch
  expect(0.1, 0.2, 3, 0.4);
  launch(o, 1.1, 1.2, -4, 1.4); // fast
  expect(1.1, 1.2, -4, 1.4);
  launch(o, 2.1, 2.2, 5, float32(2.5)); // a typed scalar: general
  expect(2.1, 2.2, 5, 2.5);
  assert.throws(() => launch(o, 9.1, 9.2, 9.5, 9.4), /'c'\) is 9.5/); // refused: nothing launched
  expect(2.1, 2.2, 5, 2.5);
  launch(o, 3.1, 3.2, 2 ** 31 - 1, 3.4); // fast again, every value its own
  expect(3.1, 3.2, 2 ** 31 - 1, 3.4);
  launch(o, 4.1, 4.2, -7, 4.4);
  expect(4.1, 4.2, -7, 4.4);
});
