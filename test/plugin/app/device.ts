// A device function in a module of its own, called by name from a kernel in another module.
import { cuda } from "../../../src/index.js";

export function scale(x: number): number {
  return x * 2 + 1;
}
cuda.jit(scale, { device: true });
