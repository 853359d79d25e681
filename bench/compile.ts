// Compile time per example-style kernel (bench/README.md): the front end
// (source → typed IR), the JS target (IR → JS, made into a runnable
// function), the PTX target (IR → PTX text), and `ptxas -arch=sm_90` on that
// PTX when ptxas is on the PATH. Median of REPS runs after WARMUP (the source
// parsed once and kept: a new specialisation), and a never-compiled kernel's
// one compile in a child process, first in it or after the other kernels; and, for the math-heavy
// kernels, the first launch in a new process with the on-disk cache (`cache: true`) holding the kernel
// against the same launch without the cache, on the current target (NUMBATS_TARGET); `--cache-only`
// measures only that. Prints tables, then the figures as JSON.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cuda, float32, int32, type Kernel, type KernelArray2 } from "../dist/src/index.js";
import { compileToIR } from "../dist/src/compiler/index.js";
import type { FunctionIR } from "../dist/src/compiler/ir.js";
import { parseSignature } from "../dist/src/dtypes.js";
import { resolveDeviceFunction } from "../dist/src/device-functions.js";
import { compileSim } from "../dist/src/backends/sim/runtime/sim-kernel.js";
import { emitPtx } from "../dist/src/backends/cuda/ptx/index.js";

const WARMUP = 5;
const REPS = 21;
const PTXAS_REPS = 5;
const CHILD_REPS = 5;
const GOAL_MS = 5;
/** how many times faster the first launch in a new process should be with the kernel in the on-disk cache */
const CACHE_GOAL = 5;
const TPB = 16;
const BINS = 64;

// ---------------------------------------------------------------------------
// the kernels, as the examples write them

const vectorAdd = cuda.jit((a: Float32Array, b: Float32Array, c: Float32Array) => {
  const i = cuda.grid(1);
  if (i < c.length) c[i] = a[i] + b[i];
});

const tiledMatmul = cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  const sA = cuda.shared.array([TPB, TPB], float32);
  const sB = cuda.shared.array([TPB, TPB], float32);
  const [x, y] = cuda.grid(2);
  const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
  let tmp = float32(0);
  for (let i = 0; i < cuda.gridDim.x; i++) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    if (y < A.shape[0] && tx + i * TPB < A.shape[1]) sA[ty][tx] = A[y][tx + i * TPB];
    if (x < B.shape[1] && ty + i * TPB < B.shape[0]) sB[ty][tx] = B[ty + i * TPB][x];
    cuda.syncthreads();
    for (let j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
    cuda.syncthreads();
  }
  if (y < C.shape[0] && x < C.shape[1]) C[y][x] = tmp;
}, { env: { TPB } });

/** Each row of a matrix scaled to unit length: a block per row, a shared-memory tree sum. */
const normalise = cuda.jit((m: KernelArray2<number>) => {
  const partial = cuda.shared.array(256, float32);
  const row = cuda.blockIdx.x, t = cuda.threadIdx.x;
  let s = float32(0);
  for (let j = t; j < m.shape[1]; j += cuda.blockDim.x) s += m[row][j] * m[row][j];
  partial[t] = s;
  cuda.syncthreads();
  for (let stride = cuda.blockDim.x >> 1; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    cuda.syncthreads();
  }
  const inv = 1.0 / Math.sqrt(partial[0]);
  for (let j = t; j < m.shape[1]; j += cuda.blockDim.x) m[row][j] *= inv;
});

const histogram = cuda.jit((data: Uint8Array, hist: Int32Array) => {
  const local = cuda.shared.array(BINS, int32);
  const t = cuda.threadIdx.x;
  if (t < BINS) local[t] = 0;
  cuda.syncthreads();
  for (let i = cuda.grid(1); i < data.length; i += cuda.gridsize(1)) cuda.atomic.add(local, data[i] % BINS, 1);
  cuda.syncthreads();
  if (t < BINS) cuda.atomic.add(hist, t, local[t]);
}, { env: { BINS } });

const mandelbrot = cuda.jit((image: KernelArray2<number>, minX: number, maxX: number, minY: number, maxY: number, iters: number) => {
  const [x, y] = cuda.grid(2);
  const height = image.shape[0], width = image.shape[1];
  if (x >= width || y >= height) return;
  const cr = minX + (x * (maxX - minX)) / width;
  const ci = minY + (y * (maxY - minY)) / height;
  let zr = 0.0, zi = 0.0, n = 0;
  while (n < iters && zr * zr + zi * zi <= 4.0) {
    const t = zr * zr - zi * zi + cr;
    zi = 2.0 * zr * zi + ci;
    zr = t;
    n++;
  }
  image[y][x] = n;
});

