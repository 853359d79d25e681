// A device function in a module of its own, called from a kernel in kernels.ts. A kernel finds a
// device function by its function's name: a named function expression.
import { cuda, float32 } from "numbats";

/** The logistic function 1 / (1 + e^-x), in float32. */
export const squash = cuda.jit(function squash(x: number) {
  return float32(1) / (float32(1) + Math.exp(-x));
}, { device: true });
