// The launch's fast path: a launch that repeats the previous one's argument kinds (numbers, the same
// DeviceArrays) skips argument typing; every other launch must behave exactly as the general path.
// Each kernel's PTX also goes through ptxas.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, float16, float32, LaunchError, type DeviceArray, type Kernel } from "../../src/index.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

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

// ---------------------------------------------------------------------------
// the configured launcher has the kernel's arity: arguments reach the fast fill as they were passed

const CYCLE = ["float32", "int32", "float64"] as const;

/** A kernel of 256 parameters, `o` and 255 scalars typed float32, int32, float64 in turn: each stored in o. */
function storeEach(): Kernel {
  const names = Array.from({ length: 255 }, (_, i) => `a${i + 1}`);
  const fn = new Function("o", ...names, names.map((n, i) => `o[${i}] = ${n};`).join("\n")) as (...a: never[]) => void;
  const types = names.map((_, i) => CYCLE[i % 3]);
  return ptxChecked(cuda.jit(fn, { signature: `void(float64[::1], ${types.join(", ")})` }));
}

/** Launch `round`'s 255 scalars (distinct per round and position), and what the kernel stores for them. */
function scalars(round: number): { values: number[]; stored: number[] } {
  const values = Array.from({ length: 255 }, (_, i) => (CYCLE[i % 3] === "int32" ? i * 1000 - round : i / 3 + round * 0.1));
  const stored = values.map((v, i) => (CYCLE[i % 3] === "float32" ? Math.fround(v) : v));
  return { values, stored };
}

test("a 256-parameter launch goes through a launcher of that arity, every value at its parameter's type", () => {
  const k = storeEach();
  const o = cuda.deviceArray(255, "float64");
  const launch = k.configure(1, 1);
  assert.equal(launch.length, 256);
  for (let round = 0; round < 4; round++) { // the first launch is the general one, then the fast path
    const { values, stored } = scalars(round);
    launch(o, ...values);
    assert.deepEqual(Array.from(o.copyToHost()), stored, `round ${round}`);
  }
  const { values, stored } = scalars(9);
  values[99] = float32(2.5) as unknown as number; // a typed scalar: the general path, then fast again
  launch(o, ...values);
  assert.deepEqual(Array.from(o.copyToHost()), [...stored.slice(0, 99), 2.5, ...stored.slice(100)]);
  launch(o, ...scalars(10).values);
  assert.deepEqual(Array.from(o.copyToHost()), scalars(10).stored);
});

test("a wrong value at position 200 is refused with the argument named; nothing is launched", () => {
  const k = storeEach();
  const o = cuda.deviceArray(255, "float64");
  const launch = k.configure(1, 1);
  const good = scalars(1);
  launch(o, ...good.values);
  launch(o, ...good.values); // fast
  const notANumber = [...good.values] as unknown[];
  notANumber[198] = "7"; // argument 200: o is argument 1
  assert.throws(() => launch(o, ...(notANumber as number[])), (e: unknown) => e instanceof LaunchError && /^argument 200 is a string/.test(e.message));
  const fraction = [...good.values];
  fraction[198 + 1] = 2.5; // argument 201, a200: int32
  assert.throws(() => launch(o, ...fraction), (e: unknown) => e instanceof LaunchError && /argument 201 \('a200'\) is 2.5, which its int32 parameter cannot hold exactly/.test(e.message));
  assert.deepEqual(Array.from(o.copyToHost()), good.stored);
  const host = new Float64Array(255).fill(-1); // a host array: not copied back from a refused launch
  assert.throws(() => launch(host, ...fraction), LaunchError);
  assert.deepEqual(Array.from(host), new Array(255).fill(-1));
  launch(o, ...scalars(2).values);
  assert.deepEqual(Array.from(o.copyToHost()), scalars(2).stored);
});

