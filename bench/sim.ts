// The simulator against its peers, side by side in one run (bench/README.md):
//   - Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): a 16,384-thread float32
//     vector add and Numba's documented 64×64 shared-memory tiled matmul;
//   - gpu.js in CPU mode: adding two 1M-element Float32Arrays;
//   - ourselves on 1 worker against N (NUMBATS_SIM_WORKERS, N = the available cores):
//     the 2^20 vector add on device arrays and the tiled matmul at 512², same bits required.
// The peer figures are warm launches from host arrays (copy-in/copy-out included).
// Then the simulator against itself, on device arrays (no copies): the tiled
// matmul at 256² against the same algorithm written by hand as barrier phases
// (plain loops over a block's threads), and the kernels whose bounds checks
// the loop conditions prove (vector add 2^20, naive matmul 256²); and those
// three under NUMBATS_SANITIZE=all against plain.
// Prints the tables, then the figures as JSON.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import os from "node:os";
import { cuda, float32, ndarray, type KernelArray2 } from "../dist/src/index.js";
import { setSimChecks } from "../dist/src/backends/sim/runtime/sanitize.js";
import { WORKER_MARK } from "../dist/src/backends/sim/runtime/sim-chunks.js";
import { simWorkersReady, simWorkerStats, simWorkerTimeline, simWorkerTuning, type LaunchTimeline } from "../dist/src/backends/sim/runtime/sim-workers.js";
import { fma32 } from "../dist/src/backends/sim/js/index.js";

const PEERS_DIR = fileURLToPath(new URL("./peers/", import.meta.url));
const PYTHON = "/usr/bin/python3";
const REPS = 15;

const VADD_N = 16384;
const BLOCK = 256;
const TPB = 16;
const MATMUL_N = 64;
const BIG_N = 1 << 20;
const BIG_MATMUL_N = 512;
const WORKERS = os.availableParallelism();
const SELF_MATMUL_N = 256;

// ---------------------------------------------------------------------------
// our kernels (the same source as the Numba peer, bench/peers/numba_sim.py)

const vadd = cuda.jit((a: Float32Array, b: Float32Array, c: Float32Array) => {
  const i = cuda.grid(1);
  if (i < c.length) c[i] = a[i] + b[i];
});

const fastMatmul = cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
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
}, { env: { TPB } });

const naiveMatmul = cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
  const [x, y] = cuda.grid(2);
  if (y < C.shape[0] && x < C.shape[1]) {
    let tmp = float32(0);
    for (let k = 0; k < A.shape[1]; k++) tmp += A[y][k] * B[k][x];
    C[y][x] = tmp;
  }
});

/**
 * fastMatmul written by hand the way the simulator runs it as phases: per block, one loop over the
 * block's threads for the loads, one for the products (each thread's `tmp` kept in an array between
 * them), with the kernel's fused multiply-add; no bounds checks. The yardstick for the generated code.
 */
function handPhasesMatmul(A: Float32Array, B: Float32Array, C: Float32Array, n: number): void {
  const bpg = Math.ceil(n / TPB), nt = TPB * TPB;
  const tmp = new Float64Array(nt);
  for (let by = 0; by < bpg; by++) for (let bx = 0; bx < bpg; bx++) {
    const sA = new Float32Array(nt), sB = new Float32Array(nt);
    tmp.fill(0);
    for (let i = 0; i < bpg; i++) {
      for (let ty = 0; ty < TPB; ty++) for (let tx = 0; tx < TPB; tx++) {
        const x = bx * TPB + tx, y = by * TPB + ty;
        sA[ty * TPB + tx] = y < n && tx + i * TPB < n ? A[y * n + tx + i * TPB]! : 0;
        sB[ty * TPB + tx] = x < n && ty + i * TPB < n ? B[(ty + i * TPB) * n + x]! : 0;
      }
      for (let ty = 0, t = 0; ty < TPB; ty++) for (let tx = 0; tx < TPB; tx++, t++) {
        let acc = tmp[t]!;
        for (let j = 0; j < TPB; j++) acc = fma32(sA[ty * TPB + j]!, sB[j * TPB + tx]!, acc);
        tmp[t] = acc;
      }
    }
    for (let ty = 0, t = 0; ty < TPB; ty++) for (let tx = 0; tx < TPB; tx++, t++) {
      const x = bx * TPB + tx, y = by * TPB + ty;
      if (y < n && x < n) C[y * n + x] = tmp[t]!;
    }
  }
}

// ---------------------------------------------------------------------------
// timing and checks

/** Median wall time of `run` in ms, after one warm-up call. */
function medianMs(run: () => void, reps = REPS): number {
  run();
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  times.sort((p, q) => p - q);
  return times[reps >> 1]!;
}

/** Median wall times of `a` and `b` in ms, run alternately (a shared machine's load then weighs on both alike). */
function pairedMedianMs(a: () => void, b: () => void, reps: number): [number, number] {
  a(); b();
  const ta: number[] = [], tb: number[] = [];
  for (let r = 0; r < reps; r++) {
    for (const [run, times] of (r % 2 ? [[a, ta], [b, tb]] : [[b, tb], [a, ta]]) as [() => void, number[]][]) {
      const t0 = performance.now();
      run();
      times.push(performance.now() - t0);
    }
  }
  const median = (xs: number[]) => xs.sort((p, q) => p - q)[reps >> 1]!;
  return [median(ta), median(tb)];
}

function check(what: string, ok: boolean): void {
  if (!ok) throw new Error(`bench/sim: ${what} computed a wrong result`);
}

const sameAs = (got: ArrayLike<number>, want: ArrayLike<number>) =>
  got.length === want.length && Array.prototype.every.call(got, (v: number, i: number) => v === want[i]);

