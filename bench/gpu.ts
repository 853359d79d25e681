// `npm run bench:gpu`: our kernels timed beside the same kernels in CUDA C++
// (bench/peers/gpu_kernels.cu, nvcc -O3) and Numba-CUDA
// (bench/peers/numba_gpu.py), all measured in this one run.
//
//   NUMBATS_TARGET=cuda node --import tsx bench/gpu.ts [--tiny]
//
// Sections: kernel time (CUDA events, median of reps × batch), launch
// overhead (numba-cuda-mlir's launch-latency rows), first launch of a new
// kernel, compile time (source → PTX) and ptxas time, transfer bandwidth, and 100 small launches
// as a graph (stream capture) against the same launches one by one.
// Every kernel result is checked against a host reference, so a wrong kernel
// cannot look fast. The three implementations share the input data (an integer
// hash of the index), launch geometry and sizes (passed to the peers as flags).
//
// Without a GPU it says so and reports compile and ptxas times only. With
// NUMBATS_TARGET=sim (and --tiny) every section runs on the simulator: a check
// that the kernels run and validate, not a measurement.
//
// Output: markdown on stdout and in $BENCH_OUT (default bench/out/) as gpu.md
// and gpu.json. Exit status 1 when one of our kernels fails its check.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cuda, float32, float64, uint8, uint32, type DeviceArray, type Kernel, type KernelArray2, type JitOptions } from "../dist/src/index.js";
import { compileToIR } from "../dist/src/compiler/index.js";
import { parseSignature } from "../dist/src/dtypes.js";
import { resolveDeviceFunction } from "../dist/src/device-functions.js";
import { currentTargetInfo } from "../dist/src/runtime/select.js";
import { cudaDriver } from "../dist/src/backends/cuda/driver/driver.js";
import { emitPtx } from "../dist/src/backends/cuda/ptx/emit.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const TINY = process.argv.includes("--tiny");

/** Sizes and counts; the peers get the same values as --flags. */
interface Sizes {
  n: number; mm: number; st: number; gs: number; reps: number; batch: number;
  mib: number; launches: number; rounds: number; warmup: number;
}
const FULL: Sizes = { n: 1 << 24, mm: 1024, st: 4096, gs: 1024, reps: 25, batch: 10, mib: 256, launches: 2000, rounds: 5, warmup: 500 };
const SMALL: Sizes = { n: 4096, mm: 32, st: 64, gs: 4, reps: 3, batch: 2, mib: 1, launches: 20, rounds: 3, warmup: 5 };

const TPB = 16;
const BLOCK = 256;
const ALPHA = 2.5;

// ---------------------------------------------------------------------------
// the kernels (same algorithms as gpu_kernels.cu and numba_gpu.py)

const vadd = (a: Float32Array, b: Float32Array, c: Float32Array) => {
  const i = cuda.grid(1);
  if (i < c.length) c[i] = a[i] + b[i];
};

const saxpy = (alpha: number, x: Float32Array, y: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < out.length) out[i] = alpha * x[i] + y[i];
};

const matmulNaive = (A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  const [x, y] = cuda.grid(2);
  if (y < C.shape[0] && x < C.shape[1]) {
    let tmp = float32(0);
    for (let k = 0; k < A.shape[1]; k++) tmp += A[y][k] * B[k][x];
    C[y][x] = tmp;
  }
};

// Numba's documented fast_matmul
const matmulTiled = (A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  const sA = cuda.shared.array([TPB, TPB], float32);
  const sB = cuda.shared.array([TPB, TPB], float32);
  const [x, y] = cuda.grid(2);
  const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
  const bpg = cuda.gridDim.x;
  let tmp = float32(0);
  for (let i = 0; i < bpg; i++) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    if (y < A.shape[0] && tx + i * TPB < A.shape[1]) sA[ty][tx] = A[y][tx + i * TPB];
    if (x < B.shape[1] && ty + i * TPB < B.shape[0]) sB[ty][tx] = B[ty + i * TPB][x];
    cuda.syncthreads();
    for (let j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
    cuda.syncthreads();
  }
  if (y < C.shape[0] && x < C.shape[1]) C[y][x] = tmp;
};

// grid-stride partial sums, shared-memory tree per block, atomic add of the block's partial
const reduceSum = (x: Float32Array, out: Float32Array) => {
  const s = cuda.shared.array(BLOCK, float32);
  const t = cuda.threadIdx.x;
  let acc = float32(0);
  for (let i = cuda.blockIdx.x * BLOCK + t; i < x.length; i += cuda.gridDim.x * BLOCK) acc += x[i];
  s[t] = acc;
  cuda.syncthreads();
  for (let k = BLOCK >> 1; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    cuda.syncthreads();
  }
  if (t === 0) cuda.atomic.add(out, 0, s[0]);
};

// 5-point average on the interior, copy on the border
const stencil = (a: KernelArray2<number>, out: KernelArray2<number>) => {
  const [x, y] = cuda.grid(2);
  const ny = a.shape[0], nx = a.shape[1];
  if (x < nx && y < ny) {
    if (x === 0 || y === 0 || x === nx - 1 || y === ny - 1) out[y][x] = a[y][x];
    else out[y][x] = 0.2 * (a[y][x] + a[y - 1][x] + a[y + 1][x] + a[y][x - 1] + a[y][x + 1]);
  }
};

const histogram = (data: Uint8Array, bins: Uint32Array) => {
  const s = cuda.shared.array(256, uint32);
  const t = cuda.threadIdx.x;
  s[t] = 0;
  cuda.syncthreads();
  for (let i = cuda.blockIdx.x * BLOCK + t; i < data.length; i += cuda.gridDim.x * BLOCK) cuda.atomic.add(s, data[i], 1);
  cuda.syncthreads();
  cuda.atomic.add(bins, t, s[t]);
};

// five float32 transcendentals per element: our device math library against libdevice's expf, logf, …
const mathF32 = (x: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < out.length) {
    const v = x[i];
    out[i] = Math.exp(v) + Math.log(v + 1) * Math.sin(v) + Math.cos(v) * Math.tanh(v);
  }
};

// matrix transpose through a padded shared-memory tile (32×33: the column reads hit 32 banks);
// blocks of 32×8 threads, each thread moving 4 elements
const TILE = 32, TILE_ROWS = 8;
const transpose = (a: KernelArray2<number>, out: KernelArray2<number>) => {
  const tile = cuda.shared.array([TILE, TILE + 1], float32);
  const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
  const x0 = cuda.blockIdx.x * TILE, y0 = cuda.blockIdx.y * TILE;
  const ny = a.shape[0], nx = a.shape[1];
  for (let j = 0; j < TILE; j += TILE_ROWS) {
    if (y0 + ty + j < ny && x0 + tx < nx) tile[ty + j][tx] = a[y0 + ty + j][x0 + tx];
  }
  cuda.syncthreads();
  for (let j = 0; j < TILE; j += TILE_ROWS) {
    if (x0 + ty + j < nx && y0 + tx < ny) out[x0 + ty + j][y0 + tx] = tile[tx][ty + j];
  }
};

