// The simulator on many cores: the blocks of a launch run on worker threads
// over shared memory (NUMBATS_SIM_WORKERS, docs/runtime.md). What the caller and the workers share (the
// job, the control block, running chunks) is in sim-chunks.ts.
//
// A launch hands its blocks out in chunks through a shared counter: the
// calling thread and every started worker take the next chunk until none is
// left, so a busy or still-starting worker costs nothing (the first large
// launches run in the calling thread while the workers boot). A worker joins a
// launch posted to it before it takes a chunk; once every chunk is taken, the
// caller withdraws the launch from the workers that have not joined yet and
// waits only for those that have: a worker the OS has not scheduled (a loaded
// machine) never holds a launch up, and skips the withdrawn launch when it
// runs. One control block in shared memory serves every launch (they come
// one at a time). A worker waits for launches on its doorbell (Atomics.wait),
// not in its event loop, which wakes slower: the caller sends the launch's
// job on the worker's port (only when it differs from the worker's last: a
// loop of launches sends none) and counts it in the worker's jobsSent slot,
// writes the launch's number into the worker's slot of the control block,
// then rings (a browser's worker, which cannot read its port while it blocks,
// leaves the doorbell for its event loop when a job is on its way: sim-worker-loop.ts). Waking a sleeping thread costs
// 0.05–0.2 ms here (a 2 ms launch's tenth), so both sides spin a little before
// they sleep (Atomics.wait): the caller, when its share is done, for the
// joined workers to finish, as long as two chunks take (they have a chunk left
// at most; SPIN_MS at most; a launch that ends slower than one thread is a
// stall, below); a worker, after
// a launch, for up to SPIN_MS for the next (launches in a loop follow each
// other at once), but not after two longer waits in a row: launches far apart,
// or a loaded machine, where a spinning worker takes the core the caller needs. The
// caller then reads the
// results of the workers that have something to report (printf output, a
// fault) from their channels in shared memory (sim-chunks.ts writeResult) and:
//  - prints the printf output of the chunks in block order, each chunk's
//    lines whole, as one thread would have printed them;
//  - on a fault, throws the error of the lowest failing chunk: chunks are
//    taken in order and a chunk runs its blocks in order, so that is the
//    error the single-thread simulator throws (no chunk after it starts);
//  - copies host arrays the kernel writes back from their shared copies,
//    only if the launch succeeded.
// Device arrays already live in SharedArrayBuffers (sim-backend.ts); other
// host arrays are copied into a shared staging area for the launch.
//
// Workers compile the same generated code, with `Atomics`-based atomics on
// global memory (backends/sim/runtime/shared-atomics.ts). Cooperative launches (grid
// sync) stay in the calling thread: their blocks must all be live at once.

import { availableParallelism } from "node:os";
import type { KernelInfo } from "../../../abi/kernel-info.js";
import { LaunchError } from "../../../errors.js";
import { oob, type AccessSite } from "./runtime.js";
import type { KernelArg, LaunchDims } from "../../../abi/backend.js";
import { isSimBuffer, type SimBuffer } from "./buffer.js";
import {
  awaitChange, compileShared, CTL, MARKS, monotonicUs, NO_FAILURE, resultChannel, runChunks, SPIN_MS, takeResult,
  type FailedChunk, type Job, type KernelFn, type KernelPayload, type RunnerResult, type WorkerInit,
} from "./sim-chunks.js";
import { startWorker, workerCode, type JobPort } from "../../../workers/worker-entry.js";

/**
 * Settings tests turn (the launch size that goes to workers; whether the calling thread takes blocks too).
 * minWork, measured on 2 cores: a 2-worker launch costs about 0.05–0.1 ms more than it saves below
 * a 2^17-thread vector add (work 3 a thread), and gains 1.5× from 2^18 threads on.
 */
export const simWorkerTuning = { minWork: 1 << 19, callerRuns: true };

/**
 * What the launches so far did, for tests and the bench: launches that used workers; chunks the workers
 * and the calling thread ran; posted launches workers joined, and those withdrawn before they did; the
 * joined workers' hand-out latencies (post to join) summed; stalls (launches slower than the calling
 * thread alone, noteLaunch), and the launches that ran in the calling thread after them; jobs sent to workers (a launch that
 * repeats a worker's last job sends none).
 */
export const simWorkerStats = {
  parallelLaunches: 0, workerChunks: 0, callerChunks: 0, joined: 0, withdrawn: 0, handOutMs: 0, stalls: 0, backedOff: 0, jobsSent: 0,
};