/** Integer-valued inputs keep every sum exact, so results compare with `===` on every peer. */
const pattern = (n: number, mod: number) => Float32Array.from({ length: n }, (_, i) => i % mod);

function hostMatmul(A: Float32Array, B: Float32Array, n: number): Float32Array {
  const C = new Float32Array(n * n);
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) {
    let t = 0;
    for (let k = 0; k < n; k++) t += A[y * n + k]! * B[k * n + x]!;
    C[y * n + x] = t;
  }
  return C;
}

function oursVadd(n: number): number {
  const a = pattern(n, 1000), b = pattern(n, 7), c = new Float32Array(n);
  const ms = medianMs(() => vadd.configure(Math.ceil(n / BLOCK), BLOCK)(a, b, c));
  check(`vector add (${n})`, sameAs(c, a.map((v, i) => v + b[i]!)));
  return ms;
}

function oursMatmul(): number {
  const n = MATMUL_N, blocks = Math.ceil(n / TPB);
  const a = pattern(n * n, 7), b = pattern(n * n, 5);
  const A = ndarray(a, [n, n]), B = ndarray(b, [n, n]), C = ndarray(new Float32Array(n * n), [n, n]);
  const ms = medianMs(() => fastMatmul.configure([blocks, blocks], [TPB, TPB])(A, B, C));
  check("tiled matmul", sameAs(C.data as Float32Array, hostMatmul(a, b, n)));
  return ms;
}

/**
 * The simulator against itself on device arrays: kernel launches only, results checked once. On one
 * worker (the calling thread), as the hand-written version runs: the worker rows below measure cores.
 */
function selfRows(): { tiled256_ms: number; hand256_ms: number; vadd1m_device_ms: number; naive256_ms: number } {
  process.env.NUMBATS_SIM_WORKERS = "1";
  try {
    return selfRowsInline();
  } finally {
    delete process.env.NUMBATS_SIM_WORKERS;
  }
}

function selfRowsInline(): { tiled256_ms: number; hand256_ms: number; vadd1m_device_ms: number; naive256_ms: number } {
  const n = SELF_MATMUL_N, blocks = Math.ceil(n / TPB);
  const a = pattern(n * n, 7), b = pattern(n * n, 5), want = hostMatmul(a, b, n);
  const dA = cuda.toDevice(ndarray(a, [n, n])), dB = cuda.toDevice(ndarray(b, [n, n]));
  const dC = cuda.deviceArray([n, n], float32);
  const hc = new Float32Array(n * n);
  const [tiled256, hand256] = pairedMedianMs(() => fastMatmul.configure([blocks, blocks], [TPB, TPB])(dA, dB, dC),
    () => handPhasesMatmul(a, b, hc, n), 7);
  check("tiled matmul 256²", sameAs(dC.copyToHost().data as Float32Array, want));
  check("hand-written phases matmul 256²", sameAs(hc, want));
  const naive256 = medianMs(() => naiveMatmul.configure([blocks, blocks], [TPB, TPB])(dA, dB, dC), 5);
  check("naive matmul 256²", sameAs(dC.copyToHost().data as Float32Array, want));

  const va = pattern(BIG_N, 1000), vb = pattern(BIG_N, 7);
  const dva = cuda.toDevice(va), dvb = cuda.toDevice(vb), dvc = cuda.deviceArrayLike(va);
  const vadd1m = medianMs(() => vadd.configure(Math.ceil(BIG_N / BLOCK), BLOCK)(dva, dvb, dvc));
  check("vector add 2^20 on device arrays", sameAs(dvc.copyToHost(), va.map((v, i) => v + vb[i]!)));
  return { tiled256_ms: tiled256, hand256_ms: hand256, vadd1m_device_ms: vadd1m, naive256_ms: naive256 };
}

/**
 * The self rows' kernels with every sanitizer tool against plain, alternate runs on device arrays in the
 * calling thread (the sanitizer always runs there): [plain, sanitized] ms per kernel, wall time, then
 * CPU time (the process's: on a loaded machine a launch waits for a core, which CPU time leaves out).
 * The arrays are allocated with the sanitizer on, as under NUMBATS_SANITIZE=all: initcheck tracks them.
 */
function sanitizedSelfRows(): Record<"tiled256" | "naive256" | "vadd1m_device", [number, number, number, number]> {
  const n = SELF_MATMUL_N, blocks = Math.ceil(n / TPB);
  const sanitizing = <T>(f: () => T) => (): T => {
    setSimChecks({ tools: "all" });
    try { return f(); } finally { setSimChecks(undefined); }
  };
  const [dA, dB, dC, dva, dvc] = sanitizing(() => {
    const va = pattern(BIG_N, 1000);
    return [cuda.toDevice(ndarray(pattern(n * n, 7), [n, n])), cuda.toDevice(ndarray(pattern(n * n, 5), [n, n])), cuda.deviceArray([n, n], float32), cuda.toDevice(va), cuda.deviceArrayLike(va)];
  })();
  const cpuTimed = (launch: () => void, ms: number[]) => () => {
    const c0 = process.cpuUsage();
    launch();
    const c = process.cpuUsage(c0);
    ms.push((c.user + c.system) / 1000);
  };
  const median = (xs: number[]) => xs.slice(1).sort((p, q) => p - q)[(xs.length - 1) >> 1]!; // the warm-up left out
  const paired = (launch: () => void, reps: number): [number, number, number, number] => {
    const cpuPlain: number[] = [], cpuSanitized: number[] = [];
    const [plain, sanitized] = pairedMedianMs(cpuTimed(launch, cpuPlain), cpuTimed(sanitizing(launch), cpuSanitized), reps);
    return [plain, sanitized, median(cpuPlain), median(cpuSanitized)];
  };
  process.env.NUMBATS_SIM_WORKERS = "1";
  try {
    return {
      tiled256: paired(() => fastMatmul.configure([blocks, blocks], [TPB, TPB])(dA, dB, dC), 5),
      naive256: paired(() => naiveMatmul.configure([blocks, blocks], [TPB, TPB])(dA, dB, dC), 5),
      vadd1m_device: paired(() => vadd.configure(Math.ceil(BIG_N / BLOCK), BLOCK)(dva, dva, dvc), 7),
    };
  } finally {
    delete process.env.NUMBATS_SIM_WORKERS;
    sanitizing(() => { for (const d of [dA, dB, dC, dva, dvc]) d.free(); })();
  }
}

