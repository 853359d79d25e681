import assert from "node:assert/strict";
import { test } from "node:test";
import { NDArray, asNDArray, cStrides, forEachStrided, isNDArrayLike, ndarray } from "../../src/ndarray.js";

test("C strides and element addressing", () => {
  assert.deepEqual(cStrides([2, 3, 4]), [12, 4, 1]);
  const a = ndarray(Float32Array.from({ length: 24 }, (_, i) => i), [2, 3, 4]);
  assert.equal(a.ndim, 3);
  assert.equal(a.size, 24);
  assert.equal(a.dtype, "float32");
  assert.equal(a.get(1, 2, 3), 1 * 12 + 2 * 4 + 3);
  a.set(0, 1, 2, -5);
  assert.equal(a.data[6], -5);
  assert.throws(() => a.get(2, 0, 0), /out of bounds for axis 0/);
  assert.throws(() => a.get(0, 0), /expected 3 indices/);
});

test("custom strides and offset: a transposed, reversed view", () => {
  const data = Int32Array.from({ length: 6 }, (_, i) => i); // [[0,1,2],[3,4,5]]
  const t = new NDArray(data, [3, 2], [1, 3]); // transpose
  assert.deepEqual(t.toArray(), [[0, 3], [1, 4], [2, 5]]);
  assert.equal(t.isCContiguous(), false);
  const rev = new NDArray(data, [6], [-1], 5);
  assert.deepEqual(rev.toArray(), [5, 4, 3, 2, 1, 0]);
  assert.throws(() => new NDArray(data, [4], [2], 0), /outside data/);
});

test("bigint elements and dtype overrides", () => {
  const a = ndarray(new BigInt64Array([1n, -2n, 3n, 4n]), [2, 2]);
  assert.equal(a.get(1, 0), 3n);
  a.set(0, 1, 7n);
  assert.deepEqual(a.toArray(), [[1n, 7n], [3n, 4n]]);
  assert.equal(new NDArray(new Uint16Array(2), [2], undefined, 0, "float16").dtype, "float16");
  assert.throws(() => new NDArray(new Float32Array(2), [2], undefined, 0, "int32"), /not stored in/);
});

test("recognises ndarray-package objects", () => {
  const like = { data: new Float64Array([1, 2, 3, 4]), shape: [2, 2], stride: [1, 2], offset: 0 };
  assert.ok(isNDArrayLike(like));
  assert.ok(!isNDArrayLike({ data: [1, 2], shape: [2], stride: [1], offset: 0 }));
  assert.ok(!isNDArrayLike(new Float32Array(3)));
  assert.deepEqual(asNDArray(like).toArray(), [[1, 3], [2, 4]]);
});

test("forEachStrided walks a view in C order", () => {
  const seen: Array<[number, number]> = [];
  forEachStrided([2, 3], [1, 2], 10, (s, d) => seen.push([s, d]));
  assert.deepEqual(seen, [[10, 0], [12, 1], [14, 2], [11, 3], [13, 4], [15, 5]]);
});
