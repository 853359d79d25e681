import assert from "node:assert/strict";
import { test } from "node:test";
import { float32 } from "../../src/dtypes.js";
import {
  DeviceArray, deferCleanup, deviceArray, deviceArrayLike, hostAllocationOf, mappedArray, pinnedArray, sliceIndices, toDevice,
} from "../../src/runtime/devicearray.js";
import { NDArray, ndarray } from "../../src/ndarray.js";
import { getBackend } from "../../src/runtime/select.js";

// the current target's back end: the simulator under `npm test`, the (emulated) GPU under test:gpu and test:emu
process.env.NUMBATS_TARGET ??= "sim";
const backend = getBackend();
const iota = (n: number) => Float64Array.from({ length: n }, (_, i) => i);

/** host reference: the element at idx of a C-ordered [rows, cols] matrix of iota values */
const at2 = (cols: number, r: number, c: number) => r * cols + c;

test("attributes follow Numba (strides in bytes)", () => {
  const d = deviceArray([3, 4], "float32", backend);
  assert.deepEqual(d.shape, [3, 4]);
  assert.deepEqual(d.strides, [16, 4]);
  assert.deepEqual(d.elementStrides, [4, 1]);
  assert.equal(d.size, 12);
  assert.equal(d.ndim, 2);
  assert.equal(d.itemsize, 4);
  assert.equal(d.nbytes, 48);
  assert.equal(d.dtype, "float32");
  assert.equal(deviceArray(5, float32, backend).dtype, "float32");
  assert.equal(deviceArray(5, "f8", backend).dtype, "float64");
  // @ts-expect-error an unknown dtype name, rejected at run time too
  assert.throws(() => deviceArray([2], "float128", backend), /unknown dtype/);
});

test("round trip: 1-d gives a TypedArray, N-d an NDArray", () => {
  const host = new Int32Array([5, -1, 7, 9]);
  const d = toDevice(host, undefined, backend);
  const back = d.copyToHost();
  assert.ok(back instanceof Int32Array);
  assert.deepEqual([...back], [5, -1, 7, 9]);
  const m = toDevice(ndarray(iota(6), [2, 3]), undefined, backend);
  const mb = m.copyToHost();
  assert.ok(mb instanceof NDArray);
  assert.deepEqual(mb.toArray(), [[0, 1, 2], [3, 4, 5]]);
  // a transposed host view is copied element-wise in its logical order
  const t = toDevice(new NDArray(iota(6), [3, 2], [1, 3]), undefined, backend);
  assert.deepEqual((t.copyToHost() as NDArray).toArray(), [[0, 3], [1, 4], [2, 5]]);
});

test("reshape and ravel are views sharing memory; -1 is inferred", () => {
  const d = toDevice(iota(12), undefined, backend);
  const m = d.reshape(3, -1);
  assert.deepEqual(m.shape, [3, 4]);
  assert.deepEqual(d.reshape([2, 6]).shape, [2, 6]);
  m.slice(1).copyToDevice(new Float64Array([-1, -2, -3, -4]));
  assert.deepEqual([...(d.copyToHost() as Float64Array)].slice(4, 8), [-1, -2, -3, -4]);
  assert.deepEqual(m.ravel().shape, [12]);
  assert.throws(() => d.reshape(5, -1), /cannot reshape/);
  assert.throws(() => m.slice(null, [0, 4, 2]).reshape(6), /non-contiguous/);
});

test("T is the transposed view (no copy); isCContiguous and isFContiguous as Numba's", () => {
  const m = toDevice(iota(12), undefined, backend).reshape(3, 4);
  const t = m.T;
  assert.deepEqual(t.shape, [4, 3]);
  assert.deepEqual(t.strides, [8, 32]);
  assert.deepEqual([m.isCContiguous(), m.isFContiguous(), t.isCContiguous(), t.isFContiguous()], [true, false, false, true]);
  const host = t.copyToHost() as NDArray<Float64Array>;
  for (let r = 0; r < 4; r++) for (let c = 0; c < 3; c++) assert.equal(host.get(r, c), at2(4, c, r));
  t.slice(0).copyToDevice(new Float64Array([-1, -2, -3])); // column 0 of m
  const back = m.copyToHost() as NDArray<Float64Array>;
  assert.deepEqual([back.get(0, 0), back.get(1, 0), back.get(2, 0)], [-1, -2, -3]);
  assert.equal(m.T.T.isCContiguous(), true);
  const v = toDevice(iota(5), undefined, backend);
  assert.deepEqual([v.T.shape, v.isCContiguous(), v.isFContiguous()], [[5], true, true]);
});