// ---------------------------------------------------------------------------
// 1 worker against N: device arrays, so the rows time the kernel, not the copies

/** Per launch: wall ms (median, best) and the process's CPU ms (all threads); on N workers also what sim-workers.ts counts. */
interface WorkerFigures {
  wallMs: number;
  bestMs: number;
  cpuMs: number;
  /** post to a worker's join, per joined worker-launch */
  handOutMs?: number;
  /** the calling thread's share of the chunks */
  callerShare?: number;
  /** launches withdrawn from a worker that had not joined when the caller took the last chunk */
  withdrawn?: number;
  /** launches where a joined worker held the caller up, and launches run in the calling thread after them */
  stalls?: number;
  backedOff?: number;
}

const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[xs.length >> 1]!;

/**
 * `launch(side)` in alternate rounds of `perRound` launches a side (a shared machine's load weighs on both
 * alike), after a round of each not kept; `enter` sets each round up. A round of several launches starts
 * with one more, not timed: a launch right after the other side's round is not warm (its worker has gone
 * to sleep), and a loop of launches pays that once, not once in ten. Wall ms per kept launch, and the
 * process's CPU ms per launch of each kept round, per side.
 */
function alternateRounds(launch: (side: 0 | 1) => void, rounds: number, perRound: number, enter: (side: 0 | 1, keep: boolean) => void = () => {}) {
  const walls: [number[], number[]] = [[], []], cpus: [number[], number[]] = [[], []];
  const round = (side: 0 | 1, keep: boolean) => {
    enter(side, keep);
    if (perRound > 1) launch(side);
    const cpu0 = process.cpuUsage();
    for (let k = 0; k < perRound; k++) {
      const t0 = performance.now();
      launch(side);
      if (keep) walls[side].push(performance.now() - t0);
    }
    const cpu = process.cpuUsage(cpu0);
    if (keep) cpus[side].push((cpu.user + cpu.system) / 1000 / perRound);
  };
  round(0, false); round(1, false);
  for (let r = 0; r < rounds; r++) for (const side of r % 2 ? [0, 1] as const : [1, 0] as const) round(side, true);
  return (side: 0 | 1): WorkerFigures => ({ wallMs: median(walls[side]), bestMs: Math.min(...walls[side]), cpuMs: median(cpus[side]) });
}

/**
 * `launch` on 1 worker and on `n` in alternate rounds (alternateRounds); the timeline of the kept launches
 * on `n` is left in simWorkerTimeline.launches.
 */
function onWorkers(n: number, launch: () => void, rounds: number, perRound: number): [one: WorkerFigures, many: WorkerFigures] {
  const stats0 = { ...simWorkerStats };
  simWorkerTimeline.launches = [];
  let figures: ReturnType<typeof alternateRounds>;
  try {
    figures = alternateRounds(launch, rounds, perRound, (side, keep) => {
      process.env.NUMBATS_SIM_WORKERS = String(side === 0 ? 1 : n);
      simWorkerTimeline.on = keep && side === 1;
    });
  } finally {
    delete process.env.NUMBATS_SIM_WORKERS;
    simWorkerTimeline.on = false;
  }
  const d = Object.fromEntries(Object.entries(simWorkerStats).map(([k, v]) => [k, v - stats0[k as keyof typeof stats0]])) as typeof simWorkerStats;
  return [figures(0), {
    ...figures(1),
    handOutMs: d.handOutMs / Math.max(1, d.joined),
    callerShare: d.callerChunks / Math.max(1, d.callerChunks + d.workerChunks),
    withdrawn: d.withdrawn,
    stalls: d.stalls,
    backedOff: d.backedOff,
  }];
}

/**
 * One source for both sides of plainLoopThreads: takes chunks of [0, n) through ctl[0] until none is left
 * and adds them, the kernel's arithmetic as a plain loop.
 */
const TAKE_CHUNKS = `(a, b, c, ctl, chunks) => {
  const n = c.length, per = Math.ceil(n / chunks);
  for (let k = Atomics.add(ctl, 0, 1); k < chunks; k = Atomics.add(ctl, 0, 1)) {
    for (let i = per * k, end = Math.min(n, i + per); i < end; i++) c[i] = a[i] + b[i];
  }
}`;

/** a worker thread of plainLoopThreads: waits on ctl[1] (spinning 0.25 ms first, as the simulator's do), takes chunks, counts itself done in ctl[2] */
const PLAIN_LOOP_WORKER = `const { workerData } = require("node:worker_threads");
const { a, b, c, ctl, chunks } = workerData;
const takeChunks = ${TAKE_CHUNKS};
for (let rung = 0; ; ) {
  for (const until = performance.now() + 0.25; Atomics.load(ctl, 1) === rung && performance.now() < until;);
  Atomics.wait(ctl, 1, rung);
  rung = Atomics.load(ctl, 1);
  takeChunks(a, b, c, ctl, chunks);
  Atomics.add(ctl, 2, 1);
}`;

/**
 * What WORKERS threads of this machine give a loop like the vector add's at all, measured beside the
 * simulator: `c[i] = a[i] + b[i]` over n float32 elements in SharedArrayBuffers, in as many chunks as the
 * simulator's launch of the 2^20 vector add (48), taken through a shared counter by the calling thread alone
 * (side 0), or by it and WORKERS - 1 worker threads (side 1). No simulator code: the ceiling for its speed-up.
 */
