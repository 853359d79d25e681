// A kernel called as a function, without a launch configuration, throws Numba's error in our launch
// syntax; it is still a Kernel with all of its API, and launches as before.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, Kernel, LaunchError } from "../../src/index.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

function double(a: Float32Array) {
  const i = cuda.grid(1);
  if (i < a.length) a[i] *= 2;
}

const callAsFunction = (k: unknown, ...args: unknown[]) => (k as (...a: unknown[]) => void)(...args);

test("calling a kernel without configure throws a LaunchError that shows the launch syntax", () => {
  const k = cuda.jit(double);
  const a = new Float32Array([1, 2, 3]);
  assert.throws(() => callAsFunction(k, a), (e: unknown) => {
    assert.ok(e instanceof LaunchError);
    assert.equal(e.message, "Kernel launch configuration was not specified for 'double'. Use the syntax: kernel.configure(blocksPerGrid, threadsPerBlock)(...args), or kernel.forall(n)(...args) to cover n threads");
    return true;
  });
  assert.deepEqual(Array.from(a), [1, 2, 3], "nothing ran");
  assert.deepEqual(k.signatures, [], "nothing compiled");
});

test("an anonymous kernel is named 'kernel' in that error", () => {
  const k = cuda.jit((a: Float32Array) => { a[0] = 1; });
  assert.throws(() => callAsFunction(k), /configuration was not specified for 'kernel'\. Use the syntax: kernel\.configure\(/);
});

test("the callable kernel keeps the Kernel API: instanceof, name, fn, options, launches, inspection", () => {
  const options = { fastmath: false };
  const k = cuda.jit(double, options);
  assert.equal(typeof k, "function");
  assert.ok(k instanceof Kernel);
  assert.equal(k.name, "double");
  assert.equal(k.fn, double);
  assert.equal(k.options, options);
  const a = new Float32Array([1, 2, 3, 4, 5]);
  k.configure(1, 8)(a);
  k.forall(a.length)(a);
  assert.deepEqual(Array.from(a), [4, 8, 12, 16, 20]);
  assert.deepEqual(k.signatures, ["void(array(float32, 1d, C))"]);
  const ptx = k.inspectAsm();
  assert.match(ptx, /\.visible \.entry/);
  if (hasPtxas()) ptxasCheck(ptx, "sm_80");
  assert.match(k.inspectTypes(), /a: array\(float32, 1d, C\)/);
});

test("an eager signature still compiles at construction, and the kernel is callable-guarded too", () => {
  const k = cuda.jit(double, { signature: "void(float32[::1])" });
  assert.deepEqual(k.signatures, ["void(array(float32, 1d, C))"]);
  if (hasPtxas()) ptxasCheck(k.inspectAsm(), "sm_80");
  assert.throws(() => callAsFunction(k, new Float32Array(1)), LaunchError);
});

test("kernels made with new Kernel(...) (as reductions and ufuncs make theirs) are guarded the same way", () => {
  const k = new Kernel(double);
  assert.ok(k instanceof Kernel);
  assert.throws(() => callAsFunction(k, new Float32Array(1)), /configuration was not specified for 'double'/);
});

test("a kernel passed in env to another kernel is a clear error, not a call of its function object", () => {
  // typed as a function only so that the (wrong) call type-checks
  const inner = cuda.jit(double) as unknown as (a: Float32Array) => void;
  const outer = cuda.jit((a: Float32Array) => { inner(a); }, { env: { inner } });
  assert.throws(() => outer.configure(1, 1)(new Float32Array(1)), /env value 'inner' is a kernel, which kernels cannot call; make it a device function with cuda\.jit\(fn, \{ device: true \}\)/);
});
