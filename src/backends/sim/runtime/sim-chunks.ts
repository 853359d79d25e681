// What the two sides of a launch on worker threads share (sim-workers.ts posts launches, sim-worker.ts
// runs them): the job, the control block in shared memory, how a runner takes and runs chunks of blocks,
// and how it reports a fault.

import type { MessagePort } from "node:worker_threads";
import type { AccessSite } from "./runtime.js";
import { workerRuntime } from "./shared-atomics.js";
import type { LaunchCtx } from "./sim.js";
import type { KernelArg, LaunchDims } from "../../../abi/backend.js";

export type KernelFn = (L: LaunchCtx, args: readonly KernelArg[]) => void;

/** What a worker needs to compile a kernel (sent the first time a worker runs it). */
export interface KernelPayload {
  readonly code: string;
  readonly consts: readonly ArrayBufferView[];
  readonly sites: readonly AccessSite[];
}

/**
 * What a launch runs, as each runner (a worker or the calling thread) sees it. A worker is sent a job only
 * when it differs from the last one it was sent (launches in a loop repeat theirs: sending one costs
 * 0.02–0.05 ms); the launch itself is its number in the worker's CTL.posted slot.
 */
export interface Job {
  readonly kernel: number;
  readonly payload?: KernelPayload;
  readonly args: readonly KernelArg[];
  readonly dims: LaunchDims;
  /** blocks per chunk, and blocks in all */
  readonly chunk: number;
  readonly total: number;
}

/** the slots of the control block (an Int32Array over shared memory), reset for each launch */
export const CTL = {
  /** the next chunk to take */
  next: 0,
  /** workers that joined the launch and finished it */
  done: 1,
  /** the lowest chunk that failed (NO_FAILURE while none did) */
  fail: 2,
  /** chunks the workers ran */
  chunks: 3,
  /** the joined workers' hand-out latencies (post to join), summed, in µs */
  lagUs: 4,
  /** 1 while the launch's timeline is recorded (simWorkerTimeline) */
  timeline: 5,
  /** from here, one slot per worker: the number (never 0) of a launch posted to it that it has not joined, else 0 */
  posted: 8,
} as const;
export const NO_FAILURE = 0x7fffffff;

/** a bounds fault's arguments to `oob`, the access site by its index in the kernel's sites */
type BoundsArgs = [name: string, index: readonly (number | bigint)[], shape: readonly number[], site: number,
  tx: number, ty: number, tz: number, bx: number, by: number, bz: number];

export interface FailedChunk {
  readonly chunk: number;
  readonly name: string;
  readonly message: string;
  /** a bounds fault, for the calling thread to word: it quotes the source line through the user's source maps */
  readonly bounds?: BoundsArgs;
}

/** thrown by runners' generated code at a bounds fault, in place of the worded LaunchError */
class BoundsFault {
  constructor(readonly args: BoundsArgs) {}
}

/** What a runner reports: each chunk's printf output, and its fault if one failed. */
export interface RunnerResult {
  /** chunks run */
  readonly chunks: number;
  readonly outputs: [chunk: number, text: string][];
  readonly error?: FailedChunk;
}

/** What a worker is started with. */
export interface WorkerInit {
  /** launches' jobs come in on it */
  readonly port: MessagePort;
  /** bumped at `index` after each job sent on the port: a worker that has read fewer waits for the next */
  readonly jobsSent: Int32Array;
  /** the worker's result channel: where a launch's result that has something to report goes (writeResult) */
  readonly results: SharedArrayBuffer;
  /** set to 1 at `index` once the worker takes launches */
  readonly ready: Int32Array;
  /** bumped at `index` (and notified) when a launch was posted to the worker */
  readonly bell: Int32Array;
  /** the control block (CTL) */
  readonly ctl: Int32Array;
  /** when the caller posted the current launch (monotonicUs), for the hand-out latency and the worker's spin */
  readonly postedAt: Float64Array;
  /** the worker's marks of a recorded launch, at MARKS × index (WORKER_MARK; µs on monotonicUs) */
  readonly marks: Float64Array;
  readonly index: number;
}

// ---------------------------------------------------------------------------
// results in shared memory: a caller that waits in Atomics.wait reads them synchronously, in Node.js and
// in a browser alike (which has no synchronous read of a port)

/** a growable SharedArrayBuffer (ES2024; Node.js 20 and browsers have it, the TypeScript lib here not yet) */
type Growable = SharedArrayBuffer & { grow(byteLength: number): void; readonly maxByteLength: number };

/** the most a worker's result may take (printf output): reserved address space, grown into as needed */
const MAX_RESULT_BYTES = 1 << 28;
/** the channel's header: the byte length of the result it holds (0: none) */
const RESULT_HEADER = 4;

/** A worker's result channel, for WorkerInit.results. */
export function resultChannel(): SharedArrayBuffer {
  return new (SharedArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => Growable)(1 << 12, { maxByteLength: MAX_RESULT_BYTES });
}

/** numbers JSON has no text for (bigint indexes, NaN), tagged */
const TAG = "\u0000numbats:";
const encodeValue = (_key: string, v: unknown): unknown =>
  typeof v === "bigint" || (typeof v === "number" && !Number.isFinite(v)) ? `${TAG}${typeof v === "bigint" ? "n" : ""}${v}` : v;
const decodeValue = (_key: string, v: unknown): unknown => {
  if (typeof v !== "string" || !v.startsWith(TAG)) return v;
  const text = v.slice(TAG.length);
  return text.startsWith("n") ? BigInt(text.slice(1)) : Number(text);
};

