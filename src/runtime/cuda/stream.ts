// Streams and events. Waiting asynchronously never blocks the event loop: the
// main thread polls cuStreamQuery / cuEventQuery (the context is current only
// on the main thread), first on setImmediate for short work, then on a timer
// whose period grows to a few milliseconds.

import type { BackendEvent, BackendStream } from "../backend.js";
import { CUDA_ERROR_NOT_READY, CUDA_SUCCESS } from "./driver.js";
import type { CudaDevice } from "./device.js";
import { raiseKernelErrors } from "../kernel-errors.js";

const IMMEDIATE_POLLS = 32;
const MAX_POLL_MS = 8;

/** Resolves once `ready()` returns true; rejects with what it throws. */
export function pollUntil(ready: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    let attempt = 0;
    const poll = (): void => {
      let done: boolean;
      try {
        done = ready();
      } catch (e) {
        reject(e);
        return;
      }
      if (done) resolve();
      else if (attempt++ < IMMEDIATE_POLLS) setImmediate(poll);
      else setTimeout(poll, Math.min(2 ** Math.floor((attempt - IMMEDIATE_POLLS) / 8), MAX_POLL_MS));
    };
    poll();
  });
}

export class CudaStream implements BackendStream {
  readonly owner: CudaDevice;
  /** CUstream; null for the default (legacy null) stream */
  readonly handle: unknown;
  /** context generation the stream was created in (the default stream lives in every one) */
  readonly generation: number | undefined;

  constructor(owner: CudaDevice, handle: unknown, generation: number | undefined) {
    this.owner = owner;
    this.handle = handle;
    this.generation = generation;
  }

  get isDefault(): boolean {
    return this.handle === null;
  }

  synchronize(): void {
    this.owner.useStream(this, "cuStreamSynchronize");
    this.owner.driver.check("cuStreamSynchronize", this.owner.driver.api.cuStreamSynchronize(this.handle));
    raiseKernelErrors();
  }

  /** true once all work queued so far has finished */
  query(): boolean {
    this.owner.useStream(this, "cuStreamQuery");
    return ready(this.owner, "cuStreamQuery", this.owner.driver.api.cuStreamQuery(this.handle));
  }

  done(): Promise<void> {
    return pollUntil(() => {
      const finished = this.query();
      if (finished) raiseKernelErrors();
      return finished;
    });
  }
}

export class CudaEvent implements BackendEvent {
  readonly owner: CudaDevice;
  readonly handle: unknown;
  readonly generation: number;

  constructor(owner: CudaDevice, handle: unknown, generation: number) {
    this.owner = owner;
    this.handle = handle;
    this.generation = generation;
  }

  record(stream: BackendStream): void {
    const s = this.owner.useStream(stream, "cuEventRecord");
    this.owner.useEvent(this, "cuEventRecord");
    this.owner.driver.check("cuEventRecord", this.owner.driver.api.cuEventRecord(this.handle, s.handle));
  }

  synchronize(): void {
    this.owner.useEvent(this, "cuEventSynchronize");
    this.owner.driver.check("cuEventSynchronize", this.owner.driver.api.cuEventSynchronize(this.handle));
    raiseKernelErrors();
  }

  query(): boolean {
    this.owner.useEvent(this, "cuEventQuery");
    return ready(this.owner, "cuEventQuery", this.owner.driver.api.cuEventQuery(this.handle));
  }

  elapsedSince(start: BackendEvent): number {
    const from = this.owner.useEvent(start, "cuEventElapsedTime");
    this.owner.useEvent(this, "cuEventElapsedTime");
    const ms = [0];
    this.owner.driver.check("cuEventElapsedTime", this.owner.driver.api.cuEventElapsedTime(ms, from.handle, this.handle));
    return ms[0]!;
  }
}

function ready(owner: CudaDevice, call: "cuStreamQuery" | "cuEventQuery", rc: number): boolean {
  if (rc === CUDA_SUCCESS) return true;
  if (rc === CUDA_ERROR_NOT_READY) return false;
  throw owner.driver.error(call, rc);
}