// row softmax, one warp per row: max and sum by butterfly shuffles
const softmax = (a: KernelArray2<number>, out: KernelArray2<number>) => {
  const row = cuda.blockIdx.x * (BLOCK >> 5) + (cuda.threadIdx.x >> 5);
  const lane = cuda.threadIdx.x & 31;
  if (row < a.shape[0]) {
    const n = a.shape[1];
    let m = float32(-Infinity);
    for (let j = lane; j < n; j += 32) m = Math.max(m, a[row][j]);
    for (let o = 16; o > 0; o >>= 1) m = Math.max(m, cuda.shflXorSync(0xffffffff, m, o));
    let sum = float32(0);
    for (let j = lane; j < n; j += 32) sum += Math.exp(a[row][j] - m);
    for (let o = 16; o > 0; o >>= 1) sum += cuda.shflXorSync(0xffffffff, sum, o);
    for (let j = lane; j < n; j += 32) out[row][j] = Math.exp(a[row][j] - m) / sum;
  }
};

// inclusive scan of each block's BLOCK elements (Hillis–Steele in shared memory)
const scanBlock = (x: Float32Array, out: Float32Array) => {
  const s = cuda.shared.array(BLOCK, float32);
  const t = cuda.threadIdx.x;
  const i = cuda.blockIdx.x * BLOCK + t;
  s[t] = i < x.length ? x[i] : float32(0);
  cuda.syncthreads();
  for (let d = 1; d < BLOCK; d <<= 1) {
    const v = t >= d ? s[t - d] : float32(0);
    cuda.syncthreads();
    s[t] += v;
    cuda.syncthreads();
  }
  if (i < x.length) out[i] = s[t];
};

