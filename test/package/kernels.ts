// The kernels of the program test/product/package.test.ts installs and runs every way
// an app can load numbats. Each depends on typing a literal by its value.
import { cuda, float32 } from "numbats";
import { fraction } from "./device.js";

/** out[0] = the sum of `a`, accumulated in float64 (`0.0` is a float64 literal). */
export const total = cuda.jit((a: Float32Array, out: Float64Array) => {
  if (cuda.grid(1) === 0) {
    let s = 0.0;
    for (let k = 0; k < a.length; k++) s += a[k];
    out[0] = s;
  }
});

/** out[row] = the first plus the last element of row `row` of a rows × 1000 matrix. */
export const rowEnds = cuda.jit((m: Float32Array, out: Float32Array) => {
  const row = cuda.grid(1);
  if (row < out.length) out[row] = m[row * 1000] + m[row * 1000 + 999];
});

/** Each block of 1000 threads reverses its 1000 elements through shared memory. */
export const reverseBlocks = cuda.jit((a: Float32Array, out: Float32Array) => {
  const tile = cuda.shared.array(1000, float32);
  const t = cuda.threadIdx.x;
  const i = cuda.blockIdx.x * 1000 + t;
  tile[t] = a[i];
  cuda.syncthreads();
  out[i] = tile[999 - t];
});

/** out[i] = table[⌊fraction(xs[i]) · table.length⌋]. */
export const lookup = cuda.jit((xs: Float32Array, table: Int32Array, out: Int32Array) => {
  const i = cuda.grid(1);
  if (i < xs.length) out[i] = table[Math.floor(fraction(xs[i]) * table.length)];
});
