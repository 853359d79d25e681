// The simulator on many cores (NUMBATS_SIM_WORKERS): launches whose blocks run
// on worker threads give the same bits as one thread, print whole lines in
// block order, fault with the single-thread error and leave host arrays as
// they were; small, cooperative and NUMBATS_SIM_WORKERS=1 launches stay in the
// calling thread. Every kernel is also assembled by ptxas.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { cuda, float32, ndarray, RecordArray, type KernelArray1 } from "../../src/index.js";
import { LaunchError } from "../../src/errors.js";
import { DTYPE_INFO, type ScalarName } from "../../src/dtypes.js";
import type { AtomicOp } from "../../src/compiler/ir.js";
import { atomic } from "../../src/backends/sim/runtime/runtime.js";
import { sharedAtomic } from "../../src/backends/sim/runtime/shared-atomics.js";
import { awaitChange, resultChannel, takeResult, workerSpinMs, writeResult, type RunnerResult } from "../../src/backends/sim/runtime/sim-chunks.js";
import { Worker } from "node:worker_threads";
import { chunkBlocks, noteLaunch, sameData, simWorkersReady, snapshot, simWorkerStats, simWorkerTuning } from "../../src/backends/sim/runtime/sim-workers.js";
import { hasPtxas, ptxasCheck, PTXAS_TARGETS } from "../helpers/ptxas.js";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { typeOfArgument } from "../../src/kernel.js";
import type { KernelArg } from "../../src/abi/backend.js";
import { getBackend } from "../../src/runtime/select.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { TPB, tiledMatmul } from "../helpers/kernels.js";

process.env.NUMBATS_TARGET = "sim";
const savedTuning = { ...simWorkerTuning };
const savedWorkers = process.env.NUMBATS_SIM_WORKERS;

before(async () => {
  // every launch of these tests is "large", and the blocks go to the workers only (not the calling
  // thread), so a 2-worker run really crosses threads
  simWorkerTuning.minWork = 0;
  simWorkerTuning.callerRuns = false;
  await simWorkersReady(2);
});
after(() => {
  Object.assign(simWorkerTuning, savedTuning);
  if (savedWorkers === undefined) delete process.env.NUMBATS_SIM_WORKERS;
  else process.env.NUMBATS_SIM_WORKERS = savedWorkers;
});

/** runs `f` with NUMBATS_SIM_WORKERS=n; returns its result and how many chunks workers ran */
function withWorkers<T>(n: number, f: () => T): { result: T; workerChunks: number; parallel: number } {
  process.env.NUMBATS_SIM_WORKERS = String(n);
  const chunks = simWorkerStats.workerChunks, launches = simWorkerStats.parallelLaunches;
  const result = f();
  return { result, workerChunks: simWorkerStats.workerChunks - chunks, parallel: simWorkerStats.parallelLaunches - launches };
}

/** what `f` prints on stdout, line by line */
function printed(f: () => void): string[] {
  const written: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => { written.push(chunk); return true; }) as typeof process.stdout.write;
  try {
    f();
  } finally {
    process.stdout.write = write;
  }
  return written.join("").split("\n").slice(0, -1);
}

const assemble = (k: { inspectAsm(sig?: string, t?: { computeCapability: readonly [number, number] }): string }) => {
  if (hasPtxas()) for (const t of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(undefined, { computeCapability: t.computeCapability }), t.arch);
};

/** bytes of a typed array, for same-bits comparisons */
const bytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();

// ---------------------------------------------------------------------------
// same bits

const vadd = cuda.jit((a: Float32Array, b: Float32Array, c: Float32Array) => {
  const i = cuda.grid(1);
  if (i < c.length) c[i] = a[i] * 0.1 + b[i];
});

test("vector add on device arrays: 2 workers give the bits of 1, in the device arrays themselves", () => {
  const n = 100_000;
  const a = Float32Array.from({ length: n }, (_, i) => Math.sin(i)), b = Float32Array.from({ length: n }, (_, i) => i / 7);
  const da = cuda.toDevice(a), db = cuda.toDevice(b), dc = cuda.deviceArray(n, "float32");
  const run = () => { vadd.configure(Math.ceil(n / 128), 128)(da, db, dc); return dc.copyToHost() as Float32Array; };
  const one = withWorkers(1, run), two = withWorkers(2, run);
  assert.equal(one.parallel, 0);
  assert.ok(two.workerChunks > 1, "the blocks ran on the workers");
  assert.deepEqual(bytes(two.result), bytes(one.result));
  // float32 a * 0.1 + b contracts to one fused multiply-add, rounded once
  for (let i = 0; i < n; i += 997) assert.equal(one.result[i], Math.fround(a[i]! * Math.fround(0.1) + b[i]!));
  assemble(vadd);
});

