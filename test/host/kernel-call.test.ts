// A kernel called as a function, without a launch configuration, throws Numba's error in our launch
// syntax; it is still a Kernel with all of its API, and launches as before.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
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

test("a kernel with no name anywhere (an arrow function, not assigned) is 'kernel' in that error", () => {
  assert.throws(() => callAsFunction(cuda.jit((a: Float32Array) => { a[0] = 1; })), /configuration was not specified for 'kernel'\. Use the syntax: kernel\.configure\(/);
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

// ---------------------------------------------------------------------------
// names and places in launch errors

const thisFile = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
/** `test/host/kernel-call.test.ts:N`, N the one line of this file that holds `marker` */
function lineOf(marker: string): string {
  const lines = thisFile.flatMap((l, i) => (l.includes(marker) && !l.includes(`lineOf("${marker}`) ? [i + 1] : []));
  assert.equal(lines.length, 1, marker);
  return `test/host/kernel-call.test.ts:${lines[0]}`;
}

test("an anonymous kernel is named after what its cuda.jit call is assigned to; a function's own name and options.name come first", () => {
  const add = cuda.jit((a: Float32Array) => { a[0] += 1; });
  let typed: Kernel<(a: Float32Array) => void> = cuda.jit((a: Float32Array) => { a[0] = 2; });
  typed = cuda.jit((a: Float32Array) => { a[0] = 3; });
  const kernels = {
    scale: cuda.jit((a: Float32Array) => { a[0] *= 2; }),
  };
  const [unbound] = [cuda.jit((a: Float32Array) => { a[0] = 0; })];
  assert.deepEqual([add.name, typed.name, kernels.scale.name, unbound.name], ["add", "typed", "scale", "kernel"]);
  assert.equal(cuda.jit(function named(a: Float32Array) { a[0] = 1; }).name, "named");
  const other = cuda.jit((a: Float32Array) => { a[0] = 1; }, { name: "chosen" });
  assert.equal(other.name, "chosen");
  assert.throws(() => callAsFunction(add), /configuration was not specified for 'add'/);
  assert.match(add.inspectAsm(add.compile("void(float32[::1])")), /\.visible \.entry add\(/, "the PTX entry is named so too");
});

test("a launch error says which kernel (where it was made) and which line launched it", () => {
  const add = cuda.jit((a: Float32Array, b: number) => { a[0] += b; }); // made: add
  const a = new Float32Array(1);
  const place = `kernel 'add' (made at ${lineOf("// made: add")})`;
  const launchedAt = (marker: string) => (e: unknown) => {
    assert.ok(e instanceof LaunchError);
    assert.ok(e.message.endsWith(`\n  ${place}, launched at ${lineOf(marker)}`), e.message);
    assert.ok(e.stack!.includes(`${place}, launched at`), "the stack repeats the message");
    return true;
  };
  assert.throws(() => add.configure(1, 2048)(a, 1), launchedAt("// launch: block too large"));
  const launch = add.configure(1, 1);
  launch(a, 1); // the next launches go the fast way
  assert.throws(() => launch(a, 1, 2 as never), launchedAt("// launch: an argument too many"));
  const big = add.configure([1, 2 ** 16, 1], 1);
  assert.throws(() => big(a, 1), launchedAt("// launch: grid y too large"));
  assert.throws(() => add.configure(1, 1)("a" as never, 1), launchedAt("// launch: not an array"));
  assert.throws(() => add.configure(0, 1), launchedAt("// configure: an empty grid"));
  assert.throws(() => add.forall(1)("a" as never, 1), launchedAt("// forall: not an array"));
  assert.equal(a[0], 1, "only the good launch ran");
});
