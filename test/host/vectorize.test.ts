// cuda.vectorize / cuda.guvectorize against host-computed references.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cuda, type KernelArray2 } from "../../src/cuda.js";
import { float32, float64 } from "../../src/dtypes.js";
import { LaunchError, TypingError } from "../../src/errors.js";
import { DeviceArray } from "../../src/runtime/devicearray.js";
import { NDArray, ndarray } from "../../src/ndarray.js";
import type { Kernel } from "../../src/kernel.js";
import { ptxasCheck, PTXAS_TARGETS } from "../helpers/ptxas.js";
import { missingTools } from "../helpers/tools.js";

/** deterministic small integers in [lo, hi) (a 32-bit LCG): exact in every float type */
function ints(n: number, lo: number, hi: number, seed = 1): number[] {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + Math.floor((hi - lo) * (s / 2 ** 32));
  });
}

/** every ufunc the tests make, for the final ptxas check of their generated kernels */
const ufuncs: { kernels: readonly Kernel[] }[] = [];
function track<T extends { kernels: readonly Kernel[] }>(f: T): T {
  ufuncs.push(f);
  return f;
}

describe("cuda.vectorize", () => {
  const add = track(cuda.vectorize((a: number, b: number) => a + b));

  test("array with a scalar: the scalar takes the array's type", () => {
    const a = new Float32Array([1.1, 2.2, 3.3]);
    const r = add(a, 0.1);
    assert.ok(r instanceof Float32Array);
    assert.deepEqual(Array.from(r), Array.from(a, (x) => Math.fround(x + Math.fround(0.1))));
    const i = add(new Int32Array([1, -2, 2147483647]), 2);
    assert.ok(i instanceof Int32Array);
    assert.deepEqual(Array.from(i), [3, 0, -2147483647], "int32 wraps");
    const s = add(0.5, new Float64Array([1, 2]));
    assert.ok(s instanceof Float64Array);
    assert.deepEqual(Array.from(s), [1.5, 2.5]);
  });

  test("2-d broadcasting: (3,1) with (1,4), and (4,) with (3,4)", () => {
    const col = ndarray(new Float64Array([1, 2, 3]), [3, 1]);
    const row = ndarray(new Float64Array([10, 20, 30, 40]), [1, 4]);
    const r = add(col, row) as NDArray;
    assert.ok(r instanceof NDArray);
    assert.deepEqual(r.shape, [3, 4]);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) assert.equal(r.get(i, j), col.get(i, 0) + row.get(0, j));

    const m = ndarray(new Int32Array(ints(12, -100, 100, 3)), [3, 4]);
    const v = new Int32Array([1, 2, 3, 4]);
    const r2 = add(v, m) as NDArray;
    assert.deepEqual(r2.shape, [3, 4]);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) assert.equal(r2.get(i, j), m.get(i, j) + v[j]!);

    const cube = ndarray(new Int32Array(ints(6, -100, 100, 13)), [2, 1, 3]);
    const tall = ndarray(new Int32Array([1000, 2000, 3000, 4000]), [4, 1]);
    const r3 = add(cube, tall) as NDArray;
    assert.deepEqual(r3.shape, [2, 4, 3]);
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 4; j++) for (let k = 0; k < 3; k++) assert.equal(r3.get(i, j, k), cube.get(i, 0, k) + tall.get(j, 0));
    }
  });

  test("strided and transposed host views", () => {
    const data = new Float32Array(ints(6, -9, 9, 5));
    const t = ndarray(data, [3, 2], [1, 3], 0); // the transpose of a (2,3) array
    const r = add(t, t) as NDArray;
    for (let i = 0; i < 3; i++) for (let j = 0; j < 2; j++) assert.equal(r.get(i, j), 2 * data[j * 3 + i]!);
    const everyOther = ndarray(data, [3], [2], 1);
    assert.deepEqual(Array.from(add(everyOther, 1) as Float32Array), [data[1]! + 1, data[3]! + 1, data[5]! + 1]);
  });

  test("explicit signatures pick the result type and cast inputs safely", () => {
    const mad = track(cuda.vectorize((a: number, b: number) => a * b + 1, ["float32(float32, float32)", "float64(float64, float64)"]));
    assert.deepEqual(mad.signatures, ["float32(float32, float32)", "float64(float64, float64)"]);
    const f = mad(new Float32Array([1.5, -2]), new Float32Array([2, 3]));
    assert.ok(f instanceof Float32Array);
    assert.deepEqual(Array.from(f), [4, -5]);
    const d = mad(new Float64Array([0.25, 1e300]), 3);
    assert.ok(d instanceof Float64Array);
    assert.deepEqual(Array.from(d), [1.75, 3e300]);
    const i16 = mad(new Int16Array([300, -7]), new Int16Array([2, 2]));
    assert.ok(i16 instanceof Float32Array, "int16 casts safely to float32");
    assert.deepEqual(Array.from(i16), [601, -13]);
    const i32 = mad(new Int32Array([5]), new Int32Array([4]));
    assert.ok(i32 instanceof Float64Array, "int32 needs float64");

    const add2 = track(cuda.vectorize((a: number, b: number) => a + b, ["int32(int32, int32)", "float64(float64, float64)"]));
    const value = (r: unknown) => (r as NDArray).data[0];
    assert.equal(value(add2(1.2, 2.3)), 3.5, "fractional scalars select the float64 signature (Numba: 3.5), not int32 truncation");
    assert.ok((add2(1.2, 2.3) as NDArray).data instanceof Float64Array);
    assert.ok((add2(1, 2) as NDArray).data instanceof Int32Array, "integral scalars bind to int32");
    assert.ok((add2(2 ** 40, 1) as NDArray).data instanceof Float64Array, "an integer int32 cannot hold casts to float64");
    assert.ok((add2(new Int32Array([1]), 0.5) as Float64Array) instanceof Float64Array, "int32 array + fractional scalar: float64");
    assert.deepEqual(Array.from(add2(new Int32Array([1, 2]), 3) as Int32Array), [4, 5]);

    const narrow = track(cuda.vectorize((a: number) => a / 3, "float32(float32)"));
    assert.throws(() => narrow(new Float64Array([1])), (e: unknown) => e instanceof TypingError && /no signature/.test(e.message));
    assert.deepEqual(Array.from(narrow(new Float32Array([1])) as Float32Array), [Math.fround(1 / 3)]);
  });

  test("inferred result types follow the kernel language", () => {
    const gt = track(cuda.vectorize((a: number, b: number) => a > b));
    const g = gt(new Float32Array([1, 5, 3]), 2.5);
    assert.ok(g instanceof Uint8Array, "bool results");
    assert.deepEqual(Array.from(g), [0, 1, 1]);
    const div = track(cuda.vectorize((a: number, b: number) => a / b));
    const q = div(new Int32Array([7, -7]), new Int32Array([2, 2]));
    assert.ok(q instanceof Float64Array, "int / int is true division");
    assert.deepEqual(Array.from(q), [3.5, -3.5]);
    const pinned = add(new Float32Array([1]), float64(0.1));
    assert.ok(pinned instanceof Float64Array, "a typed scalar keeps its type");
    assert.equal(pinned[0], 1 + 0.1);
    const big = add(new BigInt64Array([1n, -2n]), 3n);
    assert.ok(big instanceof BigInt64Array);
    assert.deepEqual(Array.from(big), [4n, 1n]);
  });

  test("DeviceArray inputs give a DeviceArray; out may be host or device, positional or { out }", () => {
    const hx = new Float32Array(ints(1000, -50, 50, 8));
    const x = cuda.toDevice(hx);
    const r = add(x, float32(0.25));
    assert.ok(r instanceof DeviceArray);
    assert.deepEqual(r.shape, [1000]);
    assert.deepEqual(Array.from(r.copyToHost() as Float32Array), Array.from(hx, (v) => v + 0.25));

    const dout = cuda.deviceArray([1000], "float64");
    assert.equal(add(x, x, dout), dout);
    assert.deepEqual(Array.from(dout.copyToHost() as Float64Array), Array.from(hx, (v) => 2 * v));

    const hout = new Float32Array(1000);
    assert.equal(add(x, 1, { out: hout, stream: cuda.stream() }), hout);
    assert.deepEqual(Array.from(hout), Array.from(hx, (v) => v + 1));

    // a strided device view as input and output
    const m = cuda.toDevice(ndarray(new Float32Array(ints(12, 0, 9, 2)), [3, 4]));
    const col = m.slice(null, 1);
    const host = m.copyToHost() as NDArray<Float32Array>;
    add(col, 100, col);
    const after = m.copyToHost() as NDArray<Float32Array>;
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 4; j++) assert.equal(after.get(i, j), host.get(i, j) + (j === 1 ? 100 : 0));
    }
  });

  test("scalars only give a 0-d array; empty inputs give empty results", () => {
    const r = add(2, 3) as NDArray;
    assert.deepEqual(r.shape, []);
    assert.equal(r.get(), 5);
    const e = add(new Float32Array(0), 1);
    assert.ok(e instanceof Float32Array && e.length === 0);
  });

  test("host scalars of every kind reach the kernel by value, as the signature's type", () => {
    const mulI64 = track(cuda.vectorize((a: bigint, b: bigint) => a * b, ["int64(int64, int64)"]));
    assert.deepEqual([...(mulI64(BigInt64Array.of(-2n, 3n, 1n << 40n), 3) as BigInt64Array)], [-6n, 9n, 3n << 40n]);
    assert.deepEqual([...(mulI64(5n, BigInt64Array.of(-2n, 7n)) as BigInt64Array)], [-10n, 35n]);
    const addU8 = track(cuda.vectorize((a: number, b: number) => a + b, ["uint8(uint8, uint8)"]));
    assert.deepEqual([...(addU8(Uint8Array.of(10, 100), 200) as Uint8Array)], [210, (100 + 200) & 255]);
    const pick = track(cuda.vectorize((a: number, b: boolean) => (b ? a : -a), ["float64(float64, bool)"]));
    assert.deepEqual([...(pick(Float64Array.of(1.5, -2), true) as Float64Array)], [1.5, -2]);
    assert.deepEqual([...(pick(Float64Array.of(1.5, -2), false) as Float64Array)], [-1.5, 2]);
    const addF64 = track(cuda.vectorize((a: number, b: number) => a + b, ["float64(float64, float64)"]));
    assert.deepEqual([...(addF64(Float64Array.of(1), float32(0.1)) as Float64Array)], [1 + Math.fround(0.1)], "a typed scalar keeps its rounding");
    const x = cuda.toDevice(Float64Array.of(1, 2, 3)); // device operands with a scalar: the result stays on the device
    const d = addF64(x, 0.25) as DeviceArray;
    assert.deepEqual([...(d.copyToHost() as Float64Array)], [1.25, 2.25, 3.25]);
    x.free(), d.free();
  });

  test("errors: shapes that do not broadcast, wrong arity, bad out, bad signatures", () => {
    assert.throws(() => add(new Float32Array(3), new Float32Array(4)), (e: unknown) => e instanceof LaunchError && /\(3,\) \(4,\) cannot be broadcast/.test(e.message));
    assert.throws(() => add(new Float32Array(3)), LaunchError);
    assert.throws(() => add(new Float32Array(3), 1, new Float32Array(4)), /out has shape \(4,\); the broadcast result has shape \(3,\)/);
    assert.throws(() => add([1, 2] as never, 1), /plain JS array/);
    assert.throws(() => cuda.vectorize((a: number) => a, ["float32(float32, float32)"]), TypeError);
    assert.throws(() => cuda.vectorize((a: number) => a, "float32[:](float32)"), TypeError);
    assert.throws(() => cuda.vectorize(() => 1), TypeError);
  });

  test("an unknown option of a call or of reduce is a TypeError naming it, not silently ignored", () => {
    const out = new Float32Array(2);
    assert.throws(() => add(new Float32Array(2), 1, { outt: out } as never), (e: unknown) => e instanceof TypeError && /ufunc '.*': unknown option 'outt' \(did you mean 'out'\?\); the options are out, stream/.test(e.message));
    assert.deepEqual([...out], [0, 0], "nothing ran");
    assert.throws(() => add.reduce!(new Float32Array(2), { axes: 0 } as never), /\.reduce: unknown option 'axes' \(did you mean 'axis'\?\); the options are axis, stream/);
  });
});

