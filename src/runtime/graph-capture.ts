// Stream capture (CUDA graphs) as the host API sees it: at most one capture open at a time (the
// host API is single-threaded, as CUDA's thread-local capture mode is per thread), and the guard
// that refuses, with a LaunchError naming the call, what a capture cannot record: waiting for the
// device and allocating device memory. A refused call also invalidates the capture, as the CUDA
// driver does, so that catching the error inside the captured function does not leave a graph
// with a hole in it.

import type { Backend, BackendGraph, BackendStream } from "../abi/backend.js";
import { LaunchError } from "../errors.js";

interface OpenCapture {
  readonly stream: BackendStream;
  /** the first call refused while it was open */
  refused?: LaunchError;
}

let open: OpenCapture | undefined;

/** Whether `stream` is recording (a stream capture is open on it). */
export function isCapturing(stream: BackendStream | undefined): boolean {
  return open !== undefined && open.stream === stream;
}

/** What refused calls do that a capture cannot record. */
export type Refusal = "waits" | "allocates" | "allocates its result" | "records an event" | "passes host memory";

const BECAUSE: Readonly<Record<Refusal, string>> = {
  waits: "waits for the device, which it cannot do while a stream capture records (captured work runs only when the graph is launched): do it before stream.capture() or after it returns",
  allocates: "allocates device memory, which it cannot do while a stream capture records: allocate the arrays before stream.capture(); captured launches and copies use them as they are",
  "allocates its result": "allocates its result in device memory, which it cannot do while a stream capture records: pass { out }, a device array allocated before stream.capture()",
  "passes host memory": "during a stream capture: a captured ufunc call takes device arrays and scalars (a host array would be copied to the device and back at capture, not at each launch of the graph): pass device arrays, made by cuda.toDevice before stream.capture()",
  "records an event": "on the capturing or the default stream during a capture: graphs do not record events; record them around g.launch(stream)",
};

/** Throws the LaunchError for `call` while a capture is open (and invalidates the capture); nothing otherwise. */
export function refuseDuringCapture(call: string, does: Refusal): void {
  if (open === undefined) return;
  const e = new LaunchError(`${call} ${BECAUSE[does]}`);
  open.refused ??= e;
  throw e;
}

/**
 * Runs `fn` with `stream`'s work recorded instead of run, and returns the recording. Whatever `fn`
 * throws, or a call it made that was refused, abandons the capture (the stream runs work again) and
 * is thrown.
 */
export function captureOn(backend: Backend, stream: BackendStream, fn: () => void): BackendGraph {
  if (open !== undefined) throw new LaunchError("stream.capture() inside another capture: captures do not nest; capture the work in one stream.capture() call");
  if (stream.isDefault) throw new LaunchError("stream.capture() on the default stream: CUDA cannot capture the legacy default stream; capture on a stream made by cuda.stream()");
  if (!backend.beginCapture || !backend.endCapture || !backend.abandonCapture) {
    throw new LaunchError(`stream.capture(): the ${backend.name} target cannot capture work into graphs`);
  }
  backend.beginCapture(stream);
  const capture: OpenCapture = (open = { stream });
  try {
    const result: unknown = fn();
    if (result instanceof Promise) {
      result.catch(() => {}); // its rejection is reported as the capture's error below
      throw new LaunchError("stream.capture() takes a synchronous function: work queued after an await would not be recorded; capture without awaiting");
    }
    if (capture.refused) throw capture.refused;
  } catch (e) {
    open = undefined;
    try {
      backend.abandonCapture(stream);
    } catch {
      // the capture's own error is the one to report
    }
    throw e;
  }
  open = undefined;
  return backend.endCapture(stream);
}