const matmul = cuda.jit(tiledMatmul, { env: { TPB } });

test("tiled matmul (shared memory, syncthreads) from host ndarrays: 2 workers give the bits of 1", () => {
  const n = 80, blocks = Math.ceil(n / TPB);
  const a = Float32Array.from({ length: n * n }, (_, i) => Math.cos(i)), b = Float32Array.from({ length: n * n }, (_, i) => (i % 13) / 3);
  const run = () => {
    const C = ndarray(new Float32Array(n * n), [n, n]);
    matmul.configure([blocks, blocks], [TPB, TPB])(ndarray(a, [n, n]), ndarray(b, [n, n]), C);
    return C.data as Float32Array;
  };
  const one = withWorkers(1, run), two = withWorkers(2, run);
  assert.ok(two.workerChunks > 1);
  assert.deepEqual(bytes(two.result), bytes(one.result));
  // against a host float32 dot product in the kernel's order (fused multiply-adds, error well below 1e-4)
  for (let y = 0; y < n; y += 7) for (let x = 0; x < n; x += 5) {
    let t = 0;
    for (let k = 0; k < n; k++) t += a[y * n + k]! * b[k * n + x]!;
    assert.ok(Math.abs(one.result[y * n + x]! - t) < 1e-3 * (1 + Math.abs(t)), `C[${y}][${x}]`);
  }
  assemble(matmul);
});

const reduceInts = cuda.jit((v: Int32Array, sum: Int32Array, big: Float64Array) => {
  const i = cuda.grid(1);
  if (i < v.length) {
    cuda.atomic.add(sum, 0, v[i]);
    cuda.atomic.max(sum, 1, v[i]);
    cuda.atomic.min(sum, 2, v[i]);
    cuda.atomic.xor(sum, 3, v[i]);
    cuda.atomic.add(big, 0, v[i]);
  }
});

test("reductions with integer atomics (add, max, min, xor) and float64 adds of integers: every order, the same bits", () => {
  const n = 50_000;
  const v = Int32Array.from({ length: n }, (_, i) => ((i * 2654435761) % 2001) - 1000);
  const run = () => {
    const sum = Int32Array.of(0, -(2 ** 31), 2 ** 31 - 1, 0), big = new Float64Array(1);
    reduceInts.configure(Math.ceil(n / 64), 64)(v, sum, big);
    return [sum, big] as const;
  };
  const one = withWorkers(1, run), two = withWorkers(2, run);
  assert.ok(two.workerChunks > 1);
  const want = [v.reduce((s, x) => (s + x) | 0, 0), Math.max(...v), Math.min(...v), v.reduce((s, x) => s ^ x, 0)];
  assert.deepEqual([...one.result[0]], want);
  assert.deepEqual([...two.result[0]], want);
  assert.equal(two.result[1][0], v.reduce((s, x) => s + x, 0));
  assemble(reduceInts);
});

const floatAtomics = cuda.jit((v: Float32Array, acc: Float32Array) => {
  const i = cuda.grid(1);
  if (i < v.length) {
    cuda.atomic.add(acc, 0, v[i]);
    cuda.atomic.max(acc, 1, v[i] * 0.5);
    cuda.atomic.sub(acc, 2, v[i]);
  }
});

test("float32 atomics from two threads at once: integer-valued sums are exact whatever the order", () => {
  const n = 60_000;
  const v = Float32Array.from({ length: n }, (_, i) => (i % 17) - 5);
  const run = () => {
    const acc = Float32Array.of(0, -Infinity, 0);
    floatAtomics.configure(Math.ceil(n / 128), 128)(v, acc);
    return acc;
  };
  const one = withWorkers(1, run), two = withWorkers(2, run);
  assert.ok(two.workerChunks > 1);
  const total = v.reduce((s, x) => s + x, 0);
  assert.deepEqual([...two.result], [total, 5.5, -total]);
  assert.deepEqual(bytes(two.result), bytes(one.result));
  assemble(floatAtomics);
});

const histogram = cuda.jit((data: Uint8Array, bins: Uint32Array) => {
  const start = cuda.grid(1), stride = cuda.gridsize(1);
  for (let i = start; i < data.length; i += stride) cuda.atomic.add(bins, data[i] >> 4, 1);
});

