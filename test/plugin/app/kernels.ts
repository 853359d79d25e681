// Kernels that minifiers rewrite: shared memory and barriers, Math.exp, a device function from another
// module, an env function, dtypes, a reduction and a ufunc.
import { cuda, float32, type KernelArray1 } from "../../../src/index.js";
import { scale } from "./device.js";

export const TPB = 32;

/** Per-block sums of exp(x / 100), each passed through `scale`. */
export const blockSums = cuda.jit((x: Float32Array, out: Float32Array): void => {
  const s = cuda.shared.array(TPB, float32);
  const t = cuda.threadIdx.x;
  const i = cuda.grid(1);
  s[t] = i < x.length ? Math.exp(x[i]! / 100) : 0;
  cuda.syncthreads();
  for (let step = TPB >> 1; step > 0; step >>= 1) {
    if (t < step) s[t] = s[t]! + s[t + step]!;
    cuda.syncthreads();
  }
  if (t === 0) out[cuda.blockIdx.x] = scale(s[0]!);
}, { env: { TPB } });

/** out[i] = sq(a[i]) - a[i] as int32, with `sq` from env. */
export const squares = cuda.jit((a: KernelArray1<number>, out: Int32Array) => {
  const i = cuda.grid(1);
  if (i < out.length) {
    const v = a[i] as number;
    out[i] = sq(v) - v;
  }
}, { env: { sq: (v: number): number => v * v } });
declare function sq(v: number): number;

export const total = cuda.reduce((a: number, b: number) => a + b);

export const wave = cuda.vectorize((x: number, y: number): number => Math.sin(x) * y + 1, ["float32(float32, float32)"]);

/** Runs each kernel on fixed inputs; one line of results each. */
export function runAll(): string[] {
  const lines: string[] = [];
  const n = 256;
  const x = Float32Array.from({ length: n }, (_, i) => (i * 37) % 101);
  const sums = new Float32Array(n / 32);
  blockSums.configure(n / 32, 32)(x, sums);
  lines.push(`blockSums ${Array.from(sums).join(" ")}`);

  const a = Int32Array.from({ length: 64 }, (_, i) => i - 20);
  const sq = new Int32Array(64);
  squares.configure(2, 32)(a, sq);
  lines.push(`squares ${Array.from(sq).join(" ")}`);

  lines.push(`total ${total(Float64Array.from({ length: 1000 }, (_, i) => i * 0.5))}`);
  lines.push(`wave ${Array.from(wave(Float32Array.from([0, 0.5, 1, 2]), Float32Array.from([1, 2, 3, 4])) as Float32Array).join(" ")}`);
  return lines;
}