const expSin = cuda.jit((x: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < x.length) out[i] = Math.exp(-x[i] * x[i]) * Math.sin(3.0 * x[i]);
});

// five float32 transcendentals per element (bench/gpu.ts's math_f32)
const mathF32 = cuda.jit((x: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < out.length) {
    const v = x[i];
    out[i] = Math.exp(v) + Math.log(v + 1) * Math.sin(v) + Math.cos(v) * Math.tanh(v);
  }
});

// Black–Scholes call and put (bench/gpu.ts's black_scholes)
const RISKFREE = 0.02, VOLATILITY = 0.3;
const cnd = cuda.jit((d: number) => {
  const k = 1 / (1 + 0.2316419 * Math.abs(d));
  const c = 0.3989422804014327 * Math.exp(-0.5 * d * d) *
    (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
  return d > 0 ? 1 - c : c;
}, { device: true });
const blackScholes = cuda.jit((price: Float32Array, strike: Float32Array, years: Float32Array, call: Float32Array, put: Float32Array) => {
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
}, { env: { cnd, RISKFREE, VOLATILITY } });

const KERNELS: readonly [string, Kernel, string][] = [
  ["vector add", vectorAdd, "void(float32[::1], float32[::1], float32[::1])"],
  ["tiled matmul", tiledMatmul, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"],
  ["normalise rows", normalise, "void(float32[:, ::1])"],
  ["histogram", histogram, "void(uint8[::1], int32[::1])"],
  ["mandelbrot", mandelbrot, "void(uint8[:, ::1], float64, float64, float64, float64, int32)"],
  ["Math.exp/sin", expSin, "void(float32[::1], float32[::1])"],
  ["math_f32", mathF32, "void(float32[::1], float32[::1])"],
  ["Black–Scholes", blackScholes, "void(float32[::1], float32[::1], float32[::1], float32[::1], float32[::1])"],
];

/** The math-heavy kernels (all of float32 arrays) whose first launch in a new process is timed with and without the cache. */
const FIRST_LAUNCH = ["Math.exp/sin", "math_f32", "Black–Scholes"];

// ---------------------------------------------------------------------------

function median(times: number[]): number {
  const s = [...times].sort((p, q) => p - q);
  return s[s.length >> 1]!;
}

/** Median ms of `fn` over REPS runs after WARMUP, and its last result. */
function time<T>(fn: () => T, reps = REPS, warmup = WARMUP): { ms: number; result: T } {
  let result = fn();
  for (let i = 1; i < warmup; i++) result = fn();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    result = fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), result };
}

const hasPtxas = spawnSync("ptxas", ["--version"], { stdio: "ignore" }).status === 0;