test("histogram with atomic.add on uint32 bins: 2 workers count what 1 does", () => {
  const n = 200_000;
  const data = Uint8Array.from({ length: n }, (_, i) => (i * 37 + (i >> 3)) & 255);
  const run = () => { const bins = new Uint32Array(16); histogram.configure(64, 128)(data, bins); return bins; };
  const one = withWorkers(1, run), two = withWorkers(2, run);
  assert.ok(two.workerChunks > 1);
  const want = new Uint32Array(16);
  for (const d of data) want[d >> 4]!++;
  assert.deepEqual(one.result, want);
  assert.deepEqual(two.result, want);
  assemble(histogram);
});

test("atomics across threads: each op and dtype gives what the one-thread atomic gives", () => {
  const cases: [AtomicOp, ScalarName, number | bigint, (number | bigint)?][] = [
    ["add", "int8", 100], ["sub", "uint16", 7], ["max", "int32", -3], ["min", "uint32", 2 ** 31], ["inc", "uint32", 3],
    ["dec", "uint32", 3], ["and", "int64", 6n], ["or", "uint64", 2n ** 63n], ["exch", "float32", 2.5],
    ["add", "float16", 0.25], ["add", "float32", 1e-40], ["add", "float64", 0.1], ["max", "float64", NaN], ["nanmin", "float32", NaN],
    ["cas", "float32", 9, 1.5], ["cas", "int32", 9, 2], ["cas", "float64", 9, 7], ["cas", "float32", 9, 0], ["cas", "float64", 9, NaN],
  ];
  for (const [op, t, v, cmp] of cases) {
    const init = DTYPE_INFO[t].cls === "float" ? [1.5, -0, NaN] : t.endsWith("64") ? [5n, 0n, 7n] : [2, 0, 127];
    for (const x of init) {
      const plain = new DTYPE_INFO[t].array(1), shared = new DTYPE_INFO[t].array(new SharedArrayBuffer(8), 0, 1);
      const store = t === "float16" ? (a: unknown) => ((a as Uint16Array)[0] = Math.round(x as number) === x ? 0x3e00 : 0x7e00) : (a: unknown) => ((a as { 0: unknown })[0] = x);
      store(plain); store(shared);
      const old1 = atomic(op, t, "global")(plain, 0, v, cmp), old2 = sharedAtomic(op, t, "global")(shared, 0, v, cmp);
      assert.ok(Object.is(old1, old2), `${op} ${t} on ${x}: old ${String(old1)} vs ${String(old2)}`);
      assert.deepEqual(bytes(shared), bytes(plain), `${op} ${t} on ${x}`);
    }
  }
});

// ---------------------------------------------------------------------------
// output, faults, host and device arrays

const talk = cuda.jit((out: Int32Array) => {
  const b = cuda.blockIdx.x;
  if (cuda.threadIdx.x === 0) console.log("block %d of %d says %d", b, cuda.gridDim.x, b * 3);
  out[cuda.grid(1)] = b;
});

test("printf: lines stay whole and come in block order, as one thread prints them", () => {
  const grid = 40;
  const run = () => printed(() => talk.configure(grid, 32)(new Int32Array(grid * 32)));
  const one = withWorkers(1, run), two = withWorkers(2, run);
  assert.ok(two.workerChunks > 1);
  assert.deepEqual(one.result, Array.from({ length: grid }, (_, b) => `block ${b} of ${grid} says ${b * 3}`));
  assert.deepEqual(two.result, one.result);
  assemble(talk);
});

const faulty = cuda.jit((a: Float32Array, out: Float32Array, bad: number) => {
  const i = cuda.grid(1);
  if (cuda.threadIdx.x === 0) console.log("block %d", cuda.blockIdx.x);
  out[i] = a[i === bad ? i + 100000 : i] + 1;
});

