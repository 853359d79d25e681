// The kernels: shared memory and barriers, a device function from device.ts, dtypes, env constants.
import { cuda, float32, int32 } from "numbats";
import { squash } from "./device.js";
import { SCALE, TPB } from "./inputs.js";

/** partial[b] = the sum of block b's TPB elements (0 past the end), by a tree in shared memory. */
export const blockSums = cuda.jit((a: Float32Array, partial: Float32Array) => {
  const tile = cuda.shared.array(TPB, float32);
  const t = cuda.threadIdx.x;
  const i = cuda.grid(1);
  tile[t] = i < a.length ? a[i] : float32(0);
  cuda.syncthreads();
  for (let stride = TPB >> 1; stride > 0; stride >>= 1) {
    if (t < stride) tile[t] += tile[t + stride];
    cuda.syncthreads();
  }
  if (t === 0) partial[cuda.blockIdx.x] = tile[0];
}, { env: { TPB } });

/** out[i] = squash(x[i] · SCALE), over a grid-stride loop. */
export const squashAll = cuda.jit((x: Float32Array, out: Float32Array) => {
  const start = cuda.grid(1);
  const step = cuda.gridsize(1);
  for (let i = start; i < x.length; i += step) {
    out[i] = squash(x[i] * SCALE);
  }
}, { env: { SCALE } });

/** out[i] = the sign of c[i] (-1, 0 or 1) times its last decimal digit, in int32. */
export const lastDigits = cuda.jit((c: Int32Array, out: Int32Array) => {
  const i = cuda.grid(1);
  if (i >= c.length) return;
  const v = c[i];
  let digit = int32(Math.abs(v) % 10);
  if (v < 0) digit = -digit;
  out[i] = digit;
});
