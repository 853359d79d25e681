// Arrays made by the `ndarray` package carry a `dtype` field with the package's own names ("bigint64",
// "uint8_clamped", "generic"); numbats reads the dtype from their TypedArray instead, as its types say,
// in launches, reductions and ufuncs alike.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda } from "../../src/index.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

/** What `require("ndarray")(new BigInt64Array([...]))` returns, reduced to the fields numbats reads. */
const packageArray = (values: readonly bigint[]) =>
  ({ data: new BigInt64Array(values), shape: [values.length], stride: [1], offset: 0, dtype: "bigint64" });

const checkPtx = (ptx: string) => { if (hasPtxas()) ptxasCheck(ptx, "sm_80"); };

test("a launch types an ndarray package array by its data, not by the package's dtype name", () => {
  const a = packageArray([1n, 2n, 3n]);
  const bump = cuda.jit((x: BigInt64Array) => {
    const i = cuda.grid(1);
    if (i < x.length) x[i] += 10n;
  });
  bump.configure(1, 4)(a);
  assert.deepEqual([...a.data], [11n, 12n, 13n]);
  assert.deepEqual(bump.signatures, ["void(array(int64, 1d, C))"]);
  checkPtx(bump.inspectAsm());
});

test("cuda.reduce with a size limit and cuda.vectorize take such arrays too", () => {
  const a = packageArray([5n, 7n, 11n, 13n]);
  const sum = cuda.reduce((x: bigint, y: bigint) => x + y);
  assert.equal(sum(a, { size: 3 }), 23n);
  checkPtx(sum.kernels[0]!.inspectAsm());
  const twice = cuda.vectorize((x: bigint) => x * 2n);
  assert.deepEqual([...(twice(a) as BigInt64Array)], [10n, 14n, 22n, 26n]);
  checkPtx(twice.kernels[0]!.inspectAsm());
});