test("a launch with too few or too many arguments gets the general path's error, after fast launches", () => {
  const lazy = ptxChecked(cuda.jit((o: Float64Array, x: number) => { o[0] = x; }));
  const o = cuda.deviceArray(1, "float64");
  const launch = lazy.configure(1, 1);
  launch(o, 1);
  launch(o, 2);
  assert.equal(launch.length, 2);
  // @ts-expect-error one argument short
  assert.throws(() => launch(o), (e: unknown) => e instanceof LaunchError && /takes 2 argument\(s\); the launch passed 1$/m.test(e.message));
  // @ts-expect-error one too many
  assert.throws(() => launch(o, 3, 4), /takes 2 argument\(s\); the launch passed 3$/m);
  launch(o, 5);
  assert.deepEqual(Array.from(o.copyToHost()), [5]);

  const eager = ptxChecked(cuda.jit((o: Float64Array, x: number) => { o[0] = x; }, { signature: "void(float64[::1], int32)" }));
  const run = eager.configure(1, 1);
  run(o, 6);
  run(o, 7);
  // @ts-expect-error one too many
  assert.throws(() => run(o, 8, 9), /compiled for void\(array\(float64, 1d, C\), int32\) and cannot take \(array\(float64, 1d, C\), int32, int32\)/);
  // @ts-expect-error one argument short
  assert.throws(() => run(o), /cannot take \(array\(float64, 1d, C\)\)/);
  assert.deepEqual(Array.from(o.copyToHost()), [7]);
});

test("arrays and scalars mixed: each array slot follows the DeviceArray passed, each scalar its value", () => {
  const k = ptxChecked(cuda.jit((a: Float32Array, x: number, b: Int32Array, n: number, c: Float64Array) => {
    a[0] = x; b[0] = n; c[0] = n * 2;
  }, { signature: "void(float32[::1], float32, int32[::1], int32, float64[::1])" }));
  const launch = k.configure(1, 1);
  const [a1, a2] = [cuda.deviceArray(1, float32), cuda.deviceArray(1, float32)];
  const b = cuda.deviceArray(1, "int32"), c = cuda.deviceArray(1, "float64");
  const read = (...xs: DeviceArray[]) => xs.map((x) => x.copyToHost()[0]);
  launch(a1, 0.1, b, 1, c);
  launch(a1, 0.2, b, 2, c); // fast
  assert.deepEqual(read(a1, b, c), [Math.fround(0.2), 2, 4]);
  launch(a2, 0.3, b, 3, c); // another array: general, then fast with it
  launch(a2, 0.4, b, 4, c);
  assert.deepEqual(read(a1, a2, b), [Math.fround(0.2), Math.fround(0.4), 4]);
  const host = new Int32Array(1);
  launch(a2, 0.5, host, 5, c); // a host array in the middle
  assert.deepEqual([host[0], ...read(a2, b)], [5, Math.fround(0.5), 4]);
  launch(a1, 0.6, b, 6, c);
  assert.deepEqual(read(a1, a2, b, c), [Math.fround(0.6), Math.fround(0.5), 6, 12]);
});

test("a launch shape the device refuses is refused on the fast path too, and the kernel launches as before after it", () => {
  const k = ptxChecked(cuda.jit((o: Float64Array, x: number) => { o[0] = x; }, { signature: "void(float64[::1], float64)" }));
  const o = cuda.deviceArray(1, "float64");
  const launch = k.configure(1, 1);
  launch(o, 1);
  launch(o, 2);
  const tooBig = k.configure(1, 2048);
  assert.throws(() => tooBig(o, 3), (e: unknown) => e instanceof LaunchError && /block of 2048×1×1 = 2048 threads exceeds the limit of 1024/.test(e.message));
  assert.deepEqual(Array.from(o.copyToHost()), [2]);
  launch(o, 4);
  assert.deepEqual(Array.from(o.copyToHost()), [4]);
});

