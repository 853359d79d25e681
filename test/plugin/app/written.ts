// A kernel and a device function written here and passed to cuda.jit in another module (elsewhere.ts):
// the plugin records them where they are declared.
import { cuda, float32 } from "../../../src/index.js";

export function halve(x: number): number {
  return x / 2;
}

export function halveAll(a: Float32Array, out: Float32Array): void {
  const i = cuda.grid(1);
  if (i < out.length) out[i] = float32(halve(a[i]!) + 0.25);
}