function plainLoopThreads(n = BIG_N, chunks = 48) {
  const shared = (fill: (i: number) => number) => {
    const v = new Float32Array(new SharedArrayBuffer(4 * n));
    for (let i = 0; i < n; i++) v[i] = fill(i);
    return v;
  };
  const a = shared((i) => (i * 7) % 1000), b = shared((i) => (i * 5) % 1000), c = shared(() => 0);
  const ctl = new Int32Array(new SharedArrayBuffer(12));
  const takeChunks = new Function(`return ${TAKE_CHUNKS}`)() as (a: Float32Array, b: Float32Array, c: Float32Array, ctl: Int32Array, chunks: number) => void;
  const workers = Array.from({ length: WORKERS - 1 }, () => new Worker(PLAIN_LOOP_WORKER, { eval: true, workerData: { a, b, c, ctl, chunks } }));
  return {
    launch(side: 0 | 1): void {
      Atomics.store(ctl, 0, 0);
      const done = Atomics.load(ctl, 2) + workers.length;
      if (side === 1) { Atomics.add(ctl, 1, 1); Atomics.notify(ctl, 1); }
      takeChunks(a, b, c, ctl, chunks);
      if (side === 1) while (Atomics.load(ctl, 2) !== done);
    },
    check(): void {
      for (let i = 0; i < n; i++) if (c[i] !== Math.fround(a[i]! + b[i]!)) throw new Error(`bench/sim: the plain loop's sum is wrong at ${i}`);
    },
    close(): void {
      for (const w of workers) void w.terminate();
    },
  };
}

/** the plain loop (plainLoopThreads) on 1 thread and on WORKERS, in the worker rows' alternate rounds */
function plainLoopVadd(rounds = 10, perRound = 10): [one: WorkerFigures, many: WorkerFigures] {
  const loop = plainLoopThreads();
  try {
    const figures = alternateRounds(loop.launch, rounds, perRound);
    loop.check();
    return [figures(0), figures(1)];
  } finally {
    loop.close();
  }
}

const PLAIN_LOOP_ROW = `the same as a plain JavaScript loop (the machine's ceiling)`;
const ROUNDS_NOTE = "alternate rounds (vector add: 10 rounds of 10 timed launches a side, each round after one launch not timed; matmul: 3 rounds of 1)";

const sameBits = (x: ArrayBufferView, y: ArrayBufferView) =>
  Buffer.compare(Buffer.from(x.buffer, x.byteOffset, x.byteLength), Buffer.from(y.buffer, y.byteOffset, y.byteLength)) === 0;

/** `launch` on 1 worker and on WORKERS, and a check that both leave the same bits in what `read` reads */
function workerRow(what: string, launch: () => void, read: () => Float32Array, rounds: number, perRound: number): [WorkerFigures, WorkerFigures] {
  process.env.NUMBATS_SIM_WORKERS = "1";
  launch();
  const one = read().slice();
  process.env.NUMBATS_SIM_WORKERS = String(WORKERS);
  launch();
  check(`${what} on ${WORKERS} workers`, sameBits(one, read()));
  return onWorkers(WORKERS, launch, rounds, perRound);
}

/** the vector add on n-element device arrays: a launch, and what it leaves in c */
function vaddOnDevice(n = BIG_N): { launch: () => void; read: () => Float32Array } {
  const a = cuda.toDevice(pattern(n, 1000)), b = cuda.toDevice(pattern(n, 7)), c = cuda.deviceArray(n, "float32");
  return { launch: () => vadd.configure(Math.ceil(n / BLOCK), BLOCK)(a, b, c), read: () => c.copyToHost() as Float32Array };
}

function workersVadd(n = BIG_N, rounds = 10, perRound = 10): [WorkerFigures, WorkerFigures] {
  const { launch, read } = vaddOnDevice(n);
  return workerRow(`vector add ${n}`, launch, read, rounds, perRound);
}

// ---------------------------------------------------------------------------
// each core alone: a virtual machine's vCPUs need not run alike. On the 2-vCPU machine of bench/RESULTS.md
// one ran the vector add 1.5× slower than the other for minutes at a time, and a calling thread that sits
// on the fast one cannot be matched by two threads, however well they share the work. So the worker rows'
// speed-up is read beside each core's own speed: one thread pinned to each core in turn (taskset, on the
// calling thread only), between rounds on all threads unpinned.

interface CoreFigures {
  /** one thread pinned to each core: median wall ms per launch */
  coresMs: number[];
  /** all threads, unpinned: the median of their medians in each core's rounds */
  allMs: number;
  /** the rate on all threads ÷ the sum of the WORKERS fastest cores' rates: 1 is a perfect share */
  efficiency: number;
}

/** the CPUs the calling thread may run on, from taskset; a reason where it cannot say */
function callerCpus(): number[] | string {
  const r = spawnSync("taskset", ["-p", "-c", String(process.pid)], { encoding: "utf8" });
  if (r.error || r.status !== 0) return `taskset: ${r.error?.message ?? r.stderr.trim()}`;
  const list = /list:\s*(\S+)/.exec(r.stdout)?.[1];
  if (!list) return `taskset printed no CPU list: ${r.stdout.trim()}`;
  return list.split(",").flatMap((part) => {
    const [lo, hi = lo] = part.split("-").map(Number) as [number, number?];
    return Array.from({ length: hi! - lo + 1 }, (_, k) => lo + k);
  });
}