test("toDevice keeps the layout of a host view whose elements fill one block (F order, a transpose, a reversed axis); a view with gaps arrives C-ordered", () => {
  const f = ndarray(iota(10), [2, 5], [1, 2]);
  const d = toDevice(f, undefined, backend);
  assert.deepEqual([d.isCContiguous(), d.isFContiguous()], [false, true]);
  assert.deepEqual(d.strides, [8, 16]);
  assert.deepEqual((d.copyToHost() as NDArray).toArray(), f.toArray());
  const t = new NDArray(iota(24), [4, 3, 2], [1, 8, 4]); // axes in the order 1, 2, 0 of a C array
  const dt = toDevice(t, undefined, backend);
  assert.deepEqual(dt.elementStrides, [1, 8, 4]);
  assert.deepEqual((dt.copyToHost() as NDArray).toArray(), t.toArray());
  const rev = new NDArray(iota(8), [2, 3], [-3, -1], 7); // both axes reversed, from element 7
  const dr = toDevice(rev, undefined, backend);
  assert.deepEqual(dr.elementStrides, [-3, -1]);
  assert.deepEqual((dr.copyToHost() as NDArray).toArray(), [[7, 6, 5], [4, 3, 2]]);
  // every other column: the elements do not fill a block, so the copy is compact and C-ordered
  const gaps = new NDArray(iota(12), [3, 2], [4, 2], 1);
  const dg = toDevice(gaps, undefined, backend);
  assert.deepEqual([dg.elementStrides, dg.isCContiguous()], [[2, 1], true]);
  assert.deepEqual((dg.copyToHost() as NDArray).toArray(), [[1, 3], [5, 7], [9, 11]]);
  // NumPy's definitions: 0-d and 1-d arrays are both; an extent-1 axis's stride does not count
  const scalar = deviceArray([], "float64", backend);
  assert.deepEqual([scalar.isCContiguous(), scalar.isFContiguous()], [true, true]);
  const row = toDevice(ndarray(iota(5), [1, 5], [9, 1]), undefined, backend);
  assert.deepEqual([row.isCContiguous(), row.isFContiguous()], [true, true]);
  const fcol = toDevice(ndarray(iota(10), [5, 2], [1, 5]), undefined, backend).slice(null, [0, 1]);
  assert.deepEqual([fcol.shape, fcol.isCContiguous(), fcol.isFContiguous()], [[5, 1], true, true]);
  // an ndarray-style literal is not checked when made: one reaching past its data is a RangeError, not a short copy
  assert.throws(() => toDevice({ data: iota(9), shape: [2, 5], stride: [1, 2], offset: 0 }, undefined, backend), /reaches outside data of length 9/);
  for (const a of [d, dt, dr, dg, scalar, row]) a.free();
});

test("slices follow Python semantics and share memory", () => {
  const rows = 4, cols = 5;
  const d = toDevice(ndarray(iota(rows * cols), [rows, cols]), undefined, backend);
  const s = d.slice([1, 4, 2], [-1, 0, -2]); // rows 1, 3; cols 4, 2
  assert.deepEqual(s.shape, [2, 2]);
  assert.deepEqual(s.strides, [2 * cols * 8, -2 * 8]);
  assert.equal(s.isCContiguous(), false);
  const expected = [1, 3].map((r) => [4, 2].map((c) => at2(cols, r, c)));
  assert.deepEqual((s.copyToHost() as NDArray).toArray(), expected);
  // an integer drops the dimension: column 2
  assert.deepEqual([...(d.slice(null, 2).copyToHost() as Float64Array)], [0, 1, 2, 3].map((r) => at2(cols, r, 2)));
  // writing through a strided view changes only its elements
  s.copyToDevice(ndarray(new Float64Array([-1, -2, -3, -4]), [2, 2]));
  const all = (d.copyToHost() as NDArray).toArray() as number[][];
  const want = Array.from({ length: rows }, (_, r) => Array.from({ length: cols }, (_, c) => at2(cols, r, c)));
  want[1]![4] = -1; want[1]![2] = -2; want[3]![4] = -3; want[3]![2] = -4;
  assert.deepEqual(all, want);
  assert.throws(() => d.slice(4), /out of bounds/);
  assert.throws(() => d.slice([0, 2, 0]), /non-zero/);
});

test("sliceIndices matches Python's slice.indices", () => {
  // Python: slice(None, None, -1).indices(5) == (4, -1, -1); len 5
  assert.deepEqual(sliceIndices([null, null, -1], 5), { start: 4, step: -1, count: 5 });
  assert.deepEqual(sliceIndices([-3, undefined], 5), { start: 2, step: 1, count: 3 });
  assert.deepEqual(sliceIndices([10, 20], 5), { start: 5, step: 1, count: 0 });
  assert.deepEqual(sliceIndices([1, 8, 3], 10), { start: 1, step: 3, count: 3 });
});