// Black–Scholes call and put (CUDA samples' BlackScholes): float32 exp, log, sqrt and the
// Abramowitz–Stegun polynomial for the normal CDF
const RISKFREE = 0.02, VOLATILITY = 0.3;
const cnd = cuda.jit((d: number) => {
  const k = 1 / (1 + 0.2316419 * Math.abs(d));
  const c = 0.3989422804014327 * Math.exp(-0.5 * d * d) *
    (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
  return d > 0 ? 1 - c : c;
}, { device: true });
const blackScholes = (price: Float32Array, strike: Float32Array, years: Float32Array, call: Float32Array, put: Float32Array) => {
  const i = cuda.grid(1);
  if (i < call.length) {
    const s = price[i], x = strike[i], t = years[i];
    const sqrtT = Math.sqrt(t);
    const d1 = (Math.log(s / x) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * sqrtT);
    const d2 = d1 - VOLATILITY * sqrtT;
    const cnd1 = cnd(d1), cnd2 = cnd(d2);
    const expRT = Math.exp(-RISKFREE * t);
    call[i] = s * cnd1 - x * expRT * cnd2;
    put[i] = x * expRT * (1 - cnd2) - s * (1 - cnd1);
  }
};

// one n-body step, all pairs: each body's acceleration (softened, 1/sqrt) updates its velocity;
// pos holds x, y, z, mass per body, vel x, y, z
const SOFTENING2 = 0.01, DT = 0.001;
const nbody = (pos: Float32Array, vel: Float32Array) => {
  const i = cuda.grid(1);
  const n = pos.length >> 2;
  if (i < n) {
    const xi = pos[4 * i], yi = pos[4 * i + 1], zi = pos[4 * i + 2];
    let ax = float32(0), ay = float32(0), az = float32(0);
    for (let j = 0; j < n; j++) {
      const dx = pos[4 * j] - xi, dy = pos[4 * j + 1] - yi, dz = pos[4 * j + 2] - zi;
      const inv = 1 / Math.sqrt(dx * dx + dy * dy + dz * dz + SOFTENING2);
      const f = pos[4 * j + 3] * inv * inv * inv;
      ax += dx * f;
      ay += dy * f;
      az += dz * f;
    }
    vel[3 * i] += DT * ax;
    vel[3 * i + 1] += DT * ay;
    vel[3 * i + 2] += DT * az;
  }
};

const saxpyF64 = (alpha: number, x: Float64Array, y: Float64Array, out: Float64Array) => {
  const i = cuda.grid(1);
  if (i < out.length) out[i] = alpha * x[i] + y[i];
};

// ---------------------------------------------------------------------------
// input data: identical formulas in gpu_kernels.cu and numba_gpu.py

const hash32 = (i: number, seed: number) => Math.imul(i + seed, 2654435761 | 0) >>> 0;

function units(n: number, seed: number, shift = 0): Float32Array {
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = (hash32(i, seed) >>> 8) / 16777216 - shift;
  return v;
}

// ---------------------------------------------------------------------------
// measuring and checking

/** A timed, checked result; `us` is per launch; `hostUs`: host time to enqueue one launch of the batch. */
interface Measured { us: number; ok: boolean; detail: string; hostUs?: number; jitUs?: number }
type Outcome = Measured | { error: string };

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/**
 * CUDA events around `batch` launches, `reps` times, after a warm-up batch:
 * median µs per launch, and the host's median µs to enqueue one (when that
 * nears the kernel time, the figure measures launch overhead, not the kernel).
 */
function kernelMicros(s: Sizes, launch: () => void): { us: number; hostUs: number } {
  for (let i = 0; i < s.batch; i++) launch();
  cuda.synchronize();
  const start = cuda.event(), end = cuda.event();
  const times: number[] = [], host: number[] = [];
  for (let r = 0; r < s.reps; r++) {
    start.record();
    const t0 = performance.now();
    for (let i = 0; i < s.batch; i++) launch();
    host.push(((performance.now() - t0) * 1000) / s.batch);
    end.record();
    end.synchronize();
    times.push((cuda.eventElapsedTime(start, end) * 1000) / s.batch);
  }
  return { us: median(times), hostUs: median(host) };
}

/** The worst relative error seen, as a result. */
class Worst {
  private err = 0;
  private at = -1;
  see(got: number, want: number, scale: number, i: number): void {
    const e = Math.abs(got - want) / (Math.abs(scale) + 1e-30);
    if (!(e <= this.err)) { this.err = e; this.at = i; }
  }
  result(us: number, tol: number): Measured {
    return { us, ok: this.err <= tol, detail: `max rel err ${this.err.toExponential(2)} at ${this.at} (tol ${tol.toExponential(0)})` };
  }
}

const blocks = (n: number, per: number) => Math.ceil(n / per);
/** A launch of a configured kernel (configured once, as Numba's `kernel[grid, block]`). */
const bind = <A extends unknown[]>(launcher: (...args: A) => void, ...args: A) => () => launcher(...args);
const f32 = (d: DeviceArray) => d.copyToHost() as Float32Array;
const matrix = (d: DeviceArray) => (d.copyToHost() as unknown as { data: Float32Array }).data;

/** A benchmark kernel: how to jit it and how to set up, launch and check it at given sizes. */
export interface KernelBench {
  /** key shared with the peers' JSON */
  readonly name: string;
  readonly size: (s: Sizes) => string;
  readonly fn: (...args: never[]) => void;
  readonly options?: JitOptions;
  /** for compile-time measurement: the signature a launch specialises to */
  readonly signature: string;
  setup(k: Kernel, s: Sizes): { launch(): void; check(us: number): Measured };
  /** the CUDA C++ twin in peers/gpu_kernels.cu (bench/static.ts compares their SASS) */
  readonly peer?: string;
  /** the hot source loop for bench/static.ts: the memory its loads read and the elements loaded per iteration */
  readonly hotLoop?: { space: "global" | "shared"; loads: number };
}

const F1 = "float32[::1]", F2 = "float32[:, ::1]", D1 = "float64[::1]";

export const KERNELS: readonly KernelBench[] = [
  {
    name: "vadd", peer: "vadd", size: (s) => `${s.n} f32`, fn: vadd, signature: `void(${F1}, ${F1}, ${F1})`,
    setup(k, s) {
      const a = units(s.n, 1), b = units(s.n, 2);
      const da = cuda.toDevice(a), db = cuda.toDevice(b), dc = cuda.deviceArray(s.n, float32);
      return {
        launch: bind(k.configure(blocks(s.n, BLOCK), BLOCK), da, db, dc),
        check(us) {
          const c = f32(dc), w = new Worst();
          for (let i = 0; i < s.n; i++) w.see(c[i]!, Math.fround(a[i]! + b[i]!), 1, i);
          return w.result(us, 0);
        },
      };
    },
  },
  {
    name: "saxpy", peer: "saxpy", size: (s) => `${s.n} f32`, fn: saxpy, signature: `void(float32, ${F1}, ${F1}, ${F1})`,
    setup(k, s) {
      const x = units(s.n, 3), y = units(s.n, 4);
      const dx = cuda.toDevice(x), dy = cuda.toDevice(y), dout = cuda.deviceArray(s.n, float32);
      const alpha = float32(ALPHA);
      return {
        launch: bind(k.configure(blocks(s.n, BLOCK), BLOCK), alpha, dx, dy, dout),
        check(us) {
          const out = f32(dout), w = new Worst();
          for (let i = 0; i < s.n; i++) { const want = ALPHA * x[i]! + y[i]!; w.see(out[i]!, want, want, i); }
          return w.result(us, 1e-6);
        },
      };
    },
  },
  matmulBench("matmul_naive", matmulNaive, { space: "global", loads: 2 }),
  matmulBench("matmul_tiled", matmulTiled, { space: "shared", loads: 2 }, { env: { TPB } }),
  {
    name: "reduce", peer: "reduce_sum", hotLoop: { space: "global", loads: 1 }, size: (s) => `${s.n} f32`, fn: reduceSum, options: { env: { BLOCK } }, signature: `void(${F1}, ${F1})`,
    setup(k, s) {
      const x = units(s.n, 8);
      const dx = cuda.toDevice(x), dsum = cuda.deviceArray(1, float32);
      const launch = bind(k.configure(s.gs, BLOCK), dx, dsum);
      return {
        launch,
        check: (us) => {
          dsum.copyToDevice(new Float32Array(1));
          launch();
          return checkSum(us, f32(dsum)[0]!, x);
        },
      };
    },
  },
  {
    name: "reduce_builtin", size: (s) => `${s.n} f32, cuda.reduce`, fn: reduceSum, options: { env: { BLOCK } }, signature: `void(${F1}, ${F1})`,
    // cuda.reduce generates its own kernels; `k` is unused
    setup(_k, s) {
      const x = units(s.n, 8);
      const dx = cuda.toDevice(x), dsum = cuda.deviceArray(1, float32);
      const sum = cuda.reduce((p, q) => p + q);
      return { launch: () => sum(dx, { res: dsum }), check: (us) => checkSum(us, f32(dsum)[0]!, x) };
    },
  },
  {
    name: "stencil", peer: "stencil5", size: (s) => `${s.st}×${s.st} f32`, fn: stencil, signature: `void(${F2}, ${F2})`,
    setup(k, s) {
      const n = s.st, a = units(n * n, 7);
      const da = cuda.toDevice({ data: a, shape: [n, n], stride: [n, 1], offset: 0 }), dout = cuda.deviceArray([n, n], float32);
      return {
        launch: bind(k.configure([blocks(n, 32), blocks(n, 8)], [32, 8]), da, dout),
        check(us) {
          const out = matrix(dout), w = new Worst();
          for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) {
            const i = y * n + x;
            const edge = x === 0 || y === 0 || x === n - 1 || y === n - 1;
            const want = edge ? a[i]! : 0.2 * (a[i]! + a[i - n]! + a[i + n]! + a[i - 1]! + a[i + 1]!);
            w.see(out[i]!, want, want, i);
          }
          return w.result(us, 1e-6);
        },
      };
    },
  },
  {
    name: "math_f32", peer: "math_f32", size: (s) => `${s.n} f32, exp+log·sin+cos·tanh`, fn: mathF32, signature: `void(${F1}, ${F1})`,
    setup(k, s) {
      const x = units(s.n, 10);
      const dx = cuda.toDevice(x), dout = cuda.deviceArray(s.n, float32);
      return {
        launch: bind(k.configure(blocks(s.n, BLOCK), BLOCK), dx, dout),
        check(us) {
          const out = f32(dout), w = new Worst();
          for (let i = 0; i < s.n; i++) {
            const v = x[i]!, want = Math.exp(v) + Math.log(v + 1) * Math.sin(v) + Math.cos(v) * Math.tanh(v);
            w.see(out[i]!, want, want, i);
          }
          return w.result(us, 2e-6);
        },
      };
    },
  },
  {
    name: "histogram", peer: "histogram", hotLoop: { space: "global", loads: 1 }, size: (s) => `${s.n} u8 → 256 bins`, fn: histogram, options: { env: { BLOCK } }, signature: "void(uint8[::1], uint32[::1])",
    setup(k, s) {
      const data = new Uint8Array(s.n);
      for (let i = 0; i < s.n; i++) data[i] = hash32(i, 9) >>> 24;
      const dd = cuda.toDevice(data), dbins = cuda.deviceArray(256, uint32);
      const launch = bind(k.configure(s.gs, BLOCK), dd, dbins);
      return {
        launch,
        check(us) {
          dbins.copyToDevice(new Uint32Array(256));
          launch();
          const got = dbins.copyToHost() as Uint32Array, want = new Uint32Array(256);
          for (const v of data) want[v]!++;
          const wrong = got.filter((v, b) => v !== want[b]).length;
          return { us, ok: wrong === 0, detail: wrong ? `${wrong} of 256 bins differ` : "256 bins exact" };
        },
      };
    },
  },
  {
    name: "transpose", peer: "transpose", size: (s) => `${s.st}×${s.st} f32, 32×33 tile`, fn: transpose, options: { env: { TILE, TILE_ROWS } }, signature: `void(${F2}, ${F2})`,
    setup(k, s) {
      const n = s.st, a = units(n * n, 13);
      const da = cuda.toDevice({ data: a, shape: [n, n], stride: [n, 1], offset: 0 }), dout = cuda.deviceArray([n, n], float32);
      return {
        launch: bind(k.configure([blocks(n, TILE), blocks(n, TILE)], [TILE, TILE_ROWS]), da, dout),
        check(us) {
          const out = matrix(dout), w = new Worst();
          for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) w.see(out[x * n + y]!, a[y * n + x]!, 1, x * n + y);
          return w.result(us, 0);
        },
      };
    },
  },
  {
    name: "softmax", peer: "softmax", hotLoop: { space: "global", loads: 1 }, size: (s) => `${s.st}×${s.st} f32, a warp per row`, fn: softmax, options: { env: { BLOCK } },
    signature: `void(${F2}, ${F2})`,
    setup(k, s) {
      const n = s.st, a = units(n * n, 14, 0.5).map((v) => 8 * v);
      const da = cuda.toDevice({ data: a, shape: [n, n], stride: [n, 1], offset: 0 }), dout = cuda.deviceArray([n, n], float32);
      return {
        launch: bind(k.configure(blocks(n, BLOCK >> 5), BLOCK), da, dout),
        check(us) {
          const out = matrix(dout), w = new Worst();
          for (let y = 0; y < n; y++) {
            const row = a.subarray(y * n, (y + 1) * n);
            const m = Math.max(...row);
            let sum = 0;
            for (const v of row) sum += Math.exp(v - m);
            for (let x = 0; x < n; x++) { const want = Math.exp(row[x]! - m) / sum; w.see(out[y * n + x]!, want, want, y * n + x); }
          }
          return w.result(us, 1e-5);
        },
      };
    },
  },
  {
    name: "scan", peer: "scan_block", size: (s) => `${s.n} f32, per block of ${BLOCK}`, fn: scanBlock, options: { env: { BLOCK } }, signature: `void(${F1}, ${F1})`,
    setup(k, s) {
      const x = units(s.n, 15);
      const dx = cuda.toDevice(x), dout = cuda.deviceArray(s.n, float32);
      return {
        launch: bind(k.configure(blocks(s.n, BLOCK), BLOCK), dx, dout),
        check(us) {
          const out = f32(dout), w = new Worst();
          let acc = 0;
          for (let i = 0; i < s.n; i++) { acc = (i % BLOCK === 0 ? 0 : acc) + x[i]!; w.see(out[i]!, acc, acc, i); }
          return w.result(us, 1e-5);
        },
      };
    },
  },
  {
    name: "black_scholes", peer: "black_scholes", size: (s) => `${s.n} options, f32`, fn: blackScholes, options: { env: { cnd, RISKFREE, VOLATILITY } },
    signature: `void(${F1}, ${F1}, ${F1}, ${F1}, ${F1})`,
    setup(k, s) {
      // the CUDA samples' ranges: price 5–30, strike 1–100, 0.25–10 years
      const price = units(s.n, 16).map((u) => 5 + 25 * u), strike = units(s.n, 17).map((u) => 1 + 99 * u), years = units(s.n, 18).map((u) => 0.25 + 9.75 * u);
      const dp = cuda.toDevice(price), ds = cuda.toDevice(strike), dy = cuda.toDevice(years);
      const dcall = cuda.deviceArray(s.n, float32), dput = cuda.deviceArray(s.n, float32);
      return {
        launch: bind(k.configure(blocks(s.n, BLOCK), BLOCK), dp, ds, dy, dcall, dput),
        check(us) {
          const call = f32(dcall), put = f32(dput), w = new Worst();
          for (let i = 0; i < s.n; i++) {
            const want = blackScholesRef(price[i]!, strike[i]!, years[i]!);
            // absolute error on the price scale: deep out-of-the-money options are worth ~0
            w.see(call[i]!, want.call, price[i]!, i);
            w.see(put[i]!, want.put, price[i]!, i);
          }
          return w.result(us, 1e-5);
        },
      };
    },
  },
  {
    name: "nbody", peer: "nbody", hotLoop: { space: "global", loads: 4 }, size: (s) => `${4 * s.mm} bodies, f32`, fn: nbody, options: { env: { SOFTENING2, DT } },
    signature: `void(${F1}, ${F1})`,
    setup(k, s) {
      const n = 4 * s.mm, pos = units(4 * n, 19, 0.5), vel = units(3 * n, 20, 0.5);
      for (let i = 0; i < n; i++) pos[4 * i + 3] = 1 + pos[4 * i + 3]!;
      const dpos = cuda.toDevice(pos), dvel = cuda.toDevice(vel);
      const launch = bind(k.configure(blocks(n, BLOCK), BLOCK), dpos, dvel);
      return {
        launch,
        check(us) {
          // velocities after one step from the initial ones (the timed launches each added a step)
          dvel.copyToDevice(vel);
          launch();
          const got = f32(dvel), w = new Worst();
          for (let i = 0; i < n; i++) {
            const { a, mag } = nbodyRef(pos, i, n);
            for (let c = 0; c < 3; c++) w.see(got[3 * i + c]!, vel[3 * i + c]! + DT * a[c]!, Math.abs(vel[3 * i + c]!) + DT * mag, 3 * i + c);
          }
          return w.result(us, 1e-5);
        },
      };
    },
  },
  {
    name: "saxpy_f64", peer: "saxpy_f64", size: (s) => `${s.n} f64`, fn: saxpyF64, signature: `void(float64, ${D1}, ${D1}, ${D1})`,
    setup(k, s) {
      const x = Float64Array.from(units(s.n, 21)), y = Float64Array.from(units(s.n, 22));
      const dx = cuda.toDevice(x), dy = cuda.toDevice(y), dout = cuda.deviceArray(s.n, float64);
      return {
        launch: bind(k.configure(blocks(s.n, BLOCK), BLOCK), ALPHA, dx, dy, dout),
        check(us) {
          const out = dout.copyToHost() as Float64Array, w = new Worst();
          for (let i = 0; i < s.n; i++) { const want = ALPHA * x[i]! + y[i]!; w.see(out[i]!, want, want, i); }
          return w.result(us, 1e-15);
        },
      };
    },
  },
];