test("stream 0 is the default stream, as Numba's kernel[grid, block, 0, 0]: configure, forall and copies take it; anything else that is no Stream is refused", () => {
  const add = cuda.jit((a: Float32Array, k: number) => { const i = cuda.grid(1); if (i < a.length) a[i] += k; });
  const host = new Float32Array([1, 2, 3]);
  add.configure(1, 4, 0, 0)(host, 1);
  add.forall(3, 0)(host, 10);
  const d = cuda.toDevice(host, 0);
  add.configure(1, 4, 0)(d, 100);
  assert.deepEqual(Array.from(d.copyToHost(undefined, 0)), [112, 113, 114]);
  assert.deepEqual(Array.from(host), [12, 13, 14]);
  d.free();
  for (const bad of [1, "0", {}] as const) {
    assert.throws(() => add.configure(1, 4, bad as unknown as 0)(host, 1), (e: unknown) =>
      e instanceof LaunchError && /the stream must be a Stream from cuda\.stream\(\), or 0 or undefined for the default stream/.test(e.message));
  }
  assert.deepEqual(Array.from(host), [12, 13, 14], "a refused launch leaves the host array as it was");
});

// ---------------------------------------------------------------------------
// launcher.callWith(list): the same launches with the arguments in one list

/** The first line of what `f` throws: the error itself, without where the launch was. */
function firstLine(f: () => void): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message.split("\n")[0]!;
  }
  assert.fail("expected the launch to throw");
}

test("callWith stores every value as the spread call does: general, then fast, then general for a typed scalar", () => {
  const k = storeEach();
  const o = cuda.deviceArray(255, "float64");
  const launch = k.configure(1, 1);
  for (let round = 0; round < 4; round++) {
    const { values, stored } = scalars(round);
    launch.callWith([o, ...values]);
    assert.deepEqual(Array.from(o.copyToHost()), stored, `round ${round}`);
  }
  const { values, stored } = scalars(9);
  const list: unknown[] = [o, ...values];
  list[100] = float32(2.5); // argument 101: a typed scalar after 99 values stored by the fast fill
  launch.callWith(list as Parameters<typeof launch>);
  assert.deepEqual(Array.from(o.copyToHost()), [...stored.slice(0, 99), 2.5, ...stored.slice(100)]);
  launch(o, ...scalars(10).values); // the spread call and callWith share the fast path
  assert.deepEqual(Array.from(o.copyToHost()), scalars(10).stored);
  launch.callWith([o, ...scalars(11).values]);
  assert.deepEqual(Array.from(o.copyToHost()), scalars(11).stored);
});