describe("ufunc.reduce", () => {
  const add = track(cuda.vectorize((a: number, b: number) => a + b, ["int32(int32, int32)", "float64(float64, float64)"]));
  const sub = track(cuda.vectorize((a: number, b: number) => a - b, ["float64(float64, float64)"]));

  /** Numba's device reduction order: halves folded pairwise, an odd extent's last element folded in last */
  function halving(f: (a: number, b: number) => number, xs: number[]): number {
    if (xs.length === 1) return xs[0]!;
    if (xs.length % 2 === 1) return f(halving(f, xs.slice(0, -1)), xs[xs.length - 1]!);
    const h = xs.length / 2;
    return halving(f, xs.slice(0, h).map((x, i) => f(x, xs[h + i]!)));
  }

  test("1-d: a scalar, folded in Numba's halving order (visible with a non-associative op)", () => {
    for (const n of [1, 2, 5, 7, 8, 33]) {
      const xs = ints(n, -50, 50, n);
      assert.equal(add.reduce!(new Float64Array(xs)), xs.reduce((p, q) => p + q, 0), `add n=${n}`);
      assert.equal(sub.reduce!(new Float64Array(xs)), halving((a, b) => a - b, xs), `sub n=${n}`);
    }
    assert.equal(add.reduce!(cuda.toDevice(new Int32Array([1, 2, 3]))), 6, "a DeviceArray too gives a scalar");
  });

  test("N-d along an axis (negative counts from the end); the input is left as it was", () => {
    const m = ndarray(Int32Array.from({ length: 24 }, (_, i) => i), [2, 3, 4]);
    const byAxis = (ax: number) => {
      const out = new Map<string, number>();
      for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) for (let k = 0; k < 4; k++) {
        const key = [i, j, k].filter((_, d) => d !== ax).join(",");
        out.set(key, (out.get(key) ?? 0) + m.get(i, j, k));
      }
      return [...out.values()];
    };
    for (const [axis, ax] of [[0, 0], [1, 1], [2, 2], [-1, 2]] as const) {
      const r = add.reduce!(m, { axis }) as NDArray<Int32Array>;
      assert.deepEqual(Array.from({ length: r.data.length }, (_, i) => r.get(...[Math.floor(i / r.shape[1]!), i % r.shape[1]!])), byAxis(ax), `axis ${axis}`);
    }
    const d = cuda.toDevice(m);
    const r = add.reduce!(d, { axis: 1 });
    assert.ok(r instanceof DeviceArray);
    assert.deepEqual((r.copyToHost() as NDArray).shape, [2, 4]);
    assert.deepEqual(Array.from((d.copyToHost() as NDArray<Int32Array>).data), Array.from(m.data), "the device input is unchanged");
    assert.throws(() => add.reduce!(m, { axis: 3 }), RangeError);
    assert.throws(() => add.reduce!(new Float64Array(0)), (e: unknown) => e instanceof LaunchError && /empty/.test(e.message));
    const unary = track(cuda.vectorize((a: number) => a * 2, ["float64(float64)"]));
    assert.equal(unary.reduce, undefined, "only two-input ufuncs reduce");
  });
});

