// DeviceArrays (captured by reference) and dtypes in `env`, each case with a host-computed reference.
// Run by test/host/env-device-arrays.test.ts on the simulator + ptxas + ptxsim, and by
// test/gpu/env-device-arrays.test.ts on the cuda target against the simulator. The env arrays are
// made when the cases are (on the current target), so call envArrayCases() after choosing it.

import assert from "node:assert/strict";
import { cuda, float32, int16, int32, type KernelArray1, type KernelArray2 } from "../../src/index.js";
import { randomFloats, type KernelCase } from "../helpers/crosscheck.js";

// the names the kernels below take from env
declare const grid2: KernelArray2<number>;
declare const hist: Int32Array;
declare const flipped: KernelArray2<number>;
declare const weights: Float64Array;
declare const lut: Float32Array;
declare const T: typeof float32;
declare const I: typeof int16;
declare const Particle: typeof particle;
declare const C: "complex64";
declare const acc: KernelArray1<number>;
declare const bump: (i: number) => number;

const f32 = Math.fround;
const particle = cuda.record({ x: float32, n: int32 });

/** The host contents of a 2-d DeviceArray, row by row. */
const rows = (d: { copyToHost(): unknown; shape: readonly number[] }): number[][] => {
  const flat = Array.from((d.copyToHost() as { data: Float32Array }).data);
  return Array.from({ length: d.shape[0]! }, (_, r) => flat.slice(r * d.shape[1]!, (r + 1) * d.shape[1]!));
};

export function envArrayCases(): KernelCase[] {
  const table = randomFloats(Float32Array, 12, 7);
  const grid2Device = cuda.toDevice(table).reshape(3, 4);
  const histDevice = cuda.toDevice(Int32Array.from([5, 0, 0, 1, 0, 0, 0, 2]));
  const keys = Int32Array.from({ length: 40 }, (_, i) => (i * 5) % 8);

  const square = Float32Array.from({ length: 12 }, (_, i) => i + 0.5);
  const base = cuda.toDevice(square).reshape(3, 4);

  const weightsDevice = cuda.toDevice(Float64Array.from({ length: 16 }, (_, i) => 1 / (i + 1)));

  const lutDevice = cuda.toDevice(Float32Array.from({ length: 8 }, (_, i) => i * i + 0.25));
  const counts = cuda.toDevice(new Int32Array(8));
  // a device function with its own env: every kernel that calls it captures `lut` and `acc`
  const bumpFn = cuda.jit((i: number) => {
    cuda.atomic.add(acc, i % 8, 1);
    return lut[i % 8];
  }, { device: true, env: { lut: lutDevice, acc: counts } });

  const typed = cuda.toDevice(Float32Array.from([0.1, 1.7, -2.6, 3.5]));

  return [
    {
      name: "env DeviceArrays: a 2-d lookup table read, a histogram written with atomics",
      kernel: (o: Float32Array, k: Int32Array) => {
        const i = cuda.grid(1);
        if (i < o.length) {
          o[i] = grid2[i % 3][i % 4] * 2 + 1;
          cuda.atomic.add(hist, k[i], 1);
        }
      },
      options: { env: { grid2: grid2Device, hist: histDevice } },
      grid: 2, block: 32,
      args: () => [new Float32Array(40), keys.slice()],
      check: ([o]) => {
        const want = Array.from({ length: 40 }, (_, i) => f32(f32(table[(i % 3) * 4 + (i % 4)]! * 2) + 1));
        assert.deepEqual(Array.from(o as Float32Array), want);
        const bins = [5, 0, 0, 1, 0, 0, 0, 2];
        for (const key of keys) bins[key]!++;
        assert.deepEqual(Array.from(histDevice.copyToHost()), bins);
      },
    },
    {
      name: "env DeviceArrays: a strided view (a transpose) read and written through its strides",
      kernel: (o: Float32Array) => {
        const [r, c] = cuda.grid(2);
        if (r < flipped.shape[0] && c < flipped.shape[1]) {
          o[r * flipped.shape[1] + c] = flipped[r][c];
          flipped[r][c] = r * 10 + c;
        }
      },
      options: { env: { flipped: base.T } },
      grid: 1, block: [4, 3],
      args: () => [new Float32Array(12)],
      check: ([o]) => {
        // flipped[r][c] is base[c][r]
        assert.deepEqual(Array.from(o as Float32Array), Array.from({ length: 12 }, (_, i) => square[(i % 3) * 4 + Math.floor(i / 3)]!));
        assert.deepEqual(rows(base), [0, 1, 2].map((c) => [0, 1, 2, 3].map((r) => r * 10 + c)));
      },
    },
    {
      name: "env DeviceArrays: a device function's own env arrays become the calling kernel's",
      kernel: (o: Float32Array) => {
        const i = cuda.grid(1);
        if (i < o.length) o[i] = bump(i) + bump(i + 1);
      },
      options: { env: { bump: bumpFn } },
      grid: 1, block: 20,
      args: () => [new Float32Array(20)],
      check: ([o]) => {
        const l = (i: number) => f32((i % 8) * (i % 8) + 0.25);
        assert.deepEqual(Array.from(o as Float32Array), Array.from({ length: 20 }, (_, i) => f32(l(i) + l(i + 1))));
        const want = new Array<number>(8).fill(0);
        for (let i = 0; i < 20; i++) { want[i % 8]!++; want[(i + 1) % 8]!++; }
        assert.deepEqual(Array.from(counts.copyToHost()), want);
      },
    },
    {
      name: "env DeviceArrays: an eager signature, the env array after the user's parameters",
      kernel: (o: Float64Array, n: number) => {
        const i = cuda.grid(1);
        if (i < o.length) o[i] = weights[i] * n;
      },
      options: { env: { weights: weightsDevice }, signature: "void(float64[::1], int32)" },
      grid: 1, block: 16,
      args: () => [new Float64Array(16), 3],
      check: ([o]) => assert.deepEqual(Array.from(o as Float64Array), Array.from({ length: 16 }, (_, i) => (1 / (i + 1)) * 3)),
    },
    {
      name: "env dtypes: a dtype object for casts, local and shared arrays; a record dtype; a complex dtype by name",
      kernel: (o: Float64Array, x: Float64Array) => {
        const t = cuda.threadIdx.x;
        const s = cuda.shared.array(4, T);
        const l = cuda.local.array(2, I);
        const p = cuda.local.array(1, Particle);
        const z = cuda.local.array(1, C);
        s[t] = T(x[t]) * 3;
        l[0] = I(x[t]);
        l[1] = x[t] * 2;
        p[0].x = x[t];
        p[0].n = I(x[t] * 4);
        z[0] = cuda.complex(T(x[t]), 2);
        cuda.syncthreads();
        const out = [s[3 - t], l[0], l[1], p[0].x, p[0].n, z[0].re, z[0].im, typed[t]];
        for (const [k, v] of out.entries()) o[t * 8 + k] = v;
      },
      options: { env: { T: float32, I: int16, Particle: particle, C: "complex64", typed } },
      grid: 1, block: 4,
      args: () => [new Float64Array(32), Float64Array.from([0.1, 1.7, -2.6, 3.5])],
      check: ([o, x]) => {
        const xs = Array.from(x as Float64Array);
        const want = xs.flatMap((v, t) => [
          f32(f32(xs[3 - t]!) * 3), Math.trunc(v), Math.trunc(v * 2), f32(v), Math.trunc(v * 4), f32(v), 2, f32(xs[t]!),
        ]);
        assert.deepEqual(Array.from(o as Float64Array), want);
      },
    },
  ];
}
