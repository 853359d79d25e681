// Host calls that wait for the device, written once for both ways of waiting. A call's work is a
// generator of steps that yields at each point where it waits (a copy to the host, a stream's work
// finishing) and is resumed with what the wait gave; a driver runs it: `runBlocking` waits in place
// (the blocking API: `d.copyToHost()`), `runAsync` awaits the back end's async twin of each wait where
// it has one (the `…Async` API: `await d.copyToHostAsync()`). So a blocking call and its twin take
// the same steps and throw the same errors at the same points.
//
// Where the back end says this thread cannot block (`Backend.canBlock === false`: WebGPU in a
// browser's main thread), `runBlocking` refuses the call at its first wait with a LaunchError that
// names the twin; a call that queues work before it waits declares the wait first there (`willWait`),
// so that it is refused before anything is queued.

import type { Backend, BackendStream, DeviceBuffer } from "../abi/backend.js";
import { raiseKernelErrors } from "../abi/kernel-errors.js";
import { LaunchError } from "../errors.js";
import { isCapturing, refuseDuringCapture } from "./graph-capture.js";

/** A point where a host call waits for `backend`: the blocking wait, and its async twin. */
export interface Wait<T = unknown> {
  readonly backend: Backend;
  readonly blocking: () => T;
  readonly async: () => Promise<T>;
  /** true where the blocking wait only queues work on a capturing stream (a copy into page-locked memory), which a capture records */
  readonly capturable?: boolean;
}

/** A host call's steps: each yield is a Wait, and resumes with what the wait gave. */
export type Steps<R> = Generator<Wait, R, unknown>;

/** Waits at `w` within a call's steps (`const x = yield* wait(w)`: typed, where a bare `yield` is not). */
export function* wait<T>(w: Wait<T>): Steps<T> {
  return (yield w) as T;
}

/** A blocking call and its async twin, as the error for a thread that cannot block names them: `d.copyToHost()`, `d.copyToHostAsync()`. */
export interface Twin {
  readonly call: string;
  readonly twin: string;
}

/** Runs a call's steps, blocking at each wait. */
export function runBlocking<R>(steps: Steps<R>, names: Twin): R {
  let step = steps.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = blockAt(step.value, names);
    } catch (e) {
      step = steps.throw(e); // the call's own cleanup runs, as after any other error of the step
      continue;
    }
    step = steps.next(result);
  }
  return step.value;
}

function blockAt(w: Wait, { call, twin }: Twin): unknown {
  if (!w.capturable) refuseDuringCapture(call, "waits");
  if (w.backend.canBlock === false) {
    throw new LaunchError(`${call} blocks, and this thread cannot wait for the ${w.backend.name} device (as a browser's main thread cannot): use \`await ${twin}\``);
  }
  return w.blocking();
}

/** Runs a call's steps, awaiting each wait's async twin; what the steps throw rejects the promise. */
export async function runAsync<R>(steps: Steps<R>): Promise<R> {
  let step = steps.next();
  while (!step.done) {
    let result: unknown;
    try {
      // (an async twin awaits the stream after queueing, which a capture cannot: refused even where capturable)
      refuseDuringCapture("an awaited call (…Async())", "waits");
      result = await step.value.async();
    } catch (e) {
      step = steps.throw(e);
      continue;
    }
    step = steps.next(result);
  }
  return step.value;
}

// ---------------------------------------------------------------------------
// the waits

/**
 * Waits for nothing: a call that queues work and then waits yields it first, so that a thread that
 * cannot block is refused before the work is queued.
 */
export const willWait = (backend: Backend): Wait<void> => ({ backend, blocking: () => {}, async: () => Promise.resolve() });

/**
 * Until the work queued on `stream` is done, raising the errors of kernels that threw (`stream.synchronize()`);
 * the twin awaits the stream's `done()`.
 */
export const streamDone = (backend: Backend, stream: BackendStream): Wait<void> => ({
  backend,
  blocking: () => stream.synchronize(),
  async: () => stream.done().then(raiseKernelErrors),
});

/**
 * Until the device's work is done, raising the errors of kernels that threw (`cuda.synchronize()`);
 * the twin is the back end's, else the default stream's `done()`.
 */
export const deviceDone = (backend: Backend): Wait<void> => ({
  backend,
  blocking: () => backend.synchronize(),
  async: () => backend.synchronizeAsync?.() ?? streamDone(backend, backend.defaultStream()).async(),
});

/**
 * Where a launch on `stream` synchronises (host arrays come back after it): the errors of kernels that
 * threw are raised; reading them waits for the kernels (the blocking form reads at once: the back ends
 * read a kernel's record once it has finished), the twin awaits `stream`'s work first.
 */
export const launchDone = (backend: Backend, stream: BackendStream): Wait<void> => ({
  backend,
  blocking: raiseKernelErrors,
  async: () => stream.done().then(raiseKernelErrors),
});

/**
 * `buf`'s bytes from `byteOffset` into `dst` (Backend.copyToHost: on a stream, from pinned memory, it may
 * return before they are there); the twin resolves once they are there: the back end's own twin, else
 * the blocking copy and the stream's `done()`. Into page-locked memory (`pinned`) on a capturing stream
 * it is recorded.
 */
export const copiedToHost = (backend: Backend, dst: ArrayBufferView, buf: DeviceBuffer, byteOffset: number, stream: BackendStream | undefined, pinned = false): Wait<void> => ({
  backend,
  capturable: pinned && isCapturing(stream),
  blocking: () => backend.copyToHost(dst, buf, byteOffset, stream),
  async: async () => {
    if (backend.copyToHostAsync) return backend.copyToHostAsync(dst, buf, byteOffset, stream);
    backend.copyToHost(dst, buf, byteOffset, stream);
    await stream?.done();
  },
});
