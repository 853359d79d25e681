// cuda.reduce against host-computed references.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cuda } from "../../src/cuda.js";
import { ndarray } from "../../src/ndarray.js";
import { ptxasCheck, PTXAS_TARGETS } from "../helpers/ptxas.js";
import { missingTools } from "../helpers/tools.js";

/** deterministic uniform numbers in [lo, hi) (a 32-bit LCG) */
function random(n: number, lo: number, hi: number, seed = 1): number[] {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + (hi - lo) * (s / 2 ** 32);
  });
}

const toInt = (x: number) => Math.round(x) | 0; // no -0

const sum = cuda.reduce((a, b) => a + b);
const max = cuda.reduce((a, b) => Math.max(a, b));
const product = cuda.reduce((a, b) => a * b);

// below, above and at multiples of the 128-thread block and of 64 full blocks (8192)
const SIZES = [1, 2, 127, 128, 129, 1000, 8192, 8193, 30001];

describe("cuda.reduce", () => {
  test("float32 sum matches a float64 host sum within float32 tree-order error", () => {
    for (const n of SIZES) {
      const xs = random(n, -1, 1, n);
      const a = new Float32Array(xs);
      const exact = Array.from(a).reduce((s, x) => s + x, 0);
      const magnitude = Array.from(a).reduce((s, x) => s + Math.abs(x), 0);
      const got = sum(a) as number;
      assert.equal(typeof got, "number");
      assert.equal(got, Math.fround(got), "a float32 result");
      // each partial sum rounds once per level: sequential chain (≤ n/8192 + 1) plus the tree (≤ 7 + 6 levels)
      const bound = (Math.ceil(n / 8192) + 14) * 2 ** -24 * magnitude;
      assert.ok(Math.abs(got - exact) <= bound, `n=${n}: ${got} vs ${exact} (bound ${bound})`);
    }
  });

  test("integer sums are exact: int32, uint32, int64", () => {
    for (const n of SIZES) {
      const ints = random(n, -1000, 1000, n + 7).map(toInt);
      assert.equal(sum(new Int32Array(ints)), ints.reduce((s, x) => s + x, 0), `int32 n=${n}`);
      const us = ints.map((x) => x + 1000);
      assert.equal(sum(new Uint32Array(us)), us.reduce((s, x) => s + x, 0), `uint32 n=${n}`);
      const bigs = ints.map((x) => BigInt(x) * 10_000_000_000n);
      // @ts-expect-error one untyped reducer serves every dtype at run time; TypeScript wants a bigint reducer for int64
      assert.equal(sum(new BigInt64Array(bigs)), bigs.reduce((s, x) => s + x, 0n), `int64 n=${n}`);
    }
  });

  test("int32 sums wrap around as on the device", () => {
    const a = new Int32Array(3000).fill(2 ** 30);
    assert.equal(sum(a), (3000 * 2 ** 30) | 0);
  });

  test("max with Math.max over float64 and int32, all negative", () => {
    for (const n of SIZES) {
      const xs = random(n, -1e6, -1, n + 3);
      assert.equal(max(new Float64Array(xs)), Math.max(...xs), `float64 n=${n}`);
      const ints = xs.map(toInt);
      assert.equal(max(new Int32Array(ints)), Math.max(...ints), `int32 n=${n}`);
    }
  });

  test("float64 product of values near 1", () => {
    const xs = random(500, 0.99, 1.01, 9);
    const got = product(new Float64Array(xs)) as number;
    const ref = xs.reduce((p, x) => p * x, 1);
    assert.ok(Math.abs(got - ref) <= 1e-13 * Math.abs(ref), `${got} vs ${ref}`);
  });

  test("init is combined into the result; size limits the elements", () => {
    const ints = random(5000, 0, 100, 4).map(toInt);
    const a = new Int32Array(ints);
    const total = ints.reduce((s, x) => s + x, 0);
    assert.equal(sum(a, { init: 17 }), total + 17);
    assert.equal(sum(a, { size: 10 }), ints.slice(0, 10).reduce((s, x) => s + x, 0));
    assert.equal(sum(a, { size: 300, init: -5 }), ints.slice(0, 300).reduce((s, x) => s + x, 0) - 5);
    assert.equal(max(a, { init: 1000 }), 1000);
    assert.equal(max(new Float32Array([-3, -2]), { init: -7 }), -2);
    assert.deepEqual(Array.from(a), ints, "the input is left as it was");
  });

  test("a plain JS array is no array to reduce: the error says so", () => {
    assert.throws(() => sum([1, 2, 3] as never), (e: unknown) => e instanceof TypeError && /cuda\.reduce works on 1-d arrays; got UniTuple\(int32 x 3\) \(a plain JS array is a tuple: pass a typed array\)/.test(e.message));
  });

  test("an unknown option is a TypeError naming it, not silently ignored", () => {
    assert.throws(() => sum(new Float32Array(4), { inti: 3 } as never), (e: unknown) => e instanceof TypeError && /cuda\.reduce: unknown option 'inti' \(did you mean 'init'\?\); the options are init, dtype, size, stream, res/.test(e.message));
  });

  test("an empty reduction returns init, or 0", () => {
    assert.equal(sum(new Float32Array(0)), 0);
    assert.equal(sum(new Float32Array(0), { init: 2.5 }), 2.5);
    assert.equal(sum(new Int32Array([4, 5]), { size: 0, init: 3 }), 3);
    // @ts-expect-error (as above)
    assert.equal(sum(new BigInt64Array(0)), 0n);
  });

  test("DeviceArray input, res output, stream, strided views", () => {
    const ints = random(2000, -50, 50, 11).map(toInt);
    const d = cuda.toDevice(new Int32Array(ints));
    const res = cuda.deviceArray(2, "int32");
    res.copyToDevice(new Int32Array([-1, 99]));
    const stream = cuda.stream();
    assert.equal(sum(d, { res, stream }), undefined);
    assert.deepEqual(Array.from(res.copyToHost() as Int32Array), [ints.reduce((s, x) => s + x, 0), 99]);

    const everyOther = d.slice([1, null, 2]);
    assert.equal(sum(everyOther), ints.filter((_, i) => i % 2 === 1).reduce((s, x) => s + x, 0));
    assert.equal(max(d, { size: 7 }), Math.max(...ints.slice(0, 7)));

    sum(d, { res, size: 0, init: 42 });
    assert.equal((res.copyToHost() as Int32Array)[0], 42);
    assert.deepEqual(Array.from(d.copyToHost() as Int32Array), ints, "the device input is left as it was");
  });

  test("a 1-d ndarray view is accepted", () => {
    const data = new Float64Array([1, 100, 2, 100, 3, 100]);
    assert.equal(sum(ndarray(data, [3], [2], 0)), 6);
  });

  test("errors: N-d arrays, bad size, bad res", () => {
    assert.throws(() => sum(ndarray(new Float32Array(4), [2, 2])), /1-d arrays/);
    assert.throws(() => sum(new Float32Array(4), { size: 5 }), RangeError);
    assert.throws(() => sum(new Float32Array(4), { size: 1.5 }), RangeError);
    assert.throws(() => sum(new Float32Array(4), { res: new Float32Array(1) as never }), /res must be a DeviceArray/);
    assert.throws(() => cuda.reduce(3 as never), TypeError);
  });

  // runs last: every kernel the tests above generated, one per dtype
  test("the generated kernels assemble with ptxas", { skip: missingTools("ptxas") }, () => {
    const kernels = [sum, max, product].flatMap((r) => r.kernels);
    assert.ok(kernels.length >= 6);
    for (const k of kernels) for (const sig of k.signatures) for (const t of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(sig, t), t.arch);
  });
});
