// A reduction and a ufunc: numbats generates the kernels around these functions.
import { cuda } from "numbats";

/** Σ over an array */
export const total = cuda.reduce((a: number, b: number) => a + b);

/** the largest element */
export const largest = cuda.reduce((a: number, b: number) => Math.max(a, b));

/** a·x + y, element-wise, in float32 */
export const axpy = cuda.vectorize((a: number, x: number, y: number) => a * x + y, ["float32(float32, float32, float32)"]);