test("a fault on a worker: the single-thread LaunchError, the output before it, host arrays untouched", () => {
  const n = 64 * 50, bad = 64 * 37 + 5;
  const a = Float32Array.from({ length: n }, (_, i) => i);
  const run = () => {
    const out = new Float32Array(n).fill(-1);
    let error: unknown;
    const lines = printed(() => {
      try { faulty.configure(50, 64)(a, out, bad); } catch (e) { error = e; }
    });
    return { error, lines, out };
  };
  const one = withWorkers(1, run), two = withWorkers(2, run);
  assert.ok(one.result.error instanceof LaunchError);
  assert.ok(two.result.error instanceof LaunchError, String(two.result.error));
  assert.match((two.result.error as Error).message, /index out of bounds: a\[102373\] with shape \[3200\] in thread \(5, 0, 0\) of block \(37, 0, 0\)/s);
  assert.equal((two.result.error as Error).message, (one.result.error as Error).message);
  assert.deepEqual(two.result.lines, Array.from({ length: 38 }, (_, b) => `block ${b}`));
  assert.deepEqual(two.result.lines, one.result.lines);
  assert.ok(two.result.out.every((x) => x === -1), "the written host array is as it was");
  assert.ok(one.result.out.every((x) => x === -1), "the written host array is as it was, in the calling thread too");
  assert.ok(a.every((x, i) => x === i));
  assemble(faulty);
});

test("a failed launch leaves a host array over a SharedArrayBuffer as it was, on workers and in the calling thread", () => {
  const n = 64 * 50, bad = 64 * 37 + 5;
  const a = Float32Array.from({ length: n }, (_, i) => i);
  for (const workers of [2, 1]) {
    const out = new Float32Array(new SharedArrayBuffer(4 * n)).fill(-1);
    const { parallel } = withWorkers(workers, () => {
      printed(() => assert.throws(() => faulty.configure(50, 64)(a, out, bad), LaunchError));
    });
    assert.equal(parallel, workers === 2 ? 1 : 0);
    assert.ok(out.every((x) => x === -1), `the written host array is as it was (${workers} workers)`);
  }
});

const scale = cuda.jit((src: Float64Array, dst: Float64Array, k: number) => {
  const i = cuda.grid(1);
  if (i < dst.length) dst[i] = src[i] * k + dst[i];
});

test("host arrays: written ones come back, read-only ones keep their contents and memory", () => {
  const n = 30_000;
  const src = Float64Array.from({ length: n }, (_, i) => i / 3);
  const sub = new Float64Array(new ArrayBuffer(8 * (n + 3)), 8 * 3, n).fill(2); // a view not at its buffer's start
  const before = bytes(src);
  const { result, workerChunks } = withWorkers(2, () => scale.configure(Math.ceil(n / 128), 128)(src, sub, 3));
  assert.equal(result, undefined);
  assert.ok(workerChunks > 1);
  assert.deepEqual(bytes(src), before);
  assert.ok(!(src.buffer instanceof SharedArrayBuffer) && !(sub.buffer instanceof SharedArrayBuffer));
  for (let i = 0; i < n; i += 101) assert.equal(sub[i], src[i]! * 3 + 2);
  assemble(scale);
});

test("host records whose kernel writes two fields: both fields' writes come back from workers, into a RecordArray and into plain objects", () => {
  // each field is an argument over the records' one buffer: staged once, not once per field (then the
  // second field's copy brought the first field back as it was before the launch)
  const Rec = cuda.record({ a: "int8", b: "int64", c: "float32" });
  const mark = cuda.jit((rs: KernelArray1<{ a: number; b: bigint; c: number }>) => {
    const i = cuda.grid(1);
    if (i < rs.length) {
      rs[i].a = i & 63;
      rs[i].b = BigInt(i) * 3n;
    }
  }, { signature: [Rec.array(1)] });
  const n = 4096;
  const objects = Array.from({ length: n }, () => ({ a: -1, b: -1n, c: 0.5 }));
  const records = cuda.recordArray(Rec, Array.from({ length: n }, () => ({ a: -1, b: -1n, c: 0.5 })));
  for (const rs of [objects, records]) {
    const { workerChunks } = withWorkers(2, () => mark.configure(n / 128, 128)(rs));
    assert.ok(workerChunks > 1);
    const got = rs instanceof RecordArray ? rs.toObjects() : rs;
    got.forEach((r, i) => assert.deepEqual(r, { a: i & 63, b: BigInt(i) * 3n, c: 0.5 }, `record ${i}`));
  }
  assemble(mark);
});