function matmulBench(name: string, fn: KernelBench["fn"], hotLoop: KernelBench["hotLoop"], options?: JitOptions): KernelBench {
  return {
    name, peer: name, hotLoop, size: (s) => `${s.mm}×${s.mm} f32`, fn, options, signature: `void(${F2}, ${F2}, ${F2})`,
    setup(k, s) {
      const n = s.mm, A = units(n * n, 5, 0.5), B = units(n * n, 6, 0.5);
      const mat = (data: Float32Array) => cuda.toDevice({ data, shape: [n, n], stride: [n, 1], offset: 0 });
      const dA = mat(A), dB = mat(B), dC = cuda.deviceArray([n, n], float32);
      return {
        launch: bind(k.configure([blocks(n, TPB), blocks(n, TPB)], [TPB, TPB]), dA, dB, dC),
        check(us) {
          const C = matrix(dC), w = new Worst();
          for (let t = 0; t < 256; t++) {
            const y = hash32(t, 11) % n, x = hash32(t, 12) % n;
            let dot = 0, mag = 0;
            for (let k2 = 0; k2 < n; k2++) { const p = A[y * n + k2]! * B[k2 * n + x]!; dot += p; mag += Math.abs(p); }
            w.see(C[y * n + x]!, dot, mag, y * n + x);
          }
          return w.result(us, 1e-5);
        },
      };
    },
  };
}

