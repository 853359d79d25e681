// Numba's naive matrix multiplication (numba-cuda docs, "Examples: Matrix
// multiplication"):
//
//   @cuda.jit
//   def matmul(A, B, C):
//       """Perform square matrix multiplication of C = A * B."""
//       i, j = cuda.grid(2)
//       if i < C.shape[0] and j < C.shape[1]:
//           tmp = 0.
//           for k in range(A.shape[1]):
//               tmp += A[i, k] * B[k, j]
//           C[i, j] = tmp
//
// Each thread computes one element of C, reading a row of A and a column of B
// from global memory. 2-d arrays are `ndarray`s on the host and are indexed
// as C[i][j] in the kernel.

import { cuda, ndarray, type KernelArray2 } from "../src/index.js";
import { check, checkWithin, sizeArg } from "./lib/check.js";
import { randomMatrix, referenceProduct } from "./lib/matrices.js";

const matmul = cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  const [i, j] = cuda.grid(2);
  if (i < C.shape[0] && j < C.shape[1]) {
    let tmp = 0.0; // a float literal on its own is float64, as Python's 0.
    for (let k = 0; k < A.shape[1]; k++) tmp += A[i][k] * B[k][j];
    C[i][j] = tmp;
  }
});

// non-square and not multiples of the block, so the bounds check matters
const n = sizeArg(100), k = n - 20, m = n + 20;
const A = randomMatrix(n, k, 3);
const B = randomMatrix(k, m, 4);
const C = ndarray(new Float32Array(n * m), [n, m]);

const threadsPerBlock: [number, number] = [16, 16];
const blocksPerGrid: [number, number] = [Math.ceil(n / 16), Math.ceil(m / 16)];
matmul.configure(blocksPerGrid, threadsPerBlock)(A, B, C);

const { want, bound } = referenceProduct(A, B);
checkWithin(`matmul[${blocksPerGrid}, ${threadsPerBlock}]: C (${n}×${m}) = A (${n}×${k}) · B (${k}×${m}) against a float64 host product`, C.data, want, bound);
check("the accumulator is float64, as Numba's `tmp = 0.`", /let tmp: float64 =/.test(matmul.inspectTypes()));