test("an array in memory that is not shared (neither a host nor a device array) reaches workers staged, its writes back", () => {
  const twicePlusIndex = (x: Float64Array) => {
    const i = cuda.grid(1);
    if (i < x.length) x[i] = x[i] * 2 + i;
  };
  const ir = compileToIR(twicePlusIndex, [typeOfArgument(new Float64Array(1), 0)], { name: "twicePlusIndex", resolveDeviceFunction });
  const n = 1 << 14, data = new Float64Array(n).fill(1);
  const arg: KernelArg = {
    kind: "array", buffer: { kind: "sim", bytes: data.buffer, byteOffset: 0, byteLength: data.byteLength, freed: false },
    byteOffset: 0, dtype: "float64", shape: [n], strides: [1], name: "x",
  };
  const dims = { grid: [n / 128, 1, 1], block: [128, 1, 1], sharedMemBytes: 0 } as const;
  const { parallel, workerChunks } = withWorkers(2, () => compileSim(ir).launch(dims, [arg], getBackend().defaultStream(), false));
  assert.equal(parallel, 1);
  assert.ok(workerChunks > 0);
  assert.ok(data.every((x, i) => x === 2 + i), "the workers' writes are in the array");
  if (hasPtxas()) for (const t of PTXAS_TARGETS) ptxasCheck(emitPtx(ir, { computeCapability: t.computeCapability }).text, t.arch);
});

test("device arrays live in shared memory: workers write them in place, launch after launch", () => {
  const n = 20_000;
  const d = cuda.toDevice(new Float64Array(n).fill(1));
  const src = cuda.toDevice(Float64Array.from({ length: n }, (_, i) => i));
  assert.ok(d.buffer.kind === "sim" && d.buffer.bytes instanceof SharedArrayBuffer);
  withWorkers(2, () => { for (let r = 0; r < 3; r++) scale.configure(Math.ceil(n / 128), 128)(src, d, 2); });
  const got = d.copyToHost() as Float64Array;
  for (let i = 0; i < n; i += 77) assert.equal(got[i], 1 + 3 * 2 * i);
});

test("a loop of launches sends its job once; new arguments, a new scalar or a new grid send it again", () => {
  const n = 16_384, grid = n / 128;
  const src = cuda.toDevice(Float64Array.from({ length: n }, (_, i) => i));
  const d1 = cuda.toDevice(new Float64Array(n).fill(1)), d2 = cuda.toDevice(new Float64Array(n).fill(5));
  const sent = (f: () => void) => {
    const before = simWorkerStats.jobsSent;
    withWorkers(2, f);
    return simWorkerStats.jobsSent - before;
  };
  assert.ok(sent(() => scale.configure(grid, 128)(src, d1, 2)) > 0);
  assert.equal(sent(() => { for (let r = 0; r < 3; r++) scale.configure(grid, 128)(src, d1, 2); }), 0, "the same job: nothing sent");
  assert.ok(sent(() => scale.configure(grid, 128)(src, d1, 10)) > 0, "a new scalar");
  assert.ok(sent(() => scale.configure(grid, 128)(src, d2, 10)) > 0, "a new array");
  assert.ok(sent(() => scale.configure(grid / 2, 128)(src, d2, 10)) > 0, "a new grid");
  const one = d1.copyToHost() as Float64Array, two = d2.copyToHost() as Float64Array;
  for (let i = 0; i < n; i += 61) {
    assert.equal(one[i], 1 + 4 * 2 * i + 10 * i, `d1[${i}]`);
    assert.equal(two[i], 5 + (i < n / 2 ? 2 : 1) * 10 * i, `d2[${i}]`);
  }
});

test("jobs are the same when their data is: values (0 and -0 apart, NaN alike), buffers by identity, as they were when sent", () => {
  const bytes = new SharedArrayBuffer(8);
  const arg = (o: object = {}) => ({ kind: "array", buffer: { kind: "sim", bytes, byteOffset: 0, byteLength: 8, freed: false }, shape: [2], value: NaN, ...o });
  assert.ok(sameData(arg(), arg()));
  assert.ok(sameData([1, "a", 2n, true, undefined], [1, "a", 2n, true, undefined]));
  assert.ok(!sameData(arg(), arg({ buffer: { kind: "sim", bytes: new SharedArrayBuffer(8), byteOffset: 0, byteLength: 8, freed: false } })));
  assert.ok(!sameData(arg(), arg({ shape: [3] })));
  assert.ok(!sameData(arg(), arg({ value: 1 })));
  assert.ok(!sameData(arg({ value: 0 }), arg({ value: -0 })));
  assert.ok(!sameData(arg(), arg({ extra: 1 })));
  assert.ok(!sameData(arg({ extra: 1 }), arg()));
  assert.ok(!sameData([1], { 0: 1 }));
  // launches update their argument records in place: the job a worker holds is a snapshot
  const job = { args: [arg()] }, sent = snapshot(job);
  assert.ok(sameData(job, sent));
  assert.equal(sent.args[0]!.buffer.bytes, bytes, "buffers are shared, not copied");
  job.args[0]!.value = 2;
  assert.ok(!sameData(job, sent), "a scalar changed in place");
  job.args[0]!.value = NaN;
  job.args[0]!.buffer.freed = true;
  assert.ok(!sameData(job, sent), "a buffer freed since");
});