test("callWith refuses what the spread call refuses, with its error, and launches nothing", () => {
  const k = storeEach();
  const o = cuda.deviceArray(255, "float64");
  const launch = k.configure(1, 1);
  const good = scalars(1);
  launch.callWith([o, ...good.values]);
  launch.callWith([o, ...good.values]); // fast
  const fraction: unknown[] = [o, ...good.values];
  fraction[200] = 2.5; // argument 201, a200: int32, after 199 values stored
  const spread = firstLine(() => launch(...(fraction as Parameters<typeof launch>)));
  assert.match(spread, /^argument 201 \('a200'\) is 2.5, which its int32 parameter cannot hold exactly/);
  assert.equal(firstLine(() => launch.callWith(fraction as Parameters<typeof launch>)), spread);
  const notANumber: unknown[] = [o, ...good.values];
  notANumber[199] = "7";
  assert.match(firstLine(() => launch.callWith(notANumber as Parameters<typeof launch>)), /^argument 200 is a string/);
  assert.match(firstLine(() => launch.callWith([o, ...good.values.slice(1)] as unknown as Parameters<typeof launch>)), /compiled for void\(array\(float64, 1d, C\), float32, int32/);
  assert.deepEqual(Array.from(o.copyToHost()), good.stored, "nothing launched");
  const two = scalars(2);
  launch.callWith([o, ...two.values]); // every value its own after the refused fills' stores
  assert.deepEqual(Array.from(o.copyToHost()), two.stored);
  const tooBig = k.configure(1, 2048);
  assert.match(firstLine(() => tooBig.callWith([o, ...scalars(3).values])), /block of 2048×1×1 = 2048 threads exceeds the limit of 1024/);
  assert.deepEqual(Array.from(o.copyToHost()), two.stored);
});

test("callWith of a typed array: each number converted to its parameter's type; a fraction for an int32 refused", () => {
  const names = ["a", "b", "c", "d"];
  const k = ptxChecked(cuda.jit(new Function(...names, "o", names.map((n, i) => `o[${i}] = ${n};`).join("\n")) as (...a: never[]) => void, { signature: "void(float32, int32, float64, float32, float64[::1])" }));
  const o = cuda.deviceArray(4, "float64");
  const launch = k.configure(1, 1);
  // the output array last: a typed array of numbers cannot hold it, so a list of numbers needs a kernel of numbers only
  const numbersOnly = ptxChecked(cuda.jit((a: number, b: number, c: number) => { if (a !== Math.fround(0.1) || b !== 7 || c !== 0.1) throw new Error("wrong value"); }, { signature: "void(float32, int32, float64)" }));
  const values = new Float64Array([0.1, 7, 0.1]);
  for (let i = 0; i < 3; i++) numbersOnly.configure(1, 1).callWith(values);
  cuda.synchronize();
  values[1] = 7.5;
  assert.match(firstLine(() => numbersOnly.configure(1, 1).callWith(values)), /^argument 2 \('b'\) is 7.5, which its int32 parameter cannot hold exactly/);
  for (let round = 0; round < 3; round++) {
    launch.callWith([0.1 + round, 1 - 3 * round, 1 / 3 + round, 0.7, o]);
    assert.deepEqual(Array.from(o.copyToHost()), [Math.fround(0.1 + round), 1 - 3 * round, 1 / 3 + round, Math.fround(0.7)]);
  }
});

test("callWith with 64-bit integers, bool and float16 scalars and a host array: exact, and the host array copied back", () => {
  const k = ptxChecked(cuda.jit((o: BigInt64Array, u: BigUint64Array, f: Float32Array, a: bigint, b: bigint, c: boolean, h: number) => {
    o[0] = a; u[0] = b; f[0] = h; f[1] = c ? 1 : 2;
  }, { signature: "void(int64[::1], uint64[::1], float32[::1], int64, uint64, bool, float16)" }));
  const o = cuda.deviceArray(1, "int64"), u = cuda.deviceArray(1, "uint64"), f = new Float32Array(2);
  const launch = k.configure(1, 1);
  for (const [a, b, c, h] of [[-(2n ** 62n) - 3n, 2n ** 64n - 5n, true, 0.1], [5n, 1n, false, -65504], [-1n, 2n ** 63n, true, 2 ** -24]] as const) {
    launch.callWith([o, u, f, a, b, c, h]);
    assert.deepEqual([o.copyToHost()[0], u.copyToHost()[0], f[0], f[1]], [a, b, float16.fromBits(float16.toBits(h)), c ? 1 : 2]);
  }
  assert.match(firstLine(() => launch.callWith([o, u, f, 2n ** 63n, 1n, true, 1])), /^argument 4 \('a'\) is 9223372036854775808n, which its int64 parameter cannot hold exactly/);
});

test("forall launchers take callWith too; callWith refuses anything but a list", () => {
  const add = ptxChecked(cuda.jit((a: Float32Array, k: number) => { const i = cuda.grid(1); if (i < a.length) a[i] += k; }));
  const host = new Float32Array([1, 2, 3]);
  add.forall(3).callWith([host, 10]);
  add.configure(1, 4).callWith([host, 100]);
  assert.deepEqual(Array.from(host), [111, 112, 113]);
  for (const launch of [add.configure(1, 4), add.forall(3)]) {
    assert.throws(() => launch.callWith(5 as never), (e: unknown) => e instanceof LaunchError && /^callWith takes the launch's arguments in one array or typed array; got a number\n\s+kernel .*launched at /.test(e.message));
    assert.throws(() => launch.callWith(null as never), /got null/);
  }
});