/** pins the calling thread (its thread id is the process id) to `cpus`; other threads keep theirs */
function pinCaller(cpus: readonly number[]): void {
  const r = spawnSync("taskset", ["-p", "-c", cpus.join(","), String(process.pid)], { encoding: "utf8" });
  if (r.error || r.status !== 0) throw new Error(`bench/sim: taskset could not pin the calling thread to ${cpus.join(",")}: ${r.error?.message ?? r.stderr.trim()}`);
}

/**
 * `launch(side)` on one thread (side 0) pinned to each core in turn, against all threads (side 1) unpinned,
 * in alternateRounds for each core; `enter` sets a side up. A reason instead where the calling thread
 * cannot be pinned, or has more than 8 cores to go through.
 */
const CORE_ROUNDS = 6, CORE_PER_ROUND = 10;

function perCore(launch: (side: 0 | 1) => void, enter: (side: 0 | 1) => void = () => {}): CoreFigures | string {
  const cpus = callerCpus();
  if (typeof cpus === "string") return cpus;
  if (cpus.length < 2 || cpus.length > 8) return `${cpus.length} cores to pin to (this measures 2 to 8)`;
  try {
    const figures = cpus.map((cpu) => alternateRounds(launch, CORE_ROUNDS, CORE_PER_ROUND, (side) => {
      pinCaller(side === 0 ? [cpu] : cpus);
      enter(side);
    }));
    const coresMs = figures.map((f) => f(0).wallMs), allMs = median(figures.map((f) => f(1).wallMs));
    const fastest = [...coresMs].sort((p, q) => p - q).slice(0, WORKERS);
    return { coresMs, allMs, efficiency: 1 / allMs / fastest.reduce((sum, ms) => sum + 1 / ms, 0) };
  } finally {
    pinCaller(cpus);
  }
}

/** the vector add (simulator, then the plain loop) on each core alone and on all */
function vaddPerCore(): [string, CoreFigures | string][] {
  const sim = vaddOnDevice();
  const simFigures = perCore(() => sim.launch(), (side) => { process.env.NUMBATS_SIM_WORKERS = String(side === 0 ? 1 : WORKERS); });
  delete process.env.NUMBATS_SIM_WORKERS;
  const loop = plainLoopThreads();
  try {
    const loopFigures = perCore(loop.launch);
    loop.check();
    return [[`vector add, ${BIG_N} elements, device arrays`, simFigures], [PLAIN_LOOP_ROW, loopFigures]];
  } finally {
    loop.close();
  }
}

function printPerCore(rows: [string, CoreFigures | string][]): void {
  console.log(`\nthe vector add on each core alone against all ${WORKERS} threads (the calling thread pinned to one core, against all unpinned; for each core, ${CORE_ROUNDS} alternate rounds of ${CORE_PER_ROUND} a side):`);
  const figures = rows.map(([, f]) => f).filter((f): f is CoreFigures => typeof f !== "string");
  if (figures.length === 0) {
    console.log(`each core alone: not measured (${rows[0]?.[1]})`);
    return;
  }
  const cores = figures[0]!.coresMs.length;
  const table = [["kernel", ...Array.from({ length: cores }, (_, k) => `core ${k} alone ms`), `${WORKERS} threads ms`, "over the fastest core", "share of the cores' sum"]];
  for (const [kernel, f] of rows) {
    if (typeof f === "string") { table.push([kernel, `not measured: ${f}`]); continue; }
    table.push([kernel, ...f.coresMs.map((ms) => ms.toFixed(3)), f.allMs.toFixed(3), `${(Math.min(...f.coresMs) / f.allMs).toFixed(2)}×`, `${Math.round(100 * f.efficiency)} %`]);
  }
  printTable(table);
}

function workersMatmul(n = BIG_MATMUL_N, kernel = fastMatmul, rounds = 3, perRound = 1): [WorkerFigures, WorkerFigures] {
  const blocks = Math.ceil(n / TPB);
  const A = cuda.toDevice(ndarray(pattern(n * n, 7), [n, n])), B = cuda.toDevice(ndarray(pattern(n * n, 5), [n, n]));
  const C = cuda.deviceArray([n, n], "float32");
  return workerRow(`matmul ${n}²`, () => kernel.configure([blocks, blocks], [TPB, TPB])(A, B, C), () => C.copyToHost().data as Float32Array, rounds, perRound);
}

const loadAverage = () => os.loadavg()[0]!.toFixed(1);

/** The worker rows in detail: 1 and N workers side by side, per launch. */
function printWorkerTable(rows: [string, [WorkerFigures, WorkerFigures]][]): void {
  const ms = (x: number | undefined) => (x === undefined ? "—" : x.toFixed(3));
  const table = [["kernel", "workers", "wall ms (median)", "wall ms (best)", "CPU ms", "hand-out ms", "caller's chunks", "withdrawn / stalls / backed off", "speed-up median / best"]];
  for (const [kernel, [one, many]] of rows) {
    table.push([kernel, "1", ms(one.wallMs), ms(one.bestMs), ms(one.cpuMs), "—", "—", "—", ""]);
    const sim = many.callerShare !== undefined; // else the plain loop: no simulator counts
    table.push(["", String(WORKERS), ms(many.wallMs), ms(many.bestMs), ms(many.cpuMs), ms(many.handOutMs), sim ? `${Math.round(100 * many.callerShare!)} %` : "—",
      sim ? `${many.withdrawn} / ${many.stalls} / ${many.backedOff}` : "—",
      `${(one.wallMs / many.wallMs).toFixed(2)}× / ${(one.bestMs / many.bestMs).toFixed(2)}×`]);
  }
  printTable(table);
}

/**
 * A launch on N workers moment by moment, percentiles over the launches (ms from the caller's entry into
 * the launch; the host's own launch path before it is the same on 1 worker): where the fixed cost goes.
 */
