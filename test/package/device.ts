// A device function in a module of its own, called from kernels.ts.
import { cuda } from "numbats";

/** The fractional part of x, in [0, 1). */
export const fraction = cuda.jit((x: number) => x - Math.floor(x), { device: true });