/** a worker leaves its launch's result in its channel (before it counts itself done) */
export function writeResult(channel: SharedArrayBuffer, r: RunnerResult): void {
  let bytes = new TextEncoder().encode(JSON.stringify(r, encodeValue));
  if (RESULT_HEADER + bytes.length > MAX_RESULT_BYTES) {
    const failed: FailedChunk = { chunk: r.error?.chunk ?? r.outputs[0]![0], name: "LaunchError", message: `a worker thread's printf output in one launch exceeds ${MAX_RESULT_BYTES >> 20} MiB` };
    bytes = new TextEncoder().encode(JSON.stringify({ chunks: r.chunks, outputs: [], error: failed }));
  }
  const need = RESULT_HEADER + bytes.length;
  if (channel.byteLength < need) (channel as Growable).grow(Math.min(MAX_RESULT_BYTES, Math.max(need, 2 * channel.byteLength)));
  new Uint8Array(channel, RESULT_HEADER, bytes.length).set(bytes);
  Atomics.store(new Int32Array(channel, 0, 1), 0, bytes.length);
}

/** the caller takes the result a worker left, if any (after the worker counted itself done) */
export function takeResult(channel: SharedArrayBuffer): RunnerResult | undefined {
  const header = new Int32Array(channel, 0, 1);
  const length = Atomics.load(header, 0);
  if (length === 0) return undefined;
  header[0] = 0;
  // a copy: TextDecoder does not read shared memory in a browser
  const text = new TextDecoder().decode(new Uint8Array(channel, RESULT_HEADER, length).slice());
  return JSON.parse(text, decodeValue) as RunnerResult;
}

/** the longest a thread spins before it sleeps (the caller for the workers to finish, a worker for a launch) */
export const SPIN_MS = 0.25;

/**
 * Loads of the awaited cell between two looks at the clock while spinning (well under a microsecond of
 * them): a clock read allocates its result, and a worker that read it at every turn of its spin between
 * launches collected its young generation (0.3–1 ms) twice as often.
 */
const LOADS_PER_CLOCK = 256;

/** returns once `slot` of `cells` no longer holds `value`: spinning for up to `spinMs`, then asleep */
export function awaitChange(cells: Int32Array, slot: number, value: number, spinMs: number): void {
  if (spinMs > 0) {
    const until = performance.now() + spinMs;
    do {
      for (let k = 0; k < LOADS_PER_CLOCK; k++) if (Atomics.load(cells, slot) !== value) return;
    } while (performance.now() < until);
  }
  Atomics.wait(cells, slot, value);
}

/**
 * How long a worker spins for its next launch, from how long it waited for the last two: SPIN_MS while
 * either came within it (a loop of launches; the first launch of a loop after a pause came late, and the
 * second should not wake a sleeping worker again), else not at all (launches far apart, or a loaded machine
 * that keeps the caller off a core: a spin there takes CPU from the caller and gains nothing).
 */
export function workerSpinMs(lastWaitMs: number, waitBeforeMs: number): number {
  return Math.min(lastWaitMs, waitBeforeMs) > SPIN_MS ? 0 : SPIN_MS;
}

/** microseconds on the monotonic clock, which every thread of the process shares */
export function monotonicUs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e6 + ns / 1e3;
}

/** what a worker marks of a recorded launch: woken, joined (its job read, a new kernel compiled), its chunks run */
export const WORKER_MARK = { woke: 0, joined: 1, end: 2 } as const;
export const MARKS = 4;

// ---------------------------------------------------------------------------
// running chunks (the calling thread and the workers alike)

/** compiles a kernel's generated code with the shared-memory atomics */
export function compileShared(p: KernelPayload): KernelFn {
  const factory = new Function("rt", "consts", "sites", p.code) as (...a: unknown[]) => KernelFn;
  const oobLater = (name: string, index: (number | bigint)[], shape: number[], site: AccessSite,
    tx: number, ty: number, tz: number, bx: number, by: number, bz: number): never => {
    throw new BoundsFault([name, index, shape, p.sites.indexOf(site), tx, ty, tz, bx, by, bz]);
  };
  return factory({ ...workerRuntime, oob: oobLater }, p.consts, p.sites);
}

/** takes chunks of the job's blocks until none is left (or one before it failed) and runs them */
export function runChunks(fn: KernelFn, job: Job, ctl: Int32Array): RunnerResult {
  const { chunk, total, dims } = job;
  const outputs: [number, string][] = [];
  let error: FailedChunk | undefined;
  let chunks = 0;
  for (;;) {
    const c = Atomics.add(ctl, CTL.next, 1);
    const first = c * chunk;
    if (first >= total || c > Atomics.load(ctl, CTL.fail)) break;
    const L: LaunchCtx = {
      grid: dims.grid, block: dims.block, sharedMemBytes: dims.sharedMemBytes, cooperative: false, out: [],
      firstBlock: first, endBlock: Math.min(first + chunk, total),
    };
    chunks++;
    try {
      fn(L, job.args);
    } catch (e) {
      error = { chunk: c, ...describe(e) };
      lowerFailure(ctl, c);
    } finally {
      if (L.out.length > 0) outputs.push([c, L.out.join("")]);
    }
  }
  return error ? { chunks, outputs, error } : { chunks, outputs };
}

/** what crosses threads of an error: its class name and message */
export function describe(e: unknown): { name: string; message: string; bounds?: BoundsArgs } {
  if (e instanceof BoundsFault) return { name: "LaunchError", message: "index out of bounds", bounds: e.args };
  return e instanceof Error ? { name: e.name, message: e.message } : { name: "Error", message: String(e) };
}

function lowerFailure(ctl: Int32Array, c: number): void {
  for (let seen = Atomics.load(ctl, CTL.fail); c < seen; seen = Atomics.load(ctl, CTL.fail)) {
    if (Atomics.compareExchange(ctl, CTL.fail, seen, c) === seen) return;
  }
}

