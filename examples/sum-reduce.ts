// Numba's reduction (numba-cuda docs, "GPU Reduction"):
//
//   @cuda.reduce
//   def sum_reduce(a, b):
//       return a + b
//
//   A = (numpy.arange(1234, dtype=numpy.float64)) + 1
//   expect = A.sum()      # numpy sum on the host
//   got = sum_reduce(A)   # cuda reduction on the device
//
// cuda.reduce turns a binary function into a tree-reduction kernel, one
// compiled specialisation per dtype; the same reducer takes every array type.

import { cuda } from "../src/index.js";
import { check, checkWithin, randomFloats, sizeArg } from "./lib/check.js";

const sumReduce = cuda.reduce((a, b) => a + b);

// Numba's docs example: 1 + 2 + … + 1234, exact in float64
const A = Float64Array.from({ length: 1234 }, (_, i) => i + 1);
const got = sumReduce(A);
check("sum_reduce(arange(1234) + 1) in float64 = 1234·1235/2", got === (1234 * 1235) / 2, `got ${got}`);

const n = sizeArg(500_003);

// float32 holding small integers: every partial sum stays below 2^24, so any
// summation order is exact and the result must equal the host's exactly
const small = Float32Array.from({ length: n }, (_, i) => (i * 7) % 16);
let smallSum = 0;
for (const v of small) smallSum += v;
check(`sum_reduce of ${n} float32 integers in [0, 15] is exact`, sumReduce(small) === smallSum, `got ${sumReduce(small)}, want ${smallSum}`);

// random float32 values: any summation order is within (n − 1)·u of the exact sum of |x|
const x = randomFloats(n, 8, 0, 1);
let exact = 0;
for (const v of x) exact += v;
checkWithin(`sum_reduce of ${n} float32 values in [0, 1) against a float64 host sum`, [Number(sumReduce(x))], [exact], [(n - 1) * 2 ** -24 * exact]);

// integers: exact, with int32 wrap-around like the device's adds
const ints = Int32Array.from({ length: n }, (_, i) => (i * 2654435761) | 0);
let wrapped = 0;
for (const v of ints) wrapped = (wrapped + v) | 0;
check(`sum_reduce of ${n} int32 values wraps like int32 adds`, sumReduce(ints) === wrapped, `got ${sumReduce(ints)}, want ${wrapped}`);

// a device array in, and `init` folded into the result (Numba's init=)
const dA = cuda.toDevice(A);
check("sum_reduce(deviceArray, { init: 100 }) adds the initial value", sumReduce(dA, { init: 100 }) === (1234 * 1235) / 2 + 100);
check("sum_reduce(…, { size: 10 }) reduces the first 10 elements only", sumReduce(dA, { size: 10 }) === 55);
dA.free();