/** the normal CDF by Abramowitz–Stegun 26.2.17 (absolute error < 7.5e-8), in float64 */
function normalCdf(d: number): number {
  const k = 1 / (1 + 0.2316419 * Math.abs(d));
  const poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
  const tail = Math.exp(-0.5 * d * d) * poly / Math.sqrt(2 * Math.PI);
  return d > 0 ? 1 - tail : tail;
}

/** Black–Scholes call and put in float64 */
function blackScholesRef(s: number, x: number, t: number): { call: number; put: number } {
  const sqrtT = Math.sqrt(t);
  const d1 = (Math.log(s / x) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * sqrtT);
  const d2 = d1 - VOLATILITY * sqrtT;
  const expRT = Math.exp(-RISKFREE * t);
  const n1 = normalCdf(d1), n2 = normalCdf(d2);
  return { call: s * n1 - x * expRT * n2, put: x * expRT * (1 - n2) - s * (1 - n1) };
}

/** body i's acceleration in float64, and the sum of its terms' magnitudes (the scale of rounding errors) */
function nbodyRef(pos: Float32Array, i: number, n: number): { a: number[]; mag: number } {
  const a = [0, 0, 0];
  let mag = 0;
  for (let j = 0; j < n; j++) {
    const d = [0, 1, 2].map((c) => pos[4 * j + c]! - pos[4 * i + c]!);
    const r = Math.sqrt(d[0]! ** 2 + d[1]! ** 2 + d[2]! ** 2 + SOFTENING2);
    const f = pos[4 * j + 3]! / (r * r * r);
    for (let c = 0; c < 3; c++) { a[c]! += d[c]! * f; mag += Math.abs(d[c]! * f); }
  }
  return { a, mag };
}

function checkSum(us: number, got: number, x: Float32Array): Measured {
  let want = 0;
  for (const v of x) want += v;
  const w = new Worst();
  w.see(got, want, want, 0);
  return w.result(us, 1e-5);
}

const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e));

function benchKernels(s: Sizes): Record<string, Outcome> {
  const out: Record<string, Outcome> = {};
  for (const b of KERNELS) {
    try {
      const run = b.setup(cuda.jit(b.fn, b.options), s);
      const { us, hostUs } = kernelMicros(s, run.launch);
      out[b.name] = { ...run.check(us), hostUs };
    } catch (e) {
      out[b.name] = { error: errorText(e) };
    }
  }
  return out;
}

/**
 * Wall time of the first launch of a never-seen kernel: parse → IR → PTX → module load → launch → sync,
 * and how much of it the driver's JIT took (cuModuleLoadDataEx, timed by wrapping the bound function).
 */
function benchFirstLaunch(s: Sizes): Record<string, Outcome> {
  const out: Record<string, Outcome> = {};
  const load = cudaDriver();
  const api = load.ok ? (load.driver.api as unknown as Record<string, (...a: unknown[]) => number>) : undefined;
  const moduleLoad = api?.cuModuleLoadDataEx;
  let jitMs = 0;
  if (api && moduleLoad) api.cuModuleLoadDataEx = (...a) => { const t = performance.now(); try { return moduleLoad(...a); } finally { jitMs += performance.now() - t; } };
  try {
    for (const b of KERNELS.filter((k) => k.name !== "reduce_builtin")) {
      try {
        const run = b.setup(cuda.jit(b.fn, b.options), s);
        jitMs = 0;
        const t0 = performance.now();
        run.launch();
        cuda.synchronize();
        const ms = performance.now() - t0;
        const checked = run.check(ms * 1000);
        out[b.name] = { ...checked, us: ms * 1000, ...(api ? { jitUs: jitMs * 1000 } : {}) };
      } catch (e) {
        out[b.name] = { error: errorText(e) };
      }
    }
  } finally {
    if (api && moduleLoad) api.cuModuleLoadDataEx = moduleLoad;
  }
  return out;
}

// ---------------------------------------------------------------------------
// launch overhead: the rows of numba-cuda-mlir's launch_latency_ubench
// (eager signatures, float32 scalars, float32[::1] arrays, grid 1, block 1)

interface LaunchRow { name: string; label: string; published: { numba: number; mlir: number }; params: number; type: "float32" | "float32[::1]" | "" }

const LAUNCH_ROWS: readonly LaunchRow[] = [
  { name: "empty", label: "empty kernel", published: { numba: 4.1, mlir: 3.9 }, params: 0, type: "" },
  { name: "1_array", label: "1 array", published: { numba: 5.9, mlir: 3.0 }, params: 1, type: "float32[::1]" },
  { name: "16_scalars", label: "16 scalars", published: { numba: 15.5, mlir: 4.4 }, params: 16, type: "float32" },
  { name: "16_arrays", label: "16 arrays", published: { numba: 30.5, mlir: 12.5 }, params: 16, type: "float32[::1]" },
  { name: "256_scalars", label: "256 scalars", published: { numba: 179, mlir: 10.2 }, params: 256, type: "float32" },
];