function printTimeline(launches: readonly LaunchTimeline[], oneWorkerMs: number): void {
  const pct = [0.05, 0.25, 0.5, 0.75, 0.95];
  const row = (what: string, xs: number[]) => {
    const s = xs.filter((x) => Number.isFinite(x)).sort((p, q) => p - q);
    return [what, ...pct.map((p) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(3) : "—"))];
  };
  const ms = (f: (l: LaunchTimeline) => number) => launches.map((l) => f(l) / 1000);
  const worker = (l: LaunchTimeline, mark: number) => l.workers[0]?.[mark] ?? NaN;
  printTable([
    ["moment (ms)", ...pct.map((p) => `p${p * 100}`)],
    row("caller posted the launch", ms((l) => l.posted)),
    row("worker woke", ms((l) => worker(l, WORKER_MARK.woke))),
    row("worker joined", ms((l) => worker(l, WORKER_MARK.joined))),
    row("caller's last chunk done", ms((l) => l.callerEnd)),
    row("worker's last chunk done", ms((l) => worker(l, WORKER_MARK.end))),
    row("caller saw the workers done", ms((l) => l.collected)),
    row("launch returns", ms((l) => l.end)),
    row("caller's chunks", launches.map((l) => l.callerChunks)),
    row("caller's ms per chunk", launches.map((l) => (l.callerEnd - l.callerStart) / 1000 / l.callerChunks)),
    row("worker's ms per chunk", launches.map((l) => (worker(l, WORKER_MARK.end) - worker(l, WORKER_MARK.joined)) / 1000 / (l.chunks - l.callerChunks))),
  ]);
  console.log(`(1 worker: ${oneWorkerMs.toFixed(3)} ms a launch, median; the worker rows leave out launches withdrawn from it)`);
}

/**
 * Where workers start to gain: launches below the threshold (simWorkerTuning.minWork) sent to the workers
 * anyway, 1 worker against N, speed-up of the medians.
 */
function workerSweep(): [kernel: string, threads: number, speedUp: number][] {
  const saved = simWorkerTuning.minWork;
  simWorkerTuning.minWork = 0;
  try {
    const ratio = ([one, many]: [WorkerFigures, WorkerFigures]) => one.wallMs / many.wallMs;
    return [
      ...[15, 16, 17, 18, 19, 20].map((k): [string, number, number] => [`vector add 2^${k}`, 1 << k, ratio(workersVadd(1 << k, 8, 20))]),
      ...[24, 32, 48, 64].map((n): [string, number, number] => [`naive matmul ${n}²`, n * n, ratio(workersMatmul(n, naiveMatmul, 8, 20))]),
    ];
  } finally {
    simWorkerTuning.minWork = saved;
  }
}

// ---------------------------------------------------------------------------
// peers

interface NumbaFigures { numba: string; vadd_ms: number; matmul_ms: number; checks: { vadd: boolean; matmul: boolean } }