// ---------------------------------------------------------------------------
// the calling thread and the workers sharing a launch's chunks

/** runs `f` with the calling thread taking chunks too (as launches do outside these tests) */
function callerToo<T>(f: () => T): T {
  simWorkerTuning.callerRuns = true;
  try {
    return f();
  } finally {
    simWorkerTuning.callerRuns = false;
  }
}

/** the change in simWorkerStats over `f` */
function statsOver(f: () => void): typeof simWorkerStats {
  const before = { ...simWorkerStats };
  f();
  return Object.fromEntries(Object.entries(simWorkerStats).map(([k, v]) => [k, v - before[k as keyof typeof before]])) as typeof simWorkerStats;
}

const countBlocks = cuda.jit((hits: Int32Array) => {
  if (cuda.threadIdx.x === 0) cuda.atomic.add(hits, cuda.blockIdx.x, 1);
});

test("caller and worker share the chunks: every block runs exactly once, launch after launch", () => {
  for (const grid of [1000, 37, 2]) {
    const hits = cuda.deviceArray(grid, "int32");
    const launches = 150;
    const d = statsOver(() => withWorkers(2, () => callerToo(() => {
      for (let r = 0; r < launches; r++) countBlocks.configure(grid, 32)(hits);
    })));
    assert.ok([...(hits.copyToHost() as Int32Array)].every((h) => h === launches), `grid ${grid}: each block ${launches} times`);
    // on a loaded machine a stall sends a few launches to the calling thread alone (tested below)
    assert.equal(d.parallelLaunches + d.backedOff, launches);
    // each chunk is counted once, by the side that ran it; a posted worker either joined or was withdrawn
    const chunks = Math.ceil(grid / chunkBlocks(grid, 32 * 4, 2));
    assert.equal(d.callerChunks + d.workerChunks, d.parallelLaunches * chunks, `grid ${grid}`);
    assert.equal(d.joined + d.withdrawn, d.parallelLaunches);
  }
  assemble(countBlocks);
});

test("a worker that joins after the caller has taken every chunk is withdrawn from the launch, which returns without it", () => {
  // launches far apart put the worker to sleep (no spin after two long waits); it then often wakes after the
  // caller has run both of two one-warp blocks, and the caller withdraws the launch from it. Often, not
  // always (ringing a sleeping worker also holds the caller up): launches until one is withdrawn
  const hits = cuda.deviceArray(2, "int32"), pause = new Int32Array(new SharedArrayBuffer(4));
  let launches = 0;
  const d = statsOver(() => withWorkers(2, () => callerToo(() => {
    for (const before = simWorkerStats.withdrawn; simWorkerStats.withdrawn === before && launches < 500; launches++) {
      Atomics.wait(pause, 0, 0, 1);
      countBlocks.configure(2, 32)(hits);
    }
  })));
  assert.ok([...(hits.copyToHost() as Int32Array)].every((h) => h === launches), "every block once per launch");
  assert.equal(d.joined + d.withdrawn, d.parallelLaunches);
  assert.equal(d.withdrawn, 1, `no launch of ${launches} withdrawn from the worker`);
});

const faultFrom = cuda.jit((a: Float32Array, from: number) => {
  const b = cuda.blockIdx.x;
  if (cuda.threadIdx.x === 0) console.log("block %d", b);
  if (b >= from) a[a.length + cuda.threadIdx.x] = 1;
});

test("blocks that fault on both sides: the lowest one's LaunchError, reported once, with the output before it", () => {
  const grid = 200, a = cuda.deviceArray(4, "float32");
  for (const from of [0, 3, 77, 150, 199]) {
    const { result: { error, lines } } = withWorkers(2, () => callerToo(() => {
      let error: unknown;
      const lines = printed(() => { try { faultFrom.configure(grid, 32)(a, from); } catch (e) { error = e; } });
      return { error, lines };
    }));
    assert.ok(error instanceof LaunchError, String(error));
    assert.match(error.message, new RegExp(`index out of bounds: a\\[4\\] with shape \\[4\\] in thread \\(0, 0, 0\\) of block \\(${from}, 0, 0\\)`));
    assert.deepEqual(lines, Array.from({ length: from + 1 }, (_, b) => `block ${b}`), `fault from block ${from}`);
  }
  assemble(faultFrom);
});

