// Host-side matrices for the matmul examples: deterministic inputs, a float64
// reference product, and the float32 error bound each element must meet.

import { ndarray, type NDArray } from "../../src/index.js";
import { randomFloats } from "./check.js";

export const randomMatrix = (rows: number, cols: number, seed: number): NDArray<Float32Array> =>
  ndarray(randomFloats(rows * cols, seed), [rows, cols]);

/**
 * C = A·B in float64 (exact products of float32 inputs, one rounding per add),
 * and per element the bound n·2⁻²⁴·Σ|a||b| that any float32 accumulation
 * order meets (Higham, "Accuracy and Stability", §3.1).
 */
export function referenceProduct(A: NDArray<Float32Array>, B: NDArray<Float32Array>): { want: Float64Array; bound: Float64Array } {
  const [n, k] = A.shape as [number, number];
  const m = B.shape[1]!;
  const want = new Float64Array(n * m), bound = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0, abs = 0;
      for (let t = 0; t < k; t++) {
        const p = A.data[i * k + t]! * B.data[t * m + j]!;
        s += p;
        abs += Math.abs(p);
      }
      want[i * m + j] = s;
      bound[i * m + j] = (k + 1) * 2 ** -24 * abs;
    }
  }
  return { want, bound };
}