function ptxasMs(ptx: string, dir: string): number {
  const file = join(dir, "k.ptx");
  writeFileSync(file, ptx);
  return time(() => {
    const r = spawnSync("ptxas", ["-arch=sm_90", file, "-o", join(dir, "k.cubin")], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ptxas rejected the PTX:\n${r.stderr}`);
  }, PTXAS_REPS, 1).ms;
}

/** One compile of a never-compiled kernel, timed in a child process. */
interface NewKernel { sourceToJs_ms: number; sourceToPtx_ms: number }
interface Row {
  kernel: string; frontEnd_ms: number; js_ms: number; ptx_ms: number; ptxas_ms: number | null; sourceToJs_ms: number; ptxInstrs: number;
  /** the process's first compile: nothing cached, the compiler's own code not yet compiled and optimised by V8 */
  first: NewKernel;
  /** a new kernel in a process that has compiled the other kernels: what each later kernel of a program pays */
  later: NewKernel;
}

const lowerKernel = (kernel: Kernel, sig: string) =>
  compileToIR(kernel.fn, parseSignature(sig).args, { ...kernel.options, name: kernel.name, resolveDeviceFunction });

/** Child mode (`--new INDEX [--after-others]`): kernel INDEX's first compile, printed as JSON. */
function measureNewKernel(index: number, afterOthers: boolean): void {
  if (afterOthers) KERNELS.forEach(([, kernel, sig], i) => { if (i !== index) emitPtx(lowerKernel(kernel, sig)); });
  const [, kernel, sig] = KERNELS[index]!;
  const t0 = performance.now();
  const ir = lowerKernel(kernel, sig);
  const t1 = performance.now();
  compileSim(ir);
  const t2 = performance.now();
  emitPtx(ir);
  const t3 = performance.now();
  console.log(JSON.stringify({ sourceToJs_ms: t2 - t0, sourceToPtx_ms: t1 - t0 + (t3 - t2) } satisfies NewKernel));
}

/** Medians over CHILD_REPS child processes. */
function newKernelInChild(index: number, afterOthers: boolean): NewKernel {
  const args = [...process.execArgv, fileURLToPath(import.meta.url), "--new", String(index), ...(afterOthers ? ["--after-others"] : [])];
  const runs: NewKernel[] = [];
  for (let i = 0; i < CHILD_REPS; i++) {
    const r = spawnSync(process.execPath, args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`compile of kernel ${index} in a child process failed:\n${r.stderr}`);
    runs.push(JSON.parse(r.stdout.trim().split("\n").at(-1)!) as NewKernel);
  }
  return { sourceToJs_ms: median(runs.map((r) => r.sourceToJs_ms)), sourceToPtx_ms: median(runs.map((r) => r.sourceToPtx_ms)) };
}

// ---------------------------------------------------------------------------
// the first launch in a new process, with and without the on-disk cache

/** CPU time this process has used (all its threads), in ms. */
const cpuMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

/**
 * Child mode (`--first-launch INDEX`): kernel INDEX made with `cache` as BENCH_CACHE says, launched once
 * (256 threads); prints its wall-clock ms and the CPU ms the process used meanwhile (steadier on a
 * loaded machine, where the wall clock mostly measures waiting for a core).
 */
function measureFirstLaunch(index: number): void {
  const [, kernel] = KERNELS[index]!;
  const k = cuda.jit(kernel.fn, { ...kernel.options, name: kernel.name, cache: process.env.BENCH_CACHE === "1" });
  const args = Array.from({ length: kernel.fn.length }, (_, j) => Float32Array.from({ length: 256 }, (_, i) => 0.5 + (i + j) / 256));
  const c0 = cpuMs(), t0 = performance.now();
  k.configure(4, 64)(...args);
  const ms = performance.now() - t0, cpu_ms = cpuMs() - c0;
  console.log(JSON.stringify({ ms, cpu_ms }));
}

interface FirstLaunch { kernel: string; uncached_ms: number; cached_ms: number; ratio: number; uncached_cpu_ms: number; cached_cpu_ms: number; cpu_ratio: number }

/**
 * Medians over CHILD_REPS child processes of kernel INDEX's first launch: uncached, and with the kernel
 * in the cache (the two alternate, so that a change in the machine's load falls on both).
 */
function firstLaunch(index: number): FirstLaunch {
  const cacheDir = mkdtempSync(join(os.tmpdir(), "numbats-bench-cache-"));
  const launch = (cache: boolean) => {
    const args = [...process.execArgv, fileURLToPath(import.meta.url), "--first-launch", String(index)];
    const r = spawnSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, BENCH_CACHE: cache ? "1" : "0", NUMBATS_CACHE_DIR: cacheDir } });
    if (r.status !== 0) throw new Error(`the first launch of kernel ${index} in a child process failed:\n${r.stderr}`);
    return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { ms: number; cpu_ms: number };
  };
  try {
    launch(true); // fills the cache
    if (readdirSync(cacheDir).length !== 1) throw new Error(`kernel ${index} was not cached on this target`);
    const runs = Array.from({ length: CHILD_REPS }, () => [launch(false), launch(true)] as const);
    const uncached = median(runs.map(([u]) => u.ms)), cached = median(runs.map(([, c]) => c.ms));
    const uncachedCpu = median(runs.map(([u]) => u.cpu_ms)), cachedCpu = median(runs.map(([, c]) => c.cpu_ms));
    return {
      kernel: KERNELS[index]![0], uncached_ms: uncached, cached_ms: cached, ratio: uncached / cached,
      uncached_cpu_ms: uncachedCpu, cached_cpu_ms: cachedCpu, cpu_ratio: uncachedCpu / cachedCpu,
    };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

function measure(index: number, dir: string): Row {
  const [name, kernel, sig] = KERNELS[index]!;
  const frontEnd = time(() => lowerKernel(kernel, sig));
  const ir: FunctionIR = frontEnd.result;
  const js = time(() => compileSim(ir));
  const ptx = time(() => emitPtx(ir).text);
  return {
    kernel: name,
    frontEnd_ms: frontEnd.ms,
    js_ms: js.ms,
    ptx_ms: ptx.ms,
    ptxas_ms: hasPtxas ? ptxasMs(ptx.result, dir) : null,
    sourceToJs_ms: frontEnd.ms + js.ms,
    ptxInstrs: ptx.result.split("\n").filter((l) => /^\t[a-z@]/.test(l)).length,
    first: newKernelInChild(index, false),
    later: newKernelInChild(index, true),
  };
}

function main(cacheOnly: boolean): void {
  const dir = mkdtempSync(join(os.tmpdir(), "numbats-bench-compile-"));
  let rows: Row[];
  try {
    rows = cacheOnly ? [] : KERNELS.map((_, index) => measure(index, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const launches = FIRST_LAUNCH.map((name) => firstLaunch(KERNELS.findIndex(([n]) => n === name)));
  const f = (ms: number | null) => (ms === null ? "—" : ms.toFixed(3));
  console.log(`numbats compile time — ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}`);
  if (!cacheOnly) {
    console.log(`warm: median of ${REPS} after ${WARMUP} warm-up runs (ptxas: median of ${PTXAS_REPS}, process start included)${hasPtxas ? "" : "; ptxas not on PATH"}`);
    console.log("  (the kernel's source already parsed: what a new specialisation of a kernel costs)");
    console.log(`new kernel: one compile in a child process, as the process's first compile or after the other kernels; median of ${CHILD_REPS} processes\n`);
  }
  const table = [["kernel", "front end ms", "JS target ms", "source→JS ms", "PTX target ms", "ptxas sm_90 ms", "PTX instrs",
    "first: src→JS", "first: src→PTX", "later: src→JS", "later: src→PTX", `goal src→JS < ${GOAL_MS} ms (later)`]];
  for (const r of rows) {
    table.push([r.kernel, f(r.frontEnd_ms), f(r.js_ms), f(r.sourceToJs_ms), f(r.ptx_ms), f(r.ptxas_ms), String(r.ptxInstrs),
      f(r.first.sourceToJs_ms), f(r.first.sourceToPtx_ms), f(r.later.sourceToJs_ms), f(r.later.sourceToPtx_ms),
      r.later.sourceToJs_ms < GOAL_MS ? "met" : "MISSED"]);
  }
  if (!cacheOnly) printTable(table);
  const target = process.env.NUMBATS_TARGET ?? "auto";
  console.log(`\nfirst launch in a new process (NUMBATS_TARGET=${target}; compile or cache load + launch of 256 threads), median of ${CHILD_REPS} processes of each, alternating; wall clock and the process's CPU time:\n`);
  const verdict = (ratio: number) => `${ratio.toFixed(1)}× ${ratio >= CACHE_GOAL ? "met" : "MISSED"}`;
  printTable([["kernel", "uncached ms", "cached ms", `cached faster (goal ≥ ${CACHE_GOAL}×)`, "uncached CPU ms", "cached CPU ms", "CPU: cached faster"],
    ...launches.map((l) => [l.kernel, f(l.uncached_ms), f(l.cached_ms), verdict(l.ratio), f(l.uncached_cpu_ms), f(l.cached_cpu_ms), verdict(l.cpu_ratio)])]);
  console.log(`\n${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, goalSourceToJs_ms: GOAL_MS, kernels: rows, firstLaunch: { target, goal: CACHE_GOAL, kernels: launches } }, null, 2)}`);
}

function printTable(table: readonly string[][]): void {
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  for (const r of table) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join("  ").trimEnd());
}

const newFlag = process.argv.indexOf("--new");
const launchFlag = process.argv.indexOf("--first-launch");
if (newFlag >= 0) measureNewKernel(Number(process.argv[newFlag + 1]), process.argv.includes("--after-others"));
else if (launchFlag >= 0) measureFirstLaunch(Number(process.argv[launchFlag + 1]));
else main(process.argv.includes("--cache-only"));
