// Kernels several test files run: Numba's documented shared-memory tiled matmul (with guards, so
// sizes need not be multiples of the tile), as a plain function for cuda.jit or a KernelCase.
import { cuda, float32, type KernelArray2 } from "../../src/index.js";

/** the tile width (threads per block in x and in y); pass it in `env` */
export const TPB = 16;

export const tiledMatmul = (A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  const sA = cuda.shared.array([TPB, TPB], float32);
  const sB = cuda.shared.array([TPB, TPB], float32);
  const [x, y] = cuda.grid(2);
  const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
  let tmp = float32(0);
  for (let i = 0; i < cuda.gridDim.x; i++) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    if (y < A.shape[0] && tx + i * TPB < A.shape[1]) sA[ty][tx] = A[y][tx + i * TPB];
    if (x < B.shape[1] && ty + i * TPB < B.shape[0]) sB[ty][tx] = B[ty + i * TPB][x];
    cuda.syncthreads();
    for (let j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
    cuda.syncthreads();
  }
  if (y < C.shape[0] && x < C.shape[1]) C[y][x] = tmp;
};