test("a worker's result crosses in shared memory as it was: bigint and non-finite indexes, output larger than the channel, taken once", () => {
  const channel = resultChannel();
  const big: RunnerResult = {
    chunks: 3,
    outputs: [[4, "é ".repeat(10_000)], [5, "line\n"]],
    error: { chunk: 5, name: "LaunchError", message: "index out of bounds", bounds: ["a", [2n ** 63n - 1n, NaN, -Infinity, -1], [4], 0, 1, 0, 0, 5, 0, 0] },
  };
  writeResult(channel, big);
  assert.ok(channel.byteLength > 20_000, "the channel grew to hold the output");
  assert.deepEqual(takeResult(channel), big);
  assert.equal(takeResult(channel), undefined, "a result is taken once");
  const small: RunnerResult = { chunks: 1, outputs: [[0, "x\n"]] };
  writeResult(channel, small);
  assert.deepEqual(takeResult(channel), small);
});

test("chunks: about 2^16 units of estimated work each, at least 4 per runner, never more than the blocks", () => {
  assert.equal(chunkBlocks(4096, 3 * 256, 2), Math.ceil(4096 / 48)); // vector add 2^20: 3 units a thread
  assert.equal(chunkBlocks(1024, 700 * 256, 2), 1); // tiled matmul 512²: a block a chunk
  assert.equal(chunkBlocks(100, 10, 2), Math.ceil(100 / 8)); // little work: 4 chunks a runner
  assert.equal(chunkBlocks(3, 10, 4), 1);
});

test("a worker spins for the next launch while launches come close together, not once they come far apart", () => {
  assert.equal(workerSpinMs(0, 0), 0.25);
  assert.equal(workerSpinMs(0.2, 0.1), 0.25);
  assert.equal(workerSpinMs(0.3, 0.3), 0);
  assert.equal(workerSpinMs(50, 50), 0);
  assert.equal(workerSpinMs(50, Infinity), 0); // a worker's first launch
  // the first launch of a loop after a pause: the second comes at once
  assert.equal(workerSpinMs(16, 0.01), 0.25);
  // a loop's later launches
  assert.equal(workerSpinMs(0.01, 16), 0.25);
});

/** a thread that waits `afterMs`, then stores 1 into cell 0 of `cells`, and notifies a sleeper only if `notify` */
function changeLater(cells: Int32Array, afterMs: number, notify: boolean): Promise<number> {
  const code = `const { workerData: { cells, afterMs, notify } } = require("node:worker_threads");
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, afterMs);
    Atomics.store(cells, 0, 1);
    if (notify) Atomics.notify(cells, 0);`;
  const w = new Worker(code, { eval: true, workerData: { cells, afterMs, notify } });
  return new Promise((resolve, reject) => { w.on("error", reject); w.on("exit", resolve); });
}

test("a thread awaiting a cell returns once it changes: at once, while spinning, or woken from its sleep", { timeout: 20_000 }, async () => {
  const cells = new Int32Array(new SharedArrayBuffer(8));
  cells[0] = 7;
  awaitChange(cells, 0, 0, 0); // already changed: neither spins nor sleeps
  awaitChange(cells, 0, 0, 0.25);
  // a change nobody is notified of is seen only by spinning: a spin far longer than the change takes
  cells[0] = 0;
  const quiet = changeLater(cells, 5, false);
  awaitChange(cells, 0, 0, 10_000);
  assert.equal(Atomics.load(cells, 0), 1);
  await quiet;
  // a change after the spin: the sleeper is woken by the notify
  cells[0] = 0;
  const late = changeLater(cells, 50, true);
  const t0 = performance.now();
  awaitChange(cells, 0, 0, 0.1);
  assert.equal(Atomics.load(cells, 0), 1);
  assert.ok(performance.now() - t0 >= 40, "returned before the change");
  await late;
});

test("a stall is a launch slower than the calling thread alone would have been, by more than a hand-out", () => {
  const stalls = (launchMs: number, aloneMs: number) => statsOver(() => noteLaunch(launchMs, aloneMs)).stalls;
  assert.equal(stalls(1.3, 1.6), 0, "a worker kept the caller waiting, but the launch still gained");
  assert.equal(stalls(0.05, 0.002), 0, "a small launch's hand-out");
  assert.equal(stalls(2.5, 1.6), 1, "the caller waited a time slice for a worker");
  assert.equal(stalls(2.2, 1.6), 1, "both threads shared one core (another process has the other)");
  assert.equal(stalls(3.1, 0), 1, "the woken worker took the caller's core");
});