/** One launch on workers, for the bench: µs from the caller's entry (monotonicUs); NaN where a worker did not get there. */
export interface LaunchTimeline {
  /** the caller: launch posted to the workers, its first chunk taken, its last run, the joined workers done, return */
  readonly posted: number;
  readonly callerStart: number;
  readonly callerEnd: number;
  readonly collected: number;
  readonly end: number;
  /** the launch's chunks, and those the caller ran */
  readonly chunks: number;
  readonly callerChunks: number;
  /** each posted worker: woken, joined, chunks run (WORKER_MARK) */
  readonly workers: readonly (readonly number[])[];
}

/** Records the timeline of each launch on workers while `on` (the bench turns it on; off, nothing is timed). */
export const simWorkerTimeline = { on: false, launches: [] as LaunchTimeline[] };

// ---------------------------------------------------------------------------
// how many runners a launch gets

/** NUMBATS_SIM_WORKERS, or the available cores */
export function configuredWorkers(): number {
  const text = process.env.NUMBATS_SIM_WORKERS;
  if (text === undefined || text.trim() === "") return availableParallelism();
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw new LaunchError(`NUMBATS_SIM_WORKERS must be a whole number of threads, 1 or more (1 runs launches in the calling thread), got '${text}'`);
  }
  return n;
}

/** the work (KernelInfo.work units) of a chunk: about 30 µs of a vector add, so taking a chunk (0.5 µs) costs ~2 % */
const CHUNK_WORK = 1 << 16;

/**
 * Blocks per chunk: chunks of about CHUNK_WORK, and at least 4 per runner, so that the runners end within
 * a small chunk of each other.
 */
export function chunkBlocks(blocks: number, blockWork: number, runners: number): number {
  const chunks = Math.min(blocks, Math.max(4 * runners, Math.round((blocks * blockWork) / CHUNK_WORK)));
  return Math.ceil(blocks / chunks);
}

/** the runners for a launch: 1 (the calling thread alone) unless it is large enough to gain */
export function runnersFor(work: number, dims: LaunchDims, cooperative: boolean): number {
  if (cooperative) return 1;
  const threads = dims.grid[0] * dims.grid[1] * dims.grid[2] * dims.block[0] * dims.block[1] * dims.block[2];
  if (threads * work < simWorkerTuning.minWork) return 1;
  return Math.min(configuredWorkers(), dims.grid[0] * dims.grid[1] * dims.grid[2]);
}

// ---------------------------------------------------------------------------
// the pool

interface PoolWorker {
  readonly index: number;
  readonly port: JobPort;
  /** its result channel (WorkerInit.results) */
  readonly results: SharedArrayBuffer;
  /** kernels this worker has compiled */
  readonly known: Set<number>;
  /** the last job it was sent, as it was then */
  lastJob?: Job;
}

const MAX_WORKERS = 256;
const ready = new Int32Array(new SharedArrayBuffer(4 * MAX_WORKERS));
const bell = new Int32Array(new SharedArrayBuffer(4 * MAX_WORKERS));
const jobsSent = new Int32Array(new SharedArrayBuffer(4 * MAX_WORKERS));
const ctl = new Int32Array(new SharedArrayBuffer(4 * (CTL.posted + MAX_WORKERS)));
const postedAt = new Float64Array(new SharedArrayBuffer(8));
const marks = new Float64Array(new SharedArrayBuffer(8 * MARKS * MAX_WORKERS));
let lastSeq = 0;
const pool: PoolWorker[] = [];
/** why no more workers start (the first that could not), once one could not */
let failure: string | undefined;

/** Stops starting workers, saying why on one line of stderr: the launches run without them, never silently. */
function fallBack(reason: string): void {
  if (failure !== undefined) return;
  failure = reason;
  process.stderr.write(`numbats: the simulator runs launches on the calling thread without worker threads: ${reason}\n`);
}

/** starts workers up to `n` (kept for later launches; they do not keep the process alive) */
function growPool(n: number): void {
  if (n <= pool.length || failure !== undefined) return;
  let code: string;
  try {
    code = workerCode("sim-worker");
  } catch (e) {
    fallBack((e as Error).message);
    return;
  }
  while (pool.length < Math.min(n, MAX_WORKERS)) {
    const index = pool.length;
    const results = resultChannel();
    const init: Omit<WorkerInit, "port"> = { ready, bell, jobsSent, results, ctl, postedAt, marks, index };
    // a worker that fails never reports ready (again): the launches run without it
    const port = startWorker(code, init, (message) => {
      Atomics.store(ready, index, 0);
      fallBack(`a worker thread failed: ${message}`);
    });
    pool.push({ index, port, results, known: new Set() });
  }
}

