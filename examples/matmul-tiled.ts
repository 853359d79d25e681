// Numba's fast_matmul (numba-cuda docs, "Examples: Matrix multiplication",
// the shared-memory version):
//
//   TPB = 16
//   @cuda.jit
//   def fast_matmul(A, B, C):
//       sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
//       sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
//       x, y = cuda.grid(2)
//       tx = cuda.threadIdx.x; ty = cuda.threadIdx.y
//       bpg = cuda.gridDim.x
//       tmp = float32(0.)
//       for i in range(bpg):
//           sA[ty, tx] = 0; sB[ty, tx] = 0
//           if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
//               sA[ty, tx] = A[y, tx + i * TPB]
//           if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
//               sB[ty, tx] = B[ty + i * TPB, x]
//           cuda.syncthreads()
//           for j in range(TPB):
//               tmp += sA[ty, j] * sB[j, tx]
//           cuda.syncthreads()
//       if y < C.shape[0] and x < C.shape[1]:
//           C[y, x] = tmp
//
// Each block stages 16×16 tiles of A and B in shared memory, so every global
// element is read once per block instead of once per thread. As in Numba, the
// matrices are square and the grid is square (bpg = gridDim.x tiles).

import { cuda, float32, ndarray, type KernelArray2 } from "../src/index.js";
import { check, checkEqual, checkWithin, sizeArg } from "./lib/check.js";
import { randomMatrix, referenceProduct } from "./lib/matrices.js";

const TPB = 16;

const fastMatmul = cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  // TPB comes from `env`: a compile-time constant, so the tiles have a static shape
  const sA = cuda.shared.array([TPB, TPB], float32);
  const sB = cuda.shared.array([TPB, TPB], float32);
  const [x, y] = cuda.grid(2);
  const tx = cuda.threadIdx.x;
  const ty = cuda.threadIdx.y;
  const bpg = cuda.gridDim.x;
  let tmp = float32(0.0);
  for (let i = 0; i < bpg; i++) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    if (y < A.shape[0] && tx + i * TPB < A.shape[1]) sA[ty][tx] = A[y][tx + i * TPB];
    if (x < B.shape[1] && ty + i * TPB < B.shape[0]) sB[ty][tx] = B[ty + i * TPB][x];
    cuda.syncthreads(); // the tiles are complete before anyone reads them
    for (let j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
    cuda.syncthreads(); // everyone is done with the tiles before they are overwritten
  }
  if (y < C.shape[0] && x < C.shape[1]) C[y][x] = tmp;
}, { env: { TPB } });

// a size that is not a multiple of the tile, so the zero padding matters
const n = sizeArg(100);
const A = randomMatrix(n, n, 5);
const B = randomMatrix(n, n, 6);
const C = ndarray(new Float32Array(n * n), [n, n]);

const blocks = Math.ceil(n / TPB);
fastMatmul.configure([blocks, blocks], [TPB, TPB])(A, B, C);

const { want, bound } = referenceProduct(A, B);
checkWithin(`fast_matmul[(${blocks}, ${blocks}), (${TPB}, ${TPB})]: C = A · B (${n}×${n}) against a float64 host product`, C.data, want, bound);

// the kernel computes the same thing as the naive one with a float32
// accumulator: multiply-adds in the same k order (plus exact zero padding), so
// the two agree bit for bit
const naive32 = cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  const [x, y] = cuda.grid(2);
  if (y < C.shape[0] && x < C.shape[1]) {
    let tmp = float32(0.0);
    for (let k = 0; k < A.shape[1]; k++) tmp += A[y][k] * B[k][x];
    C[y][x] = tmp;
  }
});
const C2 = ndarray(new Float32Array(n * n), [n, n]);
naive32.configure([blocks, blocks], [TPB, TPB])(A, B, C2);
checkEqual("fast_matmul equals a naive float32-accumulator kernel bit for bit", C.data, C2.data);

// the code the target runs: PTX on a GPU and the simulator (which prints the PTX it would load), WGSL on WebGPU
const code = fastMatmul.inspectAsm();
const wgsl = code.includes("@compute");
const tiles = (code.match(wgsl ? /^\s*var<workgroup>.*$/gm : /^\s*\.shared\b.*$/gm) ?? []).map((d) => d.trim());
const tileDeclared = (d: string) => d.includes(wgsl ? `array<f32, ${TPB * TPB}>` : `[${TPB * TPB * 4}]`);
check(`the ${wgsl ? "WGSL" : "PTX"} declares the two 16×16 float32 tiles in shared memory`, tiles.length === 2 && tiles.every(tileDeclared), tiles.join(" "));
