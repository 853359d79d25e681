// User-facing streams and events (Numba's `cuda.stream()`, `cuda.event()`),
// thin wrappers over a back end's handles.

import type { Backend, BackendEvent, BackendGraph, BackendStream } from "../abi/backend.js";
import { LaunchError } from "../errors.js";
import { captureOn, isCapturing, refuseDuringCapture } from "./graph-capture.js";
import { runAsync, runBlocking, streamDone, wait, type Steps, type Twin } from "./waiting.js";

/**
 * A queue of device work that runs in order (Numba's `Stream`), made by `cuda.stream()`; work on
 * different streams may overlap. Pass it to launches and copies to queue them on it.
 */
export class Stream {
  /** Wraps a back end's stream; use `cuda.stream()` to make one. @internal */
  constructor(
    /** the back end's stream @internal */
    readonly handle: BackendStream,
    private readonly backend: Backend,
  ) {}

  /** whether this is the default stream */
  get isDefault(): boolean {
    return this.handle.isDefault;
  }
  /** blocks until all work queued on this stream is done; throws the error of a kernel on it that threw */
  synchronize(): void {
    runBlocking(this.synchronizeSteps(), STREAM_SYNCHRONIZE);
  }
  /** `synchronize`'s async twin: resolves when the work queued so far is done, rejects with the error of a kernel that threw */
  synchronizeAsync(): Promise<void> {
    return runAsync(this.synchronizeSteps());
  }
  /** synchronize as steps (runtime/waiting.ts), for the host calls that synchronise a stream. @internal */
  synchronizeSteps(): Steps<void> {
    return wait(streamDone(this.backend, this.handle));
  }
  /** resolves when the work queued so far is done, without blocking the event loop */
  done(): Promise<void> {
    return this.handle.done();
  }
  /**
   * Records the launches and copies that `fn` queues on this stream, instead of running them, into a
   * `Graph` that `g.launch()` replays (CUDA stream capture). Arrays and scalars are fixed at capture.
   * What cannot be recorded (waiting for the device, allocating, host arrays in a launch, another
   * capture inside) is a LaunchError naming it; that, or anything `fn` throws, abandons the capture,
   * leaves the stream usable, and is thrown.
   */
  capture(fn: () => void): Graph {
    return new Graph(captureOn(this.backend, this.handle, fn), this.backend);
  }
}

/**
 * Work recorded by `stream.capture(fn)` (a CUDA graph): `launch()` replays it as one
 * submission. Release it with `free()` or `using`.
 */
export class Graph {
  private recorded: BackendGraph | undefined;

  /** Wraps a back end's graph; use `stream.capture(fn)` to make one. @internal */
  constructor(recorded: BackendGraph, private readonly backend: Backend) {
    this.recorded = recorded;
  }

  /** queues the recorded work on `stream` (default: the default stream), in the order it was captured */
  launch(stream?: Stream | 0): void {
    if (this.recorded === undefined) throw new LaunchError("graph.launch(): the graph was freed");
    this.recorded.launch(streamHandle(stream) ?? this.backend.defaultStream());
  }
  /** whether the graph can still be launched (not freed) */
  get alive(): boolean {
    return this.recorded !== undefined;
  }
  /** releases the graph (idempotent); launching it afterwards is a LaunchError */
  free(): void {
    const g = this.recorded;
    this.recorded = undefined;
    g?.free();
  }
  [Symbol.dispose](): void {
    this.free();
  }
}

/** A marker in a stream's work, for timing and waiting (Numba's `Event`), made by `cuda.event()`. */
export class Event {
  /** Wraps a back end's event; use `cuda.event()` to make one. @internal */
  constructor(
    /** the back end's event @internal */
    readonly handle: BackendEvent,
    private readonly backend: Backend,
  ) {}

  /** records the event on `stream` (default: the default stream) */
  record(stream?: Stream | BackendStream): this {
    const on = streamHandle(stream) ?? this.backend.defaultStream();
    if (on.isDefault || isCapturing(on)) refuseDuringCapture("e.record(stream)", "records an event");
    this.handle.record(on);
    return this;
  }
  /** blocks until the work recorded before this event has finished */
  synchronize(): void {
    this.handle.synchronize();
  }
  /** true once the work recorded before this event has finished */
  query(): boolean {
    return this.handle.query();
  }
  /** milliseconds from `start` to this event */
  elapsedTime(start: Event): number {
    return this.handle.elapsedSince(start.handle);
  }
}

/** Milliseconds between two recorded events (Numba's `cuda.event_elapsed_time(evtstart, evtend)`). */
export function eventElapsedTime(start: Event, end: Event): number {
  return end.elapsedTime(start);
}

const STREAM_SYNCHRONIZE: Twin = { call: "s.synchronize()", twin: "s.synchronizeAsync()" };

export const createStream = (backend: Backend) => new Stream(backend.createStream(), backend);
export const defaultStream = (backend: Backend) => new Stream(backend.defaultStream(), backend);
export const createEvent = (backend: Backend) => new Event(backend.createEvent(), backend);

/** The back-end handle of a user stream (either kind accepted), undefined for none or `0` (Numba's default stream). */
export function streamHandle(stream: Stream | BackendStream | 0 | undefined): BackendStream | undefined {
  return stream instanceof Stream ? stream.handle : stream === 0 ? undefined : stream;
}