/** resolves once `n` workers are started and ready (tests; launches never wait for a worker to boot) */
export async function simWorkersReady(n: number, timeoutMs = 60_000): Promise<void> {
  growPool(n);
  const t0 = Date.now();
  while (pool.slice(0, n).some((_, i) => Atomics.load(ready, i) === 0)) {
    if (failure !== undefined) throw new Error(`simulator workers cannot start: ${failure}`);
    if (Date.now() - t0 > timeoutMs) throw new Error(`simulator workers did not start within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Starts the worker threads launches use and resolves once they take launches; at once where they
 * cannot start (simWorkerStatus says why). A browser starts a thread only once the thread that creates
 * it returns to its event loop: there a program that launches without awaiting this first runs its
 * launches on its own thread.
 */
export async function startSimWorkers(): Promise<void> {
  const { max, fallback } = simWorkerStatus();
  if (fallback === undefined && max > 0) await simWorkersReady(max);
}

/** What the simulator's worker threads are doing, for cuda.detect() and `numbats -s`. */
export interface SimWorkerStatus {
  /** the most worker threads launches start (NUMBATS_SIM_WORKERS counts the calling thread too) */
  readonly max: number;
  /** worker threads started and ready */
  readonly running: number;
  /** block chunks the worker threads ran so far */
  readonly chunks: number;
  /** why launches run on the calling thread alone, where the workers cannot start */
  readonly fallback?: string;
}

export function simWorkerStatus(): SimWorkerStatus {
  if (failure === undefined && pool.length === 0) {
    try {
      workerCode("sim-worker"); // whether they could start, before the first launch starts them
    } catch (e) {
      return { max: 0, running: 0, chunks: 0, fallback: (e as Error).message };
    }
  }
  const max = failure === undefined ? Math.min(MAX_WORKERS, configuredWorkers() - (simWorkerTuning.callerRuns ? 1 : 0)) : pool.length;
  const running = pool.filter((w) => Atomics.load(ready, w.index) === 1).length;
  return { max, running, chunks: simWorkerStats.workerChunks, ...(failure === undefined ? {} : { fallback: failure }) };
}

/** `simWorkerStatus()` in words: one line. */
export function describeSimWorkers(s: SimWorkerStatus = simWorkerStatus()): string {
  if (s.fallback !== undefined) return `${s.running} running; launches run on the calling thread alone: ${s.fallback}`;
  if (s.max === 0) return "none (NUMBATS_SIM_WORKERS=1): launches run on the calling thread";
  return `${s.running} running of up to ${s.max} (they start at the first launch large enough to share), ${s.chunks} block chunks run on them so far`;
}

// ---------------------------------------------------------------------------
// launches

/**
 * Whether two jobs hold the same data: plain values and arrays alike, buffers by identity. Generic, so that
 * a field added to an argument cannot be missed.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b);
  if (a instanceof ArrayBuffer || a instanceof SharedArrayBuffer) return a === b;
  // plain loops: this runs at every launch on workers, and closures allocated per level
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (!sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

/**
 * A copy of plain data (a job) that later changes to the original do not reach, buffers shared: launches
 * update their argument records in place (a scalar's value, a buffer's `freed`).
 */
export function snapshot<T>(v: T): T {
  if (typeof v !== "object" || v === null || v instanceof ArrayBuffer || v instanceof SharedArrayBuffer) return v;
  if (Array.isArray(v)) return v.map(snapshot) as T;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, snapshot(x)])) as T;
}

let nextKernelId = 0;

/** A compiled kernel's launches on several runners. */
export class ParallelKernel {
  private readonly id = nextKernelId++;
  private readonly work: number;
  private shared: KernelFn | undefined;
  /** the calling thread's time per block of this kernel, when it last ran chunks (ms): one thread's speed */
  private blockMs = NaN;

  constructor(private readonly info: KernelInfo, private readonly payload: KernelPayload) {
    this.work = info.work * (payload.code.includes("function* thread") ? 8 : 1);
  }

  /**
   * The payload as a worker gets it: the sites without the kernel function that places them in the user's
   * file (a function cannot be posted; the calling thread words bounds faults with its own sites).
   */
  private clonablePayload(): KernelPayload {
    return { ...this.payload, sites: this.payload.sites.map(({ origin: _origin, ...site }) => site) };
  }

  /** the runners a launch of these dimensions gets (1: run it in the calling thread as usual) */
  runners(dims: LaunchDims, cooperative: boolean): number {
    const runners = runnersFor(this.work, dims, cooperative);
    return runners > 1 && backingOff() ? 1 : runners;
  }

  /** runs the launch's blocks on the calling thread and up to `runners - 1` workers; throws what one thread would */
  launch(dims: LaunchDims, args: readonly KernelArg[], runners: number): void {
    const moments = simWorkerTimeline.on ? new Moments() : undefined;
    const callerRuns = simWorkerTuning.callerRuns;
    growPool(runners - (callerRuns ? 1 : 0));
    const staged = stageHostArrays(this.info, args);
    const begun = performance.now(); // the copies of host arrays aside: one thread makes its own
    const total = dims.grid[0] * dims.grid[1] * dims.grid[2];
    const seq = lastSeq = lastSeq === NO_FAILURE ? 1 : lastSeq + 1;
    const job: Job = {
      kernel: this.id, args: staged.args, dims, chunk: chunkBlocks(total, this.work * dims.block[0] * dims.block[1] * dims.block[2], runners), total,
    };
    ctl.fill(0, 0, CTL.posted);
    Atomics.store(ctl, CTL.fail, NO_FAILURE);
    if (moments) { ctl[CTL.timeline] = 1; marks.fill(NaN); }
    const posted = pool.filter((w) => Atomics.load(ready, w.index) === 1).slice(0, runners - (callerRuns ? 1 : 0));
    this.post(posted, job, seq);
    moments?.mark("posted");
    const results: RunnerResult[] = [];
    let fromWorkers: RunnerResult[];
    try {
      if (callerRuns || posted.length === 0) {
        const fn = this.shared ??= compileShared(this.payload);
        const start = performance.now();
        moments?.mark("callerStart");
        const own = runChunks(fn, job, ctl);
        moments?.mark("callerEnd");
        if (own.chunks > 0) this.blockMs = (performance.now() - start) / (own.chunks * job.chunk);
        results.push(own);
      }
    } finally {
      // always: a result left unread would be taken for the next launch's
      // a running worker has a chunk left at most: spinning longer waits for one the OS has stopped,
      // on the core it may need
      fromWorkers = collect(posted, seq, callerRuns, Math.min(SPIN_MS, 2 * this.blockMs * job.chunk) || SPIN_MS);
      moments?.mark("collected");
      if (callerRuns && this.blockMs > 0) noteLaunch(performance.now() - begun, this.blockMs * total);
    }
    tally(results);
    const callerChunks = results[0]?.chunks ?? 0;
    results.push(...fromWorkers);
    finish(results, this.payload.sites);
    staged.copyBack();
    moments?.record(Math.ceil(total / job.chunk), callerChunks, posted);
  }

  /** hands the launch to the workers: its job to those whose last job differs, its number, the doorbell */
  private post(workers: readonly PoolWorker[], job: Job, seq: number): void {
    postedAt[0] = monotonicUs();
    for (const w of workers) {
      if (!sameData(job, w.lastJob)) {
        w.port.postMessage(w.known.has(this.id) ? job : { ...job, payload: this.clonablePayload() });
        w.known.add(this.id);
        w.lastJob = snapshot(job);
        Atomics.add(jobsSent, w.index, 1); // after the job: a worker that sees the count has it, or will
        simWorkerStats.jobsSent++;
      }
      Atomics.store(ctl, CTL.posted + w.index, seq); // after the job: a worker that sees the number has the job
      Atomics.add(bell, w.index, 1);
      Atomics.notify(bell, w.index);
    }
  }
}

/** The caller's moments of a launch whose timeline is recorded (simWorkerTimeline), µs from its start. */
class Moments {
  private readonly t0 = monotonicUs();
  private readonly at = { posted: NaN, callerStart: NaN, callerEnd: NaN, collected: NaN };

  mark(what: keyof Moments["at"]): void {
    this.at[what] = monotonicUs() - this.t0;
  }

  /** adds the launch, with the posted workers' marks, to simWorkerTimeline (the launch returns) */
  record(chunks: number, callerChunks: number, posted: readonly PoolWorker[]): void {
    simWorkerTimeline.launches.push({
      ...this.at, end: monotonicUs() - this.t0, chunks, callerChunks,
      workers: posted.map((w) => [...marks.subarray(MARKS * w.index, MARKS * (w.index + 1))].map((t) => t - this.t0)),
    });
  }
}

/**
 * On a loaded machine the OS stops a worker in the middle of a chunk now and then, and the caller waits
 * for it to run again (a time slice: milliseconds, where the launch takes one or two); or the worker the
 * caller wakes takes the caller's core, and the caller waits. Such a launch is a stall: slower than the
 * calling thread alone would have been, by more than STALL_MS. A stall that follows another within
 * STALL_RUN launches on workers means a loaded machine: the next launches run in the calling thread, 1
 * after the first such stall, twice as many after each one that follows (up to MAX_BACKOFF), half as many
 * after each launch without one. A lone stall is not: a virtual machine's own hiccups (a thread off its
 * core for a few milliseconds, in some 5–8 % of 1 ms launches on an otherwise idle 2-vCPU machine) come
 * one at a time, and backing off after each would run a tenth of the launches on one thread, then wake a
 * sleeping worker for the next. A worker that kept the caller waiting a little (a launch still faster
 * than one thread) is no stall: backing off would lose more.
 */
const MAX_BACKOFF = 64;
const STALL_RUN = 4;
const backoff = { level: 0, left: 0, sinceStall: Infinity };
/** what a stall costs at least: more than a small launch's hand-out (0.05–0.1 ms), less than a time slice */
const STALL_MS = 0.15;

/** a launch on workers took `launchMs`; the calling thread alone would have taken about `aloneMs` */
export function noteLaunch(launchMs: number, aloneMs: number): void {
  if (launchMs > aloneMs + STALL_MS) {
    simWorkerStats.stalls++;
    if (backoff.sinceStall < STALL_RUN) {
      backoff.level = Math.min(MAX_BACKOFF, 2 * backoff.level || 1);
      backoff.left = backoff.level;
    }
    backoff.sinceStall = 0;
  } else {
    backoff.sinceStall++;
    backoff.level >>= 1;
  }
}

/** whether a launch large enough for workers runs in the calling thread, backing off after a stall */
function backingOff(): boolean {
  if (backoff.left === 0) return false;
  backoff.left--;
  simWorkerStats.backedOff++;
  return true;
}

/**
 * Withdraws the launch from the posted workers that have not joined it (when the caller has taken the
 * last chunk: `withdraw`), waits for those that have to finish, and reads the results they left
 * (those with output or a fault).
 */
function collect(posted: readonly PoolWorker[], seq: number, withdraw: boolean, spinMs: number): RunnerResult[] {
  const joined = withdraw ? posted.filter((w) => Atomics.compareExchange(ctl, CTL.posted + w.index, seq, 0) !== seq) : posted;
  for (let done = Atomics.load(ctl, CTL.done); done < joined.length; done = Atomics.load(ctl, CTL.done)) awaitChange(ctl, CTL.done, done, spinMs);
  simWorkerStats.joined += joined.length;
  simWorkerStats.withdrawn += posted.length - joined.length;
  return joined.flatMap((w) => takeResult(w.results) ?? []);
}

function tally(callerResults: readonly RunnerResult[]): void {
  simWorkerStats.parallelLaunches++;
  simWorkerStats.workerChunks += Atomics.load(ctl, CTL.chunks);
  simWorkerStats.callerChunks += callerResults.reduce((n, r) => n + r.chunks, 0);
  simWorkerStats.handOutMs += Atomics.load(ctl, CTL.lagUs) / 1000;
}

/** prints the output in block order (up to the first failure) and throws that failure */
function finish(results: readonly RunnerResult[], sites: readonly AccessSite[]): void {
  let failed: FailedChunk | undefined;
  for (const r of results) if (r.error && (!failed || r.error.chunk < failed.chunk)) failed = r.error;
  const outputs = results.flatMap((r) => r.outputs).filter(([c]) => !failed || c <= failed.chunk);
  if (outputs.length > 0) process.stdout.write(outputs.sort((a, b) => a[0] - b[0]).map(([, text]) => text).join(""));
  if (failed) throw rebuild(failed, sites);
}

function rebuild(f: FailedChunk, sites: readonly AccessSite[]): Error {
  if (f.bounds) {
    const [name, index, shape, site, ...where] = f.bounds;
    try {
      oob(name, index, shape, sites[site]!, ...where);
    } catch (e) {
      return e as Error;
    }
  }
  if (f.name === "LaunchError") return new LaunchError(f.message);
  const e = new Error(f.message);
  e.name = f.name;
  return e;
}

// ---------------------------------------------------------------------------
// host arrays: used in place by a launch in the calling thread (backed up if written), copied into
// shared memory for workers (and back if written); either way as they were if the launch fails

/** the buffers of host arrays a launch uses in place (sim-backend.ts wrapHostArray) */
export const hostBuffers = new WeakSet<SimBuffer>();

const isHostArray = (info: KernelInfo, a: KernelArg, i: number, written: boolean): a is KernelArg & { buffer: SimBuffer } =>
  a.kind === "array" && isSimBuffer(a.buffer) && hostBuffers.has(a.buffer) && (!written || info.writtenParams.has(info.params[i]!.name));

/** reused from launch to launch: allocating megabytes anew is slow on a loaded machine */
let backups = new ArrayBuffer(0);

/**
 * Backs up the host arrays the kernel writes (into one reused buffer) for a launch in the calling
 * thread; the function returned puts them back (after a failed launch).
 */
export function keepHostArrays(info: KernelInfo, args: readonly KernelArg[]): () => void {
  let need = 0;
  args.forEach((a, i) => { if (isHostArray(info, a, i, true)) need += a.buffer.byteLength; });
  if (need === 0) return () => {};
  if (backups.byteLength < need) backups = new ArrayBuffer(need);
  const saved: [copy: Uint8Array, to: Uint8Array][] = [];
  let cursor = 0;
  args.forEach((a, i) => {
    if (!isHostArray(info, a, i, true)) return;
    const bytes = new Uint8Array(a.buffer.bytes, a.buffer.byteOffset, a.buffer.byteLength);
    const copy = new Uint8Array(backups, cursor, bytes.length);
    copy.set(bytes);
    cursor += bytes.length;
    saved.push([copy, bytes]);
  });
  return () => { for (const [copy, to] of saved) to.set(copy); };
}

let staging = new SharedArrayBuffer(0);

/**
 * The launch's arguments with every host array (used in place by a launch in the calling thread), and
 * any other array not in shared memory, replaced by a copy in the staging area; `copyBack` returns the
 * copies of written ones to their arrays.
 */
function stageHostArrays(info: KernelInfo, args: readonly KernelArg[]): { args: KernelArg[]; copyBack: () => void } {
  // host arrays, and any other memory that is not shared (it would reach a worker as a copy)
  const outside = (a: KernelArg, i: number): a is KernelArg & { buffer: SimBuffer } =>
    isHostArray(info, a, i, false) || (a.kind === "array" && isSimBuffer(a.buffer) && !(a.buffer.bytes instanceof SharedArrayBuffer));
  // one copy per buffer: the fields of an array of records are several arguments over one buffer, and
  // copies of their own would each bring back the others' bytes as they were before the launch
  const buffers = new Set<SimBuffer>();
  args.forEach((a, i) => { if (outside(a, i)) buffers.add(a.buffer); });
  if (buffers.size === 0) return { args: [...args], copyBack: () => {} };
  let need = 0;
  for (const b of buffers) need += b.byteLength + 16;
  if (staging.byteLength < need) staging = new SharedArrayBuffer(need);
  let cursor = 0;
  const copies = new Map<SimBuffer, { buffer: SimBuffer; copy: Uint8Array; original: Uint8Array }>();
  for (const src of buffers) {
    // the copy keeps the bytes' alignment modulo 8, which typed views over it need
    const at = ((cursor + 7) & ~7) + (src.byteOffset & 7);
    cursor = at + src.byteLength;
    const original = new Uint8Array(src.bytes, src.byteOffset, src.byteLength);
    const copy = new Uint8Array(staging, at, src.byteLength);
    copy.set(original);
    copies.set(src, { buffer: { kind: "sim", bytes: staging, byteOffset: at, byteLength: src.byteLength, freed: false }, copy, original });
  }
  const back = new Set<{ copy: Uint8Array; original: Uint8Array }>();
  const staged = args.map((a, i) => {
    if (!outside(a, i)) return a;
    const c = copies.get(a.buffer)!;
    if (info.writtenParams.has(info.params[i]!.name)) back.add(c);
    return { ...a, buffer: c.buffer };
  });
  return { args: staged, copyBack: () => { for (const { copy, original } of back) original.set(copy); } };
}