test("copyToHost into a given target, including a strided one", () => {
  const d = toDevice(ndarray(iota(6), [2, 3]), undefined, backend);
  const flat = new Float64Array(6);
  assert.equal(d.copyToHost(flat), flat);
  assert.deepEqual([...flat], [0, 1, 2, 3, 4, 5]);
  const t = new NDArray(new Float64Array(6), [2, 3], [1, 2]); // column-major target
  d.copyToHost(t);
  assert.deepEqual([...t.data], [0, 3, 1, 4, 2, 5]);
  assert.throws(() => d.copyToHost(new Float64Array(5)), /does not fit/);
  // @ts-expect-error a target of another dtype, rejected at run time too
  assert.throws(() => d.copyToHost(new Float32Array(6)), /dtype mismatch/);
});

test("device-to-device copies, contiguous and strided", () => {
  const a = toDevice(ndarray(iota(6), [2, 3]), undefined, backend);
  const b = deviceArrayLike(a, backend);
  b.copyToDevice(a);
  assert.deepEqual((b.copyToHost() as NDArray).toArray(), [[0, 1, 2], [3, 4, 5]]);
  const col = deviceArray(2, "float64", backend);
  col.copyToDevice(a.slice(null, 1));
  assert.deepEqual([...(col.copyToHost() as Float64Array)], [1, 4]);
});

test("free is idempotent, use after free is a clear error, views retire separately", () => {
  const d = toDevice(new Float32Array([1, 2, 3, 4]), undefined, backend);
  const v = d.reshape(2, 2);
  v.free();
  assert.throws(() => v.copyToHost(), /used after its device memory was released/);
  assert.deepEqual([...(d.copyToHost() as Float32Array)], [1, 2, 3, 4]); // the root is untouched
  const w = d.slice([0, 2]);
  d.free();
  d.free();
  assert.equal(d.buffer.freed, true);
  assert.throws(() => d.copyToHost(), /used after/);
  assert.throws(() => w.toKernelArg("w"), /used after/);
  assert.throws(() => d.reshape(4), /used after/);
});

test("Symbol.dispose frees at scope exit", () => {
  let buf;
  {
    using d = deviceArray(8, "int32", backend);
    buf = d.buffer;
    assert.equal(buf.freed, false);
  }
  assert.equal(buf.freed, true);
});

test("deferCleanup postpones frees until fn returns (and until a promise settles)", async () => {
  const d = deviceArray(4, "int32", backend);
  deferCleanup(() => {
    d.free();
    assert.equal(d.buffer.freed, false);
    assert.equal(d.alive, false);
  });
  assert.equal(d.buffer.freed, true);
  const e = deviceArray(4, "int32", backend);
  const p = deferCleanup(async () => {
    e.free();
    await new Promise((r) => setTimeout(r, 1));
    assert.equal(e.buffer.freed, false);
  });
  await p;
  assert.equal(e.buffer.freed, true);
});

test("toKernelArg describes the view in elements", () => {
  const d = deviceArray([4, 6], "float32", backend);
  const v = d.slice([1, 3], [0, 6, 2]);
  assert.deepEqual(v.toKernelArg("a"), {
    kind: "array", buffer: d.buffer, byteOffset: 6 * 4, dtype: "float32", shape: [2, 3], strides: [6, 2], name: "a",
  });
});

test("pinned and mapped arrays are host arrays backed by a back-end allocation", () => {
  const p = pinnedArray(4, "float32", backend);
  assert.ok(p instanceof Float32Array && p.length === 4);
  assert.equal(hostAllocationOf(p)?.mapped, false);
  const m = mappedArray([2, 3], "int16", backend);
  assert.ok(m instanceof NDArray);
  assert.deepEqual(m.shape, [2, 3]);
  assert.equal(hostAllocationOf(m)?.mapped, true);
  assert.equal(hostAllocationOf(new Float32Array(2)), undefined);
  p.set([1, 2, 3, 4]);
  const d = toDevice(p, undefined, backend);
  assert.deepEqual([...(d.copyToHost() as Float32Array)], [1, 2, 3, 4]);
});

test("DeviceArray.over wraps foreign memory without owning it", () => {
  const buffer = backend.alloc(16);
  const d = DeviceArray.over(backend, buffer, 4, "int32");
  d.copyToDevice(new Int32Array([1, 2, 3, 4]));
  d.free();
  assert.equal(buffer.freed, false);
});
