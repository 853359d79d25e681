// What the back ends emit for a few representative kernels, kept under test/snapshots/ so that a change
// in code generation shows in review as a diff of PTX or JavaScript (esbuild's snapshot tests).
// A mismatch fails with the first differing line; `UPDATE_SNAPSHOTS=1 node --import tsx --test
// test/targets/snapshots.test.ts` rewrites the files, to be read and committed with the change that caused them.
// Correctness is asserted elsewhere (every kernel here also runs in the end-to-end suites); these files
// only make changes visible.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { compileToIR } from "../../src/compiler/index.js";
import { parseSignature } from "../../src/dtypes.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { cuda, float32, int32, uint32, type KernelArray2 } from "../../src/index.js";
import { emitKernel } from "../../src/backends/sim/js/emit.js";
import { emitPtx } from "../../src/backends/cuda/ptx/emit.js";
import { tiledMatmul, TPB } from "../helpers/kernels.js";

const DIR = fileURLToPath(new URL("../snapshots", import.meta.url));
const UPDATE = process.env.UPDATE_SNAPSHOTS === "1";

const square = (x: number) => x * x;
cuda.jit(square, { device: true });

interface Snapshot { name: string; fn: Function; signature: string; env?: Record<string, unknown> }

const SNAPSHOTS: Snapshot[] = [
  {
    name: "vadd", signature: "void(float32[::1], float32[::1], float32[::1])",
    fn: (a: Float32Array, b: Float32Array, c: Float32Array) => {
      const i = cuda.grid(1);
      if (i < c.length) c[i] = a[i] + b[i];
    },
  },
  {
    name: "saxpy_grid_stride", signature: "void(float32, float32[::1], float32[::1])",
    fn: (alpha: number, x: Float32Array, y: Float32Array) => {
      for (let i = cuda.grid(1); i < y.length; i += cuda.gridsize(1)) y[i] = alpha * x[i] + y[i];
    },
  },
  {
    name: "matmul_naive", signature: "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    fn: (A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
      const [x, y] = cuda.grid(2);
      if (y < C.shape[0] && x < C.shape[1]) {
        let s = float32(0);
        for (let k = 0; k < A.shape[1]; k++) s += A[y][k] * B[k][x];
        C[y][x] = s;
      }
    },
  },
  { name: "matmul_tiled", signature: "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])", fn: tiledMatmul, env: { TPB } },
  {
    name: "stencil", signature: "void(float32[:, ::1], float32[:, ::1])",
    fn: (a: KernelArray2<number>, out: KernelArray2<number>) => {
      const [x, y] = cuda.grid(2);
      const ny = a.shape[0], nx = a.shape[1];
      if (x < nx && y < ny) {
        if (x === 0 || y === 0 || x === nx - 1 || y === ny - 1) out[y][x] = a[y][x];
        else out[y][x] = 0.2 * (a[y][x] + a[y - 1][x] + a[y + 1][x] + a[y][x - 1] + a[y][x + 1]);
      }
    },
  },
  {
    name: "histogram_shared_atomics", signature: "void(uint8[::1], uint32[::1])",
    fn: (data: Uint8Array, bins: Uint32Array) => {
      const s = cuda.shared.array(256, uint32);
      const t = cuda.threadIdx.x;
      s[t] = 0;
      cuda.syncthreads();
      for (let i = cuda.grid(1); i < data.length; i += cuda.gridsize(1)) cuda.atomic.add(s, data[i], 1);
      cuda.syncthreads();
      cuda.atomic.add(bins, t, s[t]);
    },
  },
  {
    name: "warp_reduce", signature: "void(float32[::1], float32[::1])",
    fn: (x: Float32Array, out: Float32Array) => {
      const i = cuda.grid(1);
      let v = i < x.length ? x[i] : float32(0);
      for (let d = 16; d > 0; d >>= 1) v += cuda.shflDownSync(0xffffffff, v, d);
      if (cuda.laneid === 0) cuda.atomic.add(out, 0, v);
    },
  },
  {
    name: "math_f32", signature: "void(float32[::1], float32[::1])",
    fn: (x: Float32Array, y: Float32Array) => {
      const i = cuda.grid(1);
      if (i < x.length) y[i] = Math.exp(x[i]) + Math.log(x[i]) * Math.sin(x[i]);
    },
  },
  {
    name: "device_function_and_local_array", signature: "void(int32[::1])",
    fn: (out: Int32Array) => {
      const i = cuda.grid(1);
      const acc = cuda.local.array(4, int32);
      for (let k = 0; k < 4; k++) acc[k] = square(i + k);
      if (i < out.length) out[i] = acc[0] + acc[1] + acc[2] + acc[3];
    },
    env: { square },
  },
  {
    name: "tuple_destructuring_loop", signature: "void(float64[::1])",
    fn: (out: Float64Array) => {
      const i = cuda.grid(1);
      const weights = [0.25, 0.5, 0.25];
      let s = 0;
      for (const [k, w] of weights.entries()) s += w * (i + k);
      if (i < out.length) out[i] = s;
    },
  },
];

function check(file: string, actual: string): void {
  const path = join(DIR, file);
  if (UPDATE || !existsSync(path)) {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(path, actual);
    if (!UPDATE) assert.fail(`${file} did not exist: written; read it, commit it, and run again`);
    return;
  }
  const expected = readFileSync(path, "utf8");
  if (actual === expected) return;
  const a = actual.split("\n"), e = expected.split("\n");
  const line = a.findIndex((l, k) => l !== e[k]);
  assert.fail(`${file} changed at line ${line + 1}:\n  was: ${e[line] ?? "(end)"}\n  now: ${a[line] ?? "(end)"}\n` +
    "If the change is intended, rerun with UPDATE_SNAPSHOTS=1 and commit the new file.");
}

for (const s of SNAPSHOTS) {
  test(`snapshot: ${s.name} (PTX for sm_80 and sm_90, simulator JavaScript)`, () => {
    const ir = compileToIR(s.fn, parseSignature(s.signature).args, { env: s.env, name: s.name, resolveDeviceFunction });
    check(`${s.name}.sm_80.ptx`, emitPtx(ir, { computeCapability: [8, 0] }).text);
    check(`${s.name}.sm_90.ptx`, emitPtx(ir, { computeCapability: [9, 0] }).text);
    check(`${s.name}.js`, emitKernel(ir).code);
  });
}