describe("cuda.guvectorize", () => {
  const rowSum = track(cuda.guvectorize((x: Float32Array, out: Float32Array) => {
    let s = 0.0;
    for (let i = 0; i < x.length; i++) s += x[i]!;
    out[0] = s;
  }, ["void(float32[:], float32[:])"], "(n)->()"));

  const matmul = track(cuda.guvectorize((a: KernelArray2<number>, b: KernelArray2<number>, c: KernelArray2<number>) => {
    for (let i = 0; i < a.shape[0]!; i++) {
      for (let j = 0; j < b.shape[1]!; j++) {
        let s = 0.0;
        for (let k = 0; k < a.shape[1]!; k++) s += a[i]![k]! * b[k]![j]!;
        c[i]![j] = s;
      }
    }
  }, "void(float64[:,:], float64[:,:], float64[:,:])", "(m,n),(n,p)->(m,p)"));

  /** host reference: per-row float64 sum rounded to float32, as the kernel's float64 accumulator does */
  const hostRowSums = (m: NDArray) =>
    Array.from({ length: m.shape[0]! }, (_, i) => Math.fround(Array.from({ length: m.shape[1]! }, (_, j) => m.get(i, j) as number).reduce((s, x) => s + x, 0)));

  const hostMatmul = (a: NDArray<Float64Array>, b: NDArray<Float64Array>, batch: number) => {
    const [m, n] = a.shape.slice(-2) as [number, number];
    const p = b.shape[b.shape.length - 1]!;
    const out: number[] = [];
    for (let t = 0; t < batch; t++) {
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < p; j++) {
          let s = 0;
          for (let k = 0; k < n; k++) s += (a.ndim === 3 ? a.get(t, i, k) : a.get(i, k)) * (b.ndim === 3 ? b.get(t, k, j) : b.get(k, j));
          out.push(s);
        }
      }
    }
    return out;
  };

  test("an unknown call option is a TypeError naming it", () => {
    assert.throws(() => rowSum(ndarray(new Float32Array(4), [2, 2]), { output: new Float32Array(2) } as never), (e: unknown) => e instanceof TypeError && /gufunc '.*': unknown option 'output'; the options are out, stream/.test(e.message));
  });

  test("per-row sum (n)->(): allocated (m,), given (m,) and (m,1)", () => {
    const m = ndarray(new Float32Array(ints(7 * 5, -20, 20, 4).map((x) => x / 8)), [7, 5]);
    const ref = hostRowSums(m);
    const r = rowSum(m);
    assert.ok(r instanceof Float32Array);
    assert.deepEqual(Array.from(r), ref);
    const flat = new Float32Array(7);
    assert.equal(rowSum(m, flat), flat);
    assert.deepEqual(Array.from(flat), ref);
    const column = ndarray(new Float32Array(7), [7, 1]);
    rowSum(m, column);
    assert.deepEqual(Array.from(column.data), ref);
    const one = rowSum(new Float32Array([1, 2, 3])) as NDArray;
    assert.deepEqual(one.shape, []);
    assert.equal(one.get(), 6);
  });

  test("matmul (m,n),(n,p)->(m,p) with a loop dimension and a broadcast operand", () => {
    const a = ndarray(new Float64Array(ints(3 * 2 * 4, -9, 9, 6)), [3, 2, 4]);
    const b = ndarray(new Float64Array(ints(4 * 5, -9, 9, 7)), [4, 5]);
    const c = matmul(a, b) as NDArray<Float64Array>;
    assert.deepEqual(c.shape, [3, 2, 5]);
    assert.deepEqual(Array.from(c.data), hostMatmul(a, b, 3));

    const b3 = ndarray(new Float64Array(ints(3 * 4 * 5, -9, 9, 8)), [3, 4, 5]);
    const out = new NDArray(new Float64Array(30), [3, 2, 5]);
    assert.equal(matmul(a, b3, out), out);
    assert.deepEqual(Array.from(out.data), hostMatmul(a, b3, 3));
  });

  test("device arrays in give device arrays out", () => {
    const a = ndarray(new Float64Array(ints(2 * 3, -5, 5, 9)), [2, 3]);
    const b = ndarray(new Float64Array(ints(3 * 2, -5, 5, 10)), [3, 2]);
    const c = matmul(cuda.toDevice(a), cuda.toDevice(b));
    assert.ok(c instanceof DeviceArray);
    assert.deepEqual(c.shape, [2, 2]);
    assert.deepEqual(Array.from((c.copyToHost() as NDArray<Float64Array>).data), hostMatmul(a, b, 1));
  });

  test("old-style () core input as a 1-element array: read by every loop index, adds no loop dimension (as Numba)", () => {
    const scale = track(cuda.guvectorize((x: Float32Array, k: Float32Array, y: Float32Array) => {
      for (let i = 0; i < x.length; i++) y[i] = x[i]! * k[0]!;
    }, "void(float32[:], float32[:], float32[:])", "(n),()->(n)"));
    const x = new Float32Array([1, 2, 3]);
    const y = scale(x, new Float32Array([2]));
    assert.ok(y instanceof Float32Array, "a 1-d result, as for a plain scalar");
    assert.deepEqual(Array.from(y), [2, 4, 6]);
    const out = new Float32Array(3);
    assert.equal(scale(x, new Float32Array([3]), out), out);
    assert.deepEqual(Array.from(out), [3, 6, 9]);
    const rows = scale(ndarray(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]), ndarray(new Float32Array([10]), [1, 1])) as NDArray<Float32Array>;
    assert.deepEqual(rows.shape, [2, 3]);
    assert.deepEqual(Array.from(rows.data), [10, 20, 30, 40, 50, 60]);
  });

  test("{ out } gives the output array, or the list of them", () => {
    const scale = track(cuda.guvectorize((x: Float32Array, k: number, y: Float32Array) => {
      for (let i = 0; i < x.length; i++) y[i] = x[i]! * k;
    }, "void(float32[:], float32, float32[:])", "(n),()->(n)"));
    const x = ndarray(new Float32Array([1, 2, 3, 4]), [2, 2]);
    const out = ndarray(new Float32Array(4), [2, 2]);
    assert.equal(scale(x, 2, { out }), out);
    assert.deepEqual(Array.from(out.data), [2, 4, 6, 8]);
    const sumDiff = track(cuda.guvectorize((a: Int32Array, b: Int32Array, s: Int32Array, d: Int32Array) => {
      s[0] = a[0]! + b[0]!;
      d[0] = a[0]! - b[0]!;
    }, "void(int32[:], int32[:], int32[:], int32[:])", "(),()->(),()"));
    const s = new Int32Array(3), d = new Int32Array(3);
    const both = sumDiff(new Int32Array([5, 6, 7]), new Int32Array([1, 2, 3]), { out: [s, d] });
    assert.deepEqual(both, [s, d]);
    assert.deepEqual([Array.from(s), Array.from(d)], [[6, 8, 10], [4, 4, 4]]);
    assert.throws(() => sumDiff(new Int32Array(3), new Int32Array(3), { out: [s] }), (e: unknown) => e instanceof LaunchError && /2 output\(s\); \{ out \} gives 1/.test(e.message));
    assert.throws(() => scale(x, 2, out, { out }), (e: unknown) => e instanceof LaunchError && /both as arguments and as \{ out \}/.test(e.message));
  });

  test("scalar core inputs and several outputs", () => {
    const scale = track(cuda.guvectorize((x: Float32Array, k: number, y: Float32Array) => {
      for (let i = 0; i < x.length; i++) y[i] = x[i]! * k;
    }, "void(float32[:], float32, float32[:])", "(n),()->(n)"));
    const x = ndarray(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
    const y = scale(x, 0.5) as NDArray<Float32Array>;
    assert.deepEqual(y.shape, [2, 3]);
    assert.deepEqual(Array.from(y.data), [0.5, 1, 1.5, 2, 2.5, 3]);
    const perRow = scale(x, new Float32Array([2, 10])) as NDArray<Float32Array>; // k's loop dimension pairs with x's rows
    assert.deepEqual(Array.from(perRow.data), [2, 4, 6, 40, 50, 60]);

    const minmax = track(cuda.guvectorize((x: Int32Array, lo: Int32Array, hi: Int32Array) => {
      lo[0] = x[0]!;
      hi[0] = x[0]!;
      for (let i = 1; i < x.length; i++) {
        lo[0] = Math.min(lo[0]!, x[i]!);
        hi[0] = Math.max(hi[0]!, x[i]!);
      }
    }, "void(int32[:], int32[:], int32[:])", "(n)->(),()"));
    const v = ints(4 * 6, -1000, 1000, 12);
    const [lo, hi] = minmax(ndarray(new Int32Array(v), [4, 6])) as Int32Array[];
    for (let i = 0; i < 4; i++) {
      const row = v.slice(i * 6, i * 6 + 6);
      assert.equal(lo![i], Math.min(...row));
      assert.equal(hi![i], Math.max(...row));
    }
  });

  test("fixed-size core dimensions", () => {
    const norm3 = track(cuda.guvectorize((v: Float64Array, out: Float64Array) => {
      out[0] = v[0]! * v[0]! + v[1]! * v[1]! + v[2]! * v[2]!;
    }, "void(float64[:], float64[:])", "(3)->()"));
    const r = norm3(ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]));
    assert.deepEqual(Array.from(r as Float64Array), [14, 77]);
    assert.throws(() => norm3(ndarray(new Float64Array(8), [2, 4])), /input 1 needs core dimension 1 to be 3; got 4/);
  });

  test("errors: bad layouts and signatures, mismatched core and loop dimensions", () => {
    const f = (x: Float32Array, y: Float32Array) => { y[0] = x[0]!; };
    for (const bad of ["(n)", "(n)->", "(n->()", "n->()", "(n)->(q)", "(n),->()", "(n-1)->()"]) {
      assert.throws(() => cuda.guvectorize(f, "void(float32[:], float32[:])", bad), (e: unknown) => e instanceof TypeError && /bad gufunc layout/.test(e.message), bad);
    }
    assert.throws(() => cuda.guvectorize(f, "void(float32[:,:], float32[:])", "(n)->()"), /must be a 1-d array/);
    assert.throws(() => cuda.guvectorize(f, "float32(float32[:], float32[:])", "(n)->()"), /returns void/);
    assert.throws(() => cuda.guvectorize(f, "void(float32[:], float32[:])", "(n),(n)->()"), /takes 2 parameter/);
    assert.throws(() => cuda.guvectorize(f, [], "(n)->()"), /at least one signature/);

    const a = ndarray(new Float64Array(6), [2, 3]);
    assert.throws(() => matmul(a, ndarray(new Float64Array(8), [4, 2])), (e: unknown) => e instanceof LaunchError && /core dimension 'n' is 3 in input 1 but 4 in input 2/.test(e.message));
    assert.throws(() => matmul(new Float64Array(3), a), /fewer dimensions than its core layout/);
    const batchA = ndarray(new Float64Array(2 * 2 * 3), [2, 2, 3]);
    const batchB = ndarray(new Float64Array(3 * 3 * 2), [3, 3, 2]);
    assert.throws(() => matmul(batchA, batchB), /cannot be broadcast/);
    assert.throws(() => matmul(a, ndarray(new Float64Array(6), [3, 2]), new Float64Array(4)), /output 1 has shape \(4,\); the layout .* needs \(2,2\)/);
    assert.throws(() => rowSum(new Int32Array(3)), /no signature/);
  });
});

// runs last: every kernel generated above must assemble
test("the generated ufunc kernels assemble with ptxas", { skip: missingTools("ptxas") }, () => {
  const generated = ufuncs.flatMap((f) => f.kernels);
  assert.ok(generated.length >= 8);
  for (const k of generated) for (const sig of k.signatures) for (const t of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(sig, t), t.arch);
});