function numbaSim(): NumbaFigures | string {
  const probe = spawnSync(PYTHON, ["-c", "import numba"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    return `Numba is not importable by ${PYTHON}: install it with \`sudo apt-get install -y python3-numba\` (or \`${PYTHON} -m pip install numba\`)`;
  }
  const run = spawnSync(PYTHON, [`${PEERS_DIR}numba_sim.py`], {
    encoding: "utf8", env: { ...process.env, NUMBA_ENABLE_CUDASIM: "1" }, timeout: 20 * 60_000,
  });
  if (run.status !== 0) return `the Numba peer failed: ${(run.stderr || String(run.error)).trim().split("\n").slice(-3).join(" ")}`;
  const figures = JSON.parse(run.stdout.trim().split("\n").pop()!) as NumbaFigures;
  check("Numba's simulator", figures.checks.vadd && figures.checks.matmul);
  return figures;
}

type GpuCtor = new (opts: { mode: string }) => {
  createKernel(fn: (this: { thread: { x: number } }, a: Float32Array, b: Float32Array) => number): {
    setOutput(shape: number[]): (a: Float32Array, b: Float32Array) => Float32Array;
  };
};

/** gpu.js from bench/peers/node_modules, installed there on first use. */
function loadGpuJs(): { GPU: GpuCtor; version: string } | string {
  const req = createRequire(`${PEERS_DIR}package.json`);
  if (!existsSync(`${PEERS_DIR}node_modules/gpu.js`)) {
    console.error("bench/sim: installing gpu.js into bench/peers/node_modules …");
    const npm = (...extra: string[]) =>
      spawnSync("npm", ["install", "--no-audit", "--no-fund", "--omit=optional", ...extra], { cwd: PEERS_DIR, encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
    // CPU mode needs none of gpu.js's native graphics dependencies: skip their build scripts if they fail
    const first = npm();
    if (first.status !== 0 && npm("--ignore-scripts").status !== 0) {
      return `gpu.js could not be installed into bench/peers (npm: ${first.stderr.trim().split("\n").pop()})`;
    }
  }
  try {
    return { GPU: (req("gpu.js") as { GPU: GpuCtor }).GPU, version: (req("gpu.js/package.json") as { version: string }).version };
  } catch (e) {
    return `gpu.js did not load: ${(e as Error).message}`;
  }
}

/** gpu.js's vector add and ours on host arrays, side by side (alternate runs): [ours, gpu.js] */
function gpuJsVadd(GPU: GpuCtor, n: number): [number, number] {
  const add = new GPU({ mode: "cpu" }).createKernel(function (a, b) {
    return a[this.thread.x]! + b[this.thread.x]!;
  }).setOutput([n]);
  const a = pattern(n, 1000), b = pattern(n, 7), want = a.map((v, i) => v + b[i]!);
  let c: Float32Array = new Float32Array(0);
  const ours = new Float32Array(n);
  const ms = pairedMedianMs(() => vadd.configure(Math.ceil(n / BLOCK), BLOCK)(a, b, ours), () => { c = add(a, b); }, REPS);
  check("gpu.js vector add", sameAs(c, want));
  check(`vector add (${n}) beside gpu.js`, sameAs(ours, want));
  return ms;
}

// ---------------------------------------------------------------------------

function fmt(ms: number | undefined): string {
  if (ms === undefined) return "—";
  return ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

/** The same launches under the sanitizer (every tool), against the plain simulator's figures. */
function oursSanitized(): { vadd16k_ms: number; matmul64_ms: number } {
  setSimChecks({ tools: "all" });
  try {
    return { vadd16k_ms: oursVadd(VADD_N), matmul64_ms: oursMatmul() };
  } finally {
    setSimChecks(undefined);
  }
}

function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  for (const r of table) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join("  ").trimEnd());
}

/** `BENCH_ONLY=workers`: the worker rows in detail and the threshold sweep, without the peers (about a minute) */
function workersOnly(): void {
  const load = loadAverage();
  const vadd = workersVadd(), timeline = simWorkerTimeline.launches;
  const rows: [string, [WorkerFigures, WorkerFigures]][] = [
    [`vector add, ${BIG_N} elements, device arrays`, vadd],
    [PLAIN_LOOP_ROW, plainLoopVadd()],
    [`tiled matmul ${BIG_MATMUL_N}², device arrays`, workersMatmul()],
  ];
  console.log(`numbats simulator, 1 worker against ${WORKERS} — ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}, load average ${load} → ${loadAverage()}`);
  console.log(`per launch, ${ROUNDS_NOTE}; CPU: the whole process, every thread\n`);
  printWorkerTable(rows);
  const cores = vaddPerCore();
  printPerCore(cores);
  console.log(`\nthe ${timeline.length} vector add launches on ${WORKERS} workers, moment by moment:`);
  printTimeline(timeline, vadd[0].wallMs);
  console.log(`\nlaunches below the threshold sent to ${WORKERS} workers anyway (speed-up of the medians, 8 rounds of 20 a side; load average ${loadAverage()}):`);
  const sweep = workerSweep();
  printTable([["kernel", "threads", "speed-up"], ...sweep.map(([k, threads, x]) => [k, String(threads), `${x.toFixed(2)}×`])]);
  console.log(`\n${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, load: os.loadavg(), workers: Object.fromEntries(rows), cores: Object.fromEntries(cores), sweep }, null, 2)}`);
}

/** `BENCH_ONLY=sanitizer`: sanitized against plain launches, alternating in this process (under a minute) */
function sanitizerOnly(): void {
  const load = loadAverage();
  const rows = sanitizedSelfRows();
  console.log(`numbats simulator, NUMBATS_SANITIZE=all against plain — ${new Date().toISOString()}, Node ${process.version}, load average ${load} → ${loadAverage()}`);
  console.log("per launch, medians of alternate launches, one thread\n");
  printTable([
    ["kernel", "plain ms", "sanitized ms", "wall ratio", "CPU ratio"],
    ...Object.entries(rows).map(([k, [plain, san, cpuPlain, cpuSan]]) =>
      [k, plain.toFixed(2), san.toFixed(2), `${(san / plain).toFixed(1)}×`, `${(cpuSan / cpuPlain).toFixed(1)}×`]),
  ]);
}

async function main(): Promise<void> {
  process.env.NUMBATS_TARGET = "sim"; // this bench measures the simulator, GPU or not; read at the first launch
  delete process.env.NUMBATS_SIM_WORKERS; // the default: the available cores, for launches large enough
  await simWorkersReady(WORKERS - 1); // launches never wait for workers to boot: have them up before timing
  if (process.env.BENCH_ONLY === "workers") return workersOnly();
  if (process.env.BENCH_ONLY === "sanitizer") return sanitizerOnly();
  if (process.env.BENCH_ONLY) throw new Error(`bench/sim: BENCH_ONLY=${process.env.BENCH_ONLY}: the parts that run alone are 'workers' and 'sanitizer'`);
  const ours = { vadd16k_ms: oursVadd(VADD_N), matmul64_ms: oursMatmul(), vadd1m_ms: oursVadd(BIG_N) };
  const sanitized = oursSanitized();
  const workerRows: [string, [WorkerFigures, WorkerFigures]][] = [
    [`vector add, ${BIG_N} elements, device arrays`, workersVadd()],
    [PLAIN_LOOP_ROW, plainLoopVadd()],
    [`tiled matmul ${BIG_MATMUL_N}², device arrays`, workersMatmul()],
  ];
  const [[vadd1mW1, vadd1mWN], [loop1, loopN], [matmul512W1, matmul512WN]] = workerRows.map(([, [one, many]]) => [one.wallMs, many.wallMs]) as [number, number][];
  const cores = vaddPerCore();
  const [simCores, loopCores] = cores.map(([, f]) => f);
  const coresNote = typeof simCores === "string" || typeof loopCores === "string" ? ""
    : `; each core alone ${simCores!.coresMs.map((ms) => ms.toFixed(2)).join(" / ")} ms, share of their sum ${Math.round(100 * simCores!.efficiency)} % (plain loop ${Math.round(100 * loopCores!.efficiency)} %)`;
  const self = selfRows();
  const sanitizedSelf = sanitizedSelfRows();

  const numba = numbaSim();
  if (typeof numba === "string") console.error(`bench/sim: skipping the Numba peer: ${numba}`);
  const gpujs = loadGpuJs();
  if (typeof gpujs === "string") console.error(`bench/sim: skipping the gpu.js peer: ${gpujs}`);
  // ours beside gpu.js when it is there (alternate runs), else ours alone
  const [vadd1mBeside, gpujsVadd] = typeof gpujs === "string" ? [ours.vadd1m_ms, undefined] : gpuJsVadd(gpujs.GPU, BIG_N);

  const nb = typeof numba === "string" ? undefined : numba;
  const rows: [string, string, number, number | undefined, string][] = [
    [`vector add, ${VADD_N} threads, float32`, "Numba CUDA simulator", ours.vadd16k_ms, nb?.vadd_ms, "≥ 1000× faster"],
    [`tiled matmul ${MATMUL_N}×${MATMUL_N}, TPB ${TPB}`, "Numba CUDA simulator", ours.matmul64_ms, nb?.matmul_ms, "≥ 1000× faster"],
    [`vector add, ${BIG_N} elements, float32`, "gpu.js CPU mode", vadd1mBeside, gpujsVadd, "≥ 1× (as fast)"],
    [`vector add, ${BIG_N} elements, device arrays`, "ourselves on 1 worker", vadd1mWN, vadd1mW1, `≥ 1.8× on ${WORKERS} workers (a plain loop on ${WORKERS} threads: ${(loop1! / loopN!).toFixed(2)}×${coresNote})`],
    [`tiled matmul ${BIG_MATMUL_N}×${BIG_MATMUL_N}, device arrays`, "ourselves on 1 worker", matmul512WN, matmul512W1, `≥ 1.8× on ${WORKERS} workers`],
    [`vector add, ${VADD_N} threads, NUMBATS_SANITIZE=all`, "numbats, plain", sanitized.vadd16k_ms, ours.vadd16k_ms, "≥ 0.1× (≤ 10× plain)"],
    [`tiled matmul ${MATMUL_N}×${MATMUL_N}, NUMBATS_SANITIZE=all`, "numbats, plain", sanitized.matmul64_ms, ours.matmul64_ms, "≥ 0.1× (≤ 10× plain)"],
  ];

  console.log(`numbats simulator vs peers — ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}`);
  console.log(`warm launches from host arrays (the worker rows: device arrays); ours: median of ${REPS} (the worker rows: as below), on ${WORKERS} workers unless a row says 1; Numba: the second call; gpu.js: median of ${REPS}\n`);
  const table = [["kernel", "peer", "numbats ms", "peer ms", "speed-up (peer/ours)", "goal"]];
  for (const [kernel, peer, us, them, goal] of rows) {
    table.push([kernel, peer, fmt(us), fmt(them), them === undefined ? "—" : `${(them / us).toFixed(them / us >= 10 ? 0 : 2)}×`, goal]);
  }
  printTable(table);

  console.log(`\n1 worker against ${WORKERS}, per launch, ${ROUNDS_NOTE}; CPU: the whole process, every thread; load average ${loadAverage()}`);
  printWorkerTable(workerRows);
  printPerCore(cores);

  console.log(`\nthe simulator on device arrays, in the calling thread (tiled and hand: medians of 7 alternate runs; naive: of 5; vector add: of ${REPS})`);
  printTable([
    ["kernel", "numbats ms", "hand-written phases ms", "ours/hand", "goal"],
    [`tiled matmul ${SELF_MATMUL_N}², TPB ${TPB}`, fmt(self.tiled256_ms), fmt(self.hand256_ms), `${(self.tiled256_ms / self.hand256_ms).toFixed(2)}×`, "≤ 1.2×"],
    [`naive matmul ${SELF_MATMUL_N}²`, fmt(self.naive256_ms), "—", "—", ""],
    [`vector add, ${BIG_N} elements, device arrays`, fmt(self.vadd1m_device_ms), "—", "—", ""],
  ]);

  console.log(`\nNUMBATS_SANITIZE=all against plain, device arrays, in the calling thread (medians of 5 alternate runs; vector add: of 7)`);
  const sanitizedNames = { tiled256: `tiled matmul ${SELF_MATMUL_N}², TPB ${TPB}`, naive256: `naive matmul ${SELF_MATMUL_N}²`, vadd1m_device: `vector add, ${BIG_N} elements, device arrays` };
  printTable([
    ["kernel", "plain ms", "sanitized ms", "sanitized/plain", "CPU time: sanitized/plain", "goal"],
    ...Object.entries(sanitizedSelf).map(([k, [plain, san, cpuPlain, cpuSan]]) => [
      sanitizedNames[k as keyof typeof sanitizedNames], fmt(plain), fmt(san), `${(san / plain).toFixed(1)}×`, `${(cpuSan / cpuPlain).toFixed(1)}×`, "≤ 10×",
    ]),
  ]);

  console.log(`\n${JSON.stringify({
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    numbats: { ...ours, ...self },
    sanitized: { ...sanitized, self: sanitizedSelf },
    workers: { count: WORKERS, vadd1m_dev_ms: [vadd1mW1, vadd1mWN], matmul512_ms: [matmul512W1, matmul512WN], detail: Object.fromEntries(workerRows), cores: Object.fromEntries(cores) },
    numba: nb ? { version: nb.numba, vadd16k_ms: nb.vadd_ms, matmul64_ms: nb.matmul_ms } : null,
    gpujs: gpujsVadd === undefined ? null : { version: (gpujs as { version: string }).version, vadd1m_ms: gpujsVadd, ours_beside_ms: vadd1mBeside },
    ratios: {
      numba_over_ours_vadd16k: nb ? nb.vadd_ms / ours.vadd16k_ms : null,
      numba_over_ours_matmul64: nb ? nb.matmul_ms / ours.matmul64_ms : null,
      ours_over_gpujs_vadd1m: gpujsVadd === undefined ? null : vadd1mBeside / gpujsVadd,
      speedup_workers_vadd1m: vadd1mW1 / vadd1mWN,
      speedup_plain_loop_vadd1m: loop1! / loopN!,
      speedup_workers_matmul512: matmul512W1 / matmul512WN,
    },
  }, null, 2)}`);
}

await main();