test("after stalls in a run (a loaded machine), the next launches run in the calling thread, then workers again; a lone stall backs nothing off", () => {
  const n = 20_000, a = new Float32Array(n).fill(2), c = new Float32Array(n);
  const launch = () => vadd.configure(Math.ceil(n / 128), 128)(a, a, c);
  // from no back-off (earlier tests may have stalled): launches without a stall, then the launches left
  for (let i = 0; i < 7; i++) noteLaunch(0.1, 0.1);
  while (statsOver(() => withWorkers(2, launch)).backedOff > 0);
  noteLaunch(50, 0.1); // a lone stall (a virtual machine's hiccup): workers go on
  const lone = statsOver(() => withWorkers(2, launch));
  assert.deepEqual([lone.backedOff, lone.parallelLaunches], [0, 1]);
  noteLaunch(50, 0.1); // a second stall soon after: one launch in the calling thread
  const first = statsOver(() => withWorkers(2, () => { launch(); launch(); }));
  assert.deepEqual([first.backedOff, first.parallelLaunches, first.stalls], [1, 1, 0]);
  noteLaunch(50, 0.1); // another in a row: two launches
  const second = statsOver(() => withWorkers(2, () => { launch(); launch(); launch(); }));
  assert.deepEqual([second.backedOff, second.parallelLaunches], [2, 1]);
  // stalls further apart than a run are lone ones again
  for (let i = 0; i < 7; i++) noteLaunch(0.1, 0.1);
  noteLaunch(50, 0.1);
  assert.equal(statsOver(() => withWorkers(2, launch)).backedOff, 0);
  assert.ok(c.every((x) => x === Math.fround(Math.fround(Math.fround(0.1) * 2) + 2)));
});

// ---------------------------------------------------------------------------
// what stays in the calling thread

const gridSum = cuda.jit((v: Int32Array, partial: Int32Array, total: Int32Array) => {
  const i = cuda.grid(1);
  if (cuda.threadIdx.x === 0) partial[cuda.blockIdx.x] = 0;
  cuda.cg.thisGrid().sync();
  if (i < v.length) cuda.atomic.add(partial, cuda.blockIdx.x, v[i]);
  cuda.cg.thisGrid().sync();
  if (i === 0) {
    let s = 0;
    for (let b = 0; b < cuda.gridDim.x; b++) s += partial[b];
    total[0] = s;
  }
});

test("a cooperative launch (grid sync) runs in the calling thread, where all its blocks are live at once", () => {
  const n = 8 * 64;
  const v = Int32Array.from({ length: n }, (_, i) => i * 3);
  const total = new Int32Array(1);
  const { parallel } = withWorkers(2, () => gridSum.configure(8, 64)(v, new Int32Array(8), total));
  assert.equal(parallel, 0);
  assert.equal(total[0], v.reduce((s, x) => s + x, 0));
  assemble(gridSum);
});

test("launches too small to gain, and NUMBATS_SIM_WORKERS=1, run in the calling thread", () => {
  const n = 4096;
  const a = new Float32Array(n).fill(1), c = new Float32Array(n);
  const launch = () => vadd.configure(n / 128, 128)(a, a, c);
  simWorkerTuning.minWork = savedTuning.minWork;
  try {
    assert.equal(withWorkers(2, launch).parallel, 0, "a 4096-thread vector add is small");
  } finally {
    simWorkerTuning.minWork = 0;
  }
  assert.equal(withWorkers(1, launch).parallel, 0);
  assert.equal(withWorkers(2, launch).parallel, 1);
  assert.ok(c.every((x) => x === Math.fround(Math.fround(0.1) + 1)));
});

test("NUMBATS_SIM_WORKERS that is not a whole number of threads is a LaunchError naming it", () => {
  const c = new Float32Array(256);
  for (const bad of ["0", "two", "1.5"]) {
    assert.throws(() => withWorkers(bad as unknown as number, () => vadd.configure(2, 128)(c, c, c)),
      (e: unknown) => e instanceof LaunchError && e.message.includes(`NUMBATS_SIM_WORKERS must be a whole number`) && e.message.includes(`'${bad}'`));
  }
});
