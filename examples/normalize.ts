// Vector normalisation with shared memory, the Numba way: a reduction in two
// kernels (numba-cuda docs, "Examples: Shared memory reduction", and Numba's
// sum-of-squares norm). Python for the first kernel:
//
//   @cuda.jit
//   def partial_sums_of_squares(x, partial):
//       s = cuda.shared.array(TPB, float32)
//       t = cuda.threadIdx.x
//       acc = float32(0.)
//       for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
//           acc += x[i] * x[i]
//       s[t] = acc
//       cuda.syncthreads()
//       stride = TPB // 2
//       while stride > 0:
//           if t < stride:
//               s[t] += s[t + stride]
//           cuda.syncthreads()
//           stride //= 2
//       if t == 0:
//           partial[cuda.blockIdx.x] = s[0]
//
// then `scale` adds the per-block partials (thread 0 of each block, into
// shared memory), and every thread divides its elements by the norm.

import { cuda, float32 } from "../src/index.js";
import { check, checkWithin, randomFloats, sizeArg } from "./lib/check.js";

const TPB = 256; // threads per block: a power of two, for the tree
const BLOCKS = 32; // each thread first folds a grid-strided slice

const partialSumsOfSquares = cuda.jit((x: Float32Array, partial: Float32Array) => {
  const s = cuda.shared.array(TPB, float32);
  const t = cuda.threadIdx.x;
  let acc = float32(0.0);
  for (let i = cuda.grid(1); i < x.length; i += cuda.gridsize(1)) acc += x[i] * x[i];
  s[t] = acc;
  cuda.syncthreads();
  for (let stride = TPB >> 1; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    cuda.syncthreads();
  }
  if (t === 0) partial[cuda.blockIdx.x] = s[0];
}, { env: { TPB } });

const scale = cuda.jit((x: Float32Array, partial: Float32Array) => {
  const norm = cuda.shared.array(1, float32);
  if (cuda.threadIdx.x === 0) {
    let total = float32(0.0);
    for (let b = 0; b < partial.length; b++) total += partial[b];
    norm[0] = Math.sqrt(total);
  }
  cuda.syncthreads();
  for (let i = cuda.grid(1); i < x.length; i += cuda.gridsize(1)) x[i] = x[i] / norm[0];
});

const n = sizeArg(100_000);
const host = randomFloats(n, 7, -3, 3);
const dX = cuda.toDevice(host);
const dPartial = cuda.deviceArray(BLOCKS, "float32");

partialSumsOfSquares.configure(BLOCKS, TPB)(dX, dPartial);
const partial = dPartial.copyToHost(new Float32Array(BLOCKS));

// host: the same split of the elements over blocks, summed in float64.
// Error bounds: every square is rounded once (u), then goes through at most
// `perThread` sequential adds and log2(TPB) tree adds, each within u relative
// to the (positive) partial sum it lands in.
const u = 2 ** -24;
const gridSize = BLOCKS * TPB;
const perThread = Math.ceil(n / gridSize);
const partialRel = (1 + perThread + Math.log2(TPB)) * u;
const wantPartial = new Float64Array(BLOCKS);
for (let i = 0; i < n; i++) wantPartial[Math.floor((i % gridSize) / TPB)] += host[i]! * host[i]!;
checkWithin(`partial_sums_of_squares[${BLOCKS}, ${TPB}]: one sum of squares per block`, partial, wantPartial, wantPartial.map((v) => v * partialRel));

scale.configure(BLOCKS, TPB)(dX, dPartial);
const y = dX.copyToHost(new Float32Array(n));

let norm2 = 0;
for (const v of host) norm2 += v * v;
const norm = Math.sqrt(norm2);
// the total adds BLOCKS partials sequentially; the norm carries half the
// total's relative error, plus one rounding each for the sqrt and the division
const relBound = (partialRel + BLOCKS * u) / 2 + 2 * u;
checkWithin(`scale[${BLOCKS}, ${TPB}]: y = x / ‖x‖ for ${n} elements`, y, host.map((v) => v / norm), host.map((v) => Math.abs(v / norm) * relBound));

let length2 = 0;
for (const v of y) length2 += v * v;
check("the result has unit length", Math.abs(Math.sqrt(length2) - 1) <= relBound, `‖y‖ − 1 = ${(Math.sqrt(length2) - 1).toExponential(2)}`);
check("the input's norm is not 1, so the check above means something", Math.abs(norm - 1) > 1, `‖x‖ = ${norm.toFixed(3)}`);

dX.free();
dPartial.free();
