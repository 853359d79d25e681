// A device function in a module of its own, called from kernels.ts. Kernels find a device function
// by its function's name: a named function (an arrow function passed to cuda.jit has no name).
import { cuda } from "numbats";

/** The fractional part of x, in [0, 1). */
export const fraction = cuda.jit(function fraction(x: number) {
  return x - Math.floor(x);
}, { device: true });