function benchLaunch(s: Sizes): Record<string, number | { error: string }> {
  const out: Record<string, number | { error: string }> = {};
  for (const row of LAUNCH_ROWS) {
    try {
      const names = Array.from({ length: row.params }, (_, i) => `a${i}`);
      const fn = new Function(...names, "") as (...args: never[]) => void;
      const kernel = cuda.jit(fn, { signature: `void(${names.map(() => row.type).join(", ")})` });
      const args = names.map((_, i) => (row.type === "float32" ? i : cuda.deviceArray(1, float32)));
      const launch = kernel.configure(1, 1);
      for (let i = 0; i < s.warmup; i++) launch(...args);
      cuda.synchronize();
      const rounds: number[] = [];
      for (let r = 0; r < s.rounds; r++) {
        const t0 = performance.now();
        for (let i = 0; i < s.launches; i++) launch(...args);
        cuda.synchronize();
        rounds.push(((performance.now() - t0) * 1000) / s.launches);
      }
      out[row.name] = median(rounds);
    } catch (e) {
      out[row.name] = { error: errorText(e) };
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// graphs: 100 small launches captured once and launched as a graph, against the same 100 launched one
// by one (host wall time per 100, median of rounds; each round as many hundreds as the launch rows' launches)

const GRAPH_LAUNCHES = 100;

interface GraphRow { graphUs: number; oneByOneUs: number; ok: boolean; detail: string }

function benchGraph(s: Sizes): GraphRow | { error: string } {
  try {
    const bump = cuda.jit((y: Float32Array) => {
      const i = cuda.grid(1);
      if (i < y.length) y[i] += 1;
    }, { signature: "void(float32[::1])" });
    const stream = cuda.stream();
    const y = cuda.toDevice(new Float32Array(BLOCK), stream);
    const launch = bump.configure(1, BLOCK, stream);
    const hundred = () => { for (let i = 0; i < GRAPH_LAUNCHES; i++) launch(y); };
    const graph = stream.capture(hundred);
    const per = Math.max(1, Math.round(s.launches / GRAPH_LAUNCHES));
    const time = (run: () => void): number => {
      run();
      stream.synchronize();
      const rounds: number[] = [];
      for (let r = 0; r < s.rounds; r++) {
        const t0 = performance.now();
        for (let k = 0; k < per; k++) run();
        stream.synchronize();
        rounds.push(((performance.now() - t0) * 1000) / per);
      }
      return median(rounds);
    };
    const graphUs = time(() => graph.launch(stream));
    const oneByOneUs = time(hundred);
    const want = 2 * (s.rounds * per + 1) * GRAPH_LAUNCHES;
    const got = y.copyToHost();
    const ok = got.every((v) => v === want);
    graph.free();
    y.free();
    return { graphUs, oneByOneUs, ok, detail: ok ? "" : `y[0] = ${got[0]}, want ${want}` };
  } catch (e) {
    return { error: errorText(e) };
  }
}

// ---------------------------------------------------------------------------
// transfer bandwidth (GB/s = 1e9 bytes/s), median of 5 synchronous copies

function benchTransfer(s: Sizes): Record<string, number> | { error: string } {
  try {
    const bytes = s.mib * 2 ** 20;
    const dev = cuda.deviceArray(bytes, uint8);
    const pageable = new Uint8Array(bytes).fill(1);
    const pinned = cuda.pinnedArray(bytes, uint8) as Uint8Array;
    pinned.fill(1);
    const gbps = (copy: () => void) => {
      copy();
      const times: number[] = [];
      for (let r = 0; r < 5; r++) {
        const t0 = performance.now();
        copy();
        cuda.synchronize();
        times.push(performance.now() - t0);
      }
      return bytes / (median(times) / 1000) / 1e9;
    };
    const result = {
      h2d_pageable: gbps(() => dev.copyToDevice(pageable)),
      d2h_pageable: gbps(() => dev.copyToHost(pageable)),
      h2d_pinned: gbps(() => dev.copyToDevice(pinned)),
      d2h_pinned: gbps(() => dev.copyToHost(pinned)),
    };
    dev.free();
    return result;
  } catch (e) {
    return { error: errorText(e) };
  }
}

// ---------------------------------------------------------------------------
// compile time (source → PTX, in process) and ptxas -arch=sm_90, per kernel

interface CompileRow { firstMs: number; ms: number; ptxLines: number; ptxasMs: number | null; ptxasNote: string }

function hasTool(tool: string): boolean {
  return spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;
}

function benchCompile(): Record<string, CompileRow | { error: string }> {
  const out: Record<string, CompileRow | { error: string }> = {};
  const ptxas = hasTool("ptxas");
  const dir = mkdtempSync(join(tmpdir(), "numbats-bench-"));
  try {
    for (const b of KERNELS.filter((k) => k.name !== "reduce_builtin")) {
      try {
        const args = parseSignature(b.signature).args;
        let text = "";
        const times = Array.from({ length: 5 }, () => {
          const t0 = performance.now();
          const ir = compileToIR(b.fn, args, { env: b.options?.env, name: b.name, resolveDeviceFunction });
          text = emitPtx(ir).text;
          return performance.now() - t0;
        });
        const row: CompileRow = { firstMs: times[0]!, ms: median(times), ptxLines: text.split("\n").length, ptxasMs: null, ptxasNote: "ptxas not on PATH" };
        if (ptxas) {
          const file = join(dir, `${b.name}.ptx`);
          writeFileSync(file, text);
          const runs = Array.from({ length: 3 }, () => {
            const t0 = performance.now();
            const r = spawnSync("ptxas", ["-arch=sm_90", file, "-o", join(dir, `${b.name}.cubin`)], { encoding: "utf8" });
            if (r.status !== 0) throw new Error(`ptxas failed: ${r.stderr.trim().split("\n")[0]}`);
            return performance.now() - t0;
          });
          row.ptxasMs = median(runs);
          row.ptxasNote = "";
        }
        out[b.name] = row;
      } catch (e) {
        out[b.name] = { error: errorText(e) };
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

// ---------------------------------------------------------------------------
// the peers: each prints one JSON object, or fails with a reason

interface PeerReport {
  device?: string;
  kernels?: Record<string, Measured>;
  launch?: Record<string, number>;
  launch_mlir?: Record<string, number>;
  launch_mlir_missing?: string;
  transfer?: Record<string, number>;
  [key: string]: unknown;
}
type Peer = { ok: true; report: PeerReport; note: string } | { ok: false; reason: string };

const PEER_TIMEOUT_MS = 150_000;
const flags = (s: Sizes) => Object.entries(s).map(([k, v]) => `--${k}=${v}`);

/** The last JSON line of a peer's stdout, or why there is none. */
function peerOutput(what: string, r: ReturnType<typeof spawnSync>): Peer {
  if (r.error) return { ok: false, reason: `${what}: ${r.error.message}` };
  const stdout = String(r.stdout), stderr = String(r.stderr);
  const line = stdout.trim().split("\n").reverse().find((l) => l.startsWith("{"));
  if (line) {
    try {
      const report = JSON.parse(line) as PeerReport;
      if (typeof report.error === "string") return { ok: false, reason: `${what}: ${report.error}` };
      if (r.status === 0) return { ok: true, report, note: "" };
    } catch { /* reported below */ }
  }
  const tail = (stderr.trim() || stdout.trim()).split("\n").filter(Boolean).slice(-1)[0] ?? "no output";
  return { ok: false, reason: `${what} exited with ${r.status ?? r.signal}: ${tail}` };
}

function runNvccPeer(s: Sizes): Peer {
  if (!hasTool("nvcc")) return { ok: false, reason: "nvcc not on PATH" };
  const dir = mkdtempSync(join(tmpdir(), "numbats-nvcc-"));
  try {
    const exe = join(dir, "gpu_kernels");
    const src = join(HERE, "peers", "gpu_kernels.cu");
    let arch = "native";
    let built = spawnSync("nvcc", ["-O3", "-arch=native", "-o", exe, src], { encoding: "utf8" });
    if (built.status !== 0) {
      arch = "sm_90";
      built = spawnSync("nvcc", ["-O3", "-arch=sm_90", "-o", exe, src], { encoding: "utf8" });
    }
    if (built.status !== 0) return { ok: false, reason: `nvcc failed: ${(built.stderr || built.stdout).trim().split("\n")[0]}` };
    const peer = peerOutput("gpu_kernels", spawnSync(exe, flags(s), { encoding: "utf8", timeout: PEER_TIMEOUT_MS }));
    return peer.ok ? { ...peer, note: `nvcc -O3 -arch=${arch}` } : peer;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runNumbaPeer(s: Sizes): Peer {
  const python = process.env.PYTHON ?? "python3";
  const script = join(HERE, "peers", "numba_gpu.py");
  const peer = peerOutput(`${python} numba_gpu.py`, spawnSync(python, [script, ...flags(s)], { encoding: "utf8", timeout: PEER_TIMEOUT_MS }));
  if (!peer.ok) return peer;
  const r = peer.report;
  const version = [`numba ${r.numba}`, r.numba_cuda ? `numba-cuda ${r.numba_cuda}` : "", r.simulator ? "CUDA simulator" : ""].filter(Boolean).join(", ");
  return { ...peer, note: version };
}

// ---------------------------------------------------------------------------
// report

const fmt = (x: number, digits = 1) => (x >= 100 ? x.toFixed(0) : x.toFixed(digits));
const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(2)}×` : "—");

function cell(o: Outcome | undefined, unavailable = "n/a"): string {
  if (!o) return unavailable;
  if ("error" in o) return `error: ${o.error}`;
  const hostBound = o.hostUs !== undefined && o.hostUs > HOST_BOUND * o.us ? ` (host-bound: ${fmt(o.hostUs)} µs to enqueue)` : "";
  return (o.ok ? fmt(o.us) : `${fmt(o.us)} WRONG (${o.detail})`) + hostBound;
}
/** A time that counts: measured and checked. */
const valid = (o: Outcome | undefined) => (o && !("error" in o) && o.ok ? o.us : undefined);

const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

interface Results {
  sizes: Sizes;
  kernels?: Record<string, Outcome>;
  firstLaunch?: Record<string, Outcome>;
  launch?: Record<string, number | { error: string }>;
  transfer?: Record<string, number> | { error: string };
  graph?: GraphRow | { error: string };
  compile: Record<string, CompileRow | { error: string }>;
  nvcc?: Peer;
  numba?: Peer;
}

const KERNEL_GOAL = 1.1;
/** enqueue time / kernel time above which a kernel time is flagged as measuring the host */
const HOST_BOUND = 0.8;
const FIRST_LAUNCH_GOAL_MS = 30;

function peerKernels(p: Peer | undefined): Record<string, Measured> {
  return p?.ok ? p.report.kernels ?? {} : {};
}

function kernelSection(r: Results): string {
  const nv = peerKernels(r.nvcc), nb = peerKernels(r.numba);
  const rows = KERNELS.map((b) => {
    const ours = valid(r.kernels?.[b.name]), base = valid(nv[b.name]);
    const goal = b.name === "reduce_builtin" ? "— (no nvcc peer)" : ours === undefined || base === undefined ? "?" : ours <= KERNEL_GOAL * base ? "yes" : "no";
    return [b.name, b.size(r.sizes), cell(r.kernels?.[b.name]), cell(nv[b.name], r.nvcc?.ok ? "—" : "n/a"), cell(nb[b.name]), ratio(ours, base), ratio(ours, valid(nb[b.name])), goal];
  });
  return [
    `## Kernel time (µs per launch; CUDA events, median of ${r.sizes.reps} reps × ${r.sizes.batch} launches, device arrays)`,
    "",
    table(["kernel", "size", "ours µs", "nvcc µs", "Numba µs", "ours/nvcc", "ours/Numba", `goal ≤ ${KERNEL_GOAL}× nvcc`], rows),
  ].join("\n");
}

function launchSection(r: Results): string {
  const nb = r.numba?.ok ? r.numba.report.launch ?? {} : {};
  const nv = r.nvcc?.ok ? r.nvcc.report.launch ?? {} : {};
  const mlir = r.numba?.ok ? r.numba.report.launch_mlir : undefined;
  const rows = LAUNCH_ROWS.map((row) => {
    const o = r.launch?.[row.name];
    const ours = typeof o === "number" ? o : undefined;
    // The published figures come from a faster host CPU. Numba-CUDA, measured here in the same run,
    // gives the scale: numba-cuda-mlir's published figure × (Numba here / Numba published).
    const numbaHere = nb[row.name];
    const scaled = numbaHere === undefined ? undefined : row.published.mlir * (numbaHere / row.published.numba);
    const best = Math.min(scaled ?? row.published.mlir, mlir?.[row.name] ?? Infinity);
    const goal = ours === undefined ? "?" : ours < best ? "yes" : "no";
    const raw = ours === undefined ? "?" : ours < row.published.mlir ? "yes" : "no";
    const num = (v: number | undefined) => (v === undefined ? "n/a" : fmt(v, 2));
    return [row.label, typeof o === "object" ? `error: ${o.error}` : num(ours), num(nv[row.name]), num(numbaHere), mlir ? num(mlir[row.name]) : "n/a",
      fmt(row.published.numba), fmt(row.published.mlir), num(scaled), ratio(ours, numbaHere), goal, raw];
  });
  const mlirNote = r.numba?.ok && !mlir ? `\nnumba-cuda-mlir not measured: ${r.numba.report.launch_mlir_missing ?? "unknown"}` : "";
  return [
    `## Launch overhead (µs per launch, host wall time; grid 1, block 1; median of ${r.sizes.rounds} rounds × ${r.sizes.launches} launches + synchronize, after ${r.sizes.warmup} warm-up launches)`,
    "",
    table(["arguments", "ours", "CUDA C++ <<<>>> (this run)", "Numba-CUDA (this run)", "numba-cuda-mlir (this run)", "numba-cuda (published)", "numba-cuda-mlir (published)",
      "numba-cuda-mlir scaled to this host", "ours/Numba", "goal: ours < numba-cuda-mlir (scaled)", "ours < published figure"], rows),
    "",
    "Published: NVIDIA/numba-cuda-mlir tests/benchmarks/launch_latency_ubench (RTX PRO 6000 Blackwell, Ryzen 9 9950X). " +
      "Scaled = published numba-cuda-mlir × (Numba-CUDA this run / Numba-CUDA published): the two published columns were measured on one host, so their ratio carries over. " +
      "CUDA C++ is nvcc's runtime launching the same empty kernels (bench/peers/gpu_kernels.cu): the floor of this host and driver." + mlirNote,
  ].join("\n");
}

function firstLaunchSection(r: Results): string {
  const entries = Object.entries(r.firstLaunch ?? {});
  const ms = entries.flatMap(([, o]) => (valid(o) === undefined ? [] : [valid(o)! / 1000]));
  const rows = entries.map(([name, o]) => {
    const v = valid(o);
    const jit = "error" in o || o.jitUs === undefined ? ["n/a", "n/a"] : [fmt(o.jitUs / 1000, 2), fmt((o.us - o.jitUs) / 1000, 2)];
    return [name, "error" in o ? `error: ${o.error}` : o.ok ? fmt(o.us / 1000, 2) : `${fmt(o.us / 1000, 2)} WRONG (${o.detail})`, ...jit, v === undefined ? "?" : v / 1000 < FIRST_LAUNCH_GOAL_MS ? "yes" : "no"];
  });
  return [
    "## First launch of a new kernel (ms wall: parse → IR → PTX → module load → launch → synchronize; tiny arguments)",
    "",
    table(["kernel", "ms", "of which the driver's JIT (cuModuleLoadDataEx) ms", "the rest (ours: compile, load, launch) ms", `goal < ${FIRST_LAUNCH_GOAL_MS} ms`], rows),
    "",
    ms.length ? `median ${fmt(median(ms), 2)} ms, max ${fmt(Math.max(...ms), 2)} ms (the first row also pays the process's first use of the compiler and the driver's JIT)` : "no valid first launches",
  ].join("\n");
}

function compileSection(r: Results): string {
  const rows = Object.entries(r.compile).map(([name, o]) =>
    "error" in o ? [name, `error: ${o.error}`, "", "", ""] : [name, fmt(o.firstMs, 2), fmt(o.ms, 2), String(o.ptxLines), o.ptxasMs === null ? o.ptxasNote : fmt(o.ptxasMs, 1)]);
  return [
    "## Compile time (source → PTX in process: the first of 5 compiles, and their median) and `ptxas -arch=sm_90` (wall, median of 3)",
    "",
    table(["kernel", "first source → PTX ms", "median source → PTX ms", "PTX lines", "ptxas ms"], rows),
  ].join("\n");
}

const TRANSFERS = [["h2d_pageable", "H→D pageable"], ["d2h_pageable", "D→H pageable"], ["h2d_pinned", "H→D pinned"], ["d2h_pinned", "D→H pinned"]] as const;

function transferSection(r: Results): string {
  const ours = r.transfer && !("error" in r.transfer) ? r.transfer : {};
  const peer = (p: Peer | undefined) => (p?.ok ? p.report.transfer ?? {} : {});
  const nv = peer(r.nvcc), nb = peer(r.numba);
  const num = (v: number | undefined) => (v === undefined ? "n/a" : fmt(v, 2));
  const rows = TRANSFERS.map(([key, label]) => [label, num(ours[key]), num(nv[key]), num(nb[key]), ratio(ours[key], nv[key])]);
  const err = r.transfer && "error" in r.transfer ? `\nours: error: ${r.transfer.error}` : "";
  return [`## Transfer bandwidth (GB/s, ${r.sizes.mib} MiB, median of 5)`, "", table(["copy", "ours", "nvcc", "Numba", "ours/nvcc"], rows) + err].join("\n");
}

function graphSection(r: Results): string {
  const g = r.graph;
  const body = !g ? "not run" : "error" in g ? `error: ${g.error}` : table(["100 launches of a 1-block kernel", "µs"], [
    ["as one graph (g.launch)", fmt(g.graphUs, 2)],
    ["one by one (configured launcher)", fmt(g.oneByOneUs, 2)],
    ["one by one / graph", ratio(g.oneByOneUs, g.graphUs)],
  ]) + (g.ok ? "" : `\nWRONG: ${g.detail}`);
  return [`## Graphs (µs per 100 launches, host wall time + synchronize; median of ${r.sizes.rounds} rounds)`, "", body].join("\n");
}

function peerLines(r: Results): string {
  const line = (name: string, p: Peer | undefined) =>
    !p ? `- ${name}: not run` : p.ok ? `- ${name}: ${p.note}${p.report.device ? ` on ${p.report.device}` : ""}` : `- ${name}: n/a — ${p.reason}`;
  return ["## Peers", "", line("CUDA C++", r.nvcc), line("Numba-CUDA", r.numba)].join("\n");
}

// ---------------------------------------------------------------------------

function main(): void {
  let target: "cuda" | "sim" | "none" = "none";
  let reason = "";
  let device = "";
  try {
    const info = currentTargetInfo();
    device = info.device.name;
    reason = info.reason;
    // auto falling back to the simulator counts as no GPU; an explicit sim request runs everything there
    target = info.target === "cuda" ? "cuda" : info.requested === "sim" ? "sim" : "none";
  } catch (e) {
    reason = (e as Error).message;
  }
  const sizes = TINY || target === "sim" ? SMALL : FULL;
  const header = [`# numbats GPU benchmark`, "", `${new Date().toISOString()} · node ${process.version} · ${TINY ? "--tiny sizes" : "full sizes"}`];
  let results: Results;

  if (target === "none") {
    header.push("", `**No GPU: ${reason.split("\n")[0]}.** Kernel, launch, first-launch and transfer figures need one; reporting compile and ptxas times only.`);
    results = { sizes, compile: benchCompile() };
  } else {
    header.push("", target === "cuda" ? `Device: ${device}` : `**Simulator run** (${reason}): a check that every kernel runs and validates; the times mean nothing.`);
    const firstLaunch = benchFirstLaunch(SMALL);
    const kernels = benchKernels(sizes);
    const launch = benchLaunch(sizes);
    const transfer = benchTransfer(sizes);
    const graph = benchGraph(sizes);
    const compile = benchCompile();
    results = { sizes, kernels, firstLaunch, launch, transfer, graph, compile, nvcc: runNvccPeer(sizes), numba: runNumbaPeer(sizes) };
  }

  const sections = results.kernels
    ? [kernelSection(results), launchSection(results), firstLaunchSection(results), transferSection(results), graphSection(results), compileSection(results), peerLines(results)]
    : [compileSection(results)];
  const markdown = [header.join("\n"), ...sections].join("\n\n") + "\n";
  process.stdout.write(markdown);

  const outDir = resolve(process.env.BENCH_OUT ?? join(HERE, "out"));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "gpu.md"), markdown);
  writeFileSync(join(outDir, "gpu.json"), JSON.stringify({ date: new Date().toISOString(), node: process.version, target, reason, device, tiny: TINY, ...results }, null, 2) + "\n");
  process.stdout.write(`\nwritten: ${join(outDir, "gpu.md")}, ${join(outDir, "gpu.json")}\n`);

  const failed = [...Object.entries(results.kernels ?? {}), ...Object.entries(results.firstLaunch ?? {}), ...(results.graph ? [["graph", results.graph] as const] : [])]
    .filter(([, o]) => "error" in o || !o.ok);
  if (failed.length) {
    process.stderr.write(`our kernels failed: ${failed.map(([n]) => n).join(", ")}\n`);
    process.exitCode = 1;
  }
}

// bench/static.ts imports the kernel table; run only as a script
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
