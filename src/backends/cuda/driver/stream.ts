// Streams and events. Waiting asynchronously never blocks the event loop: the
// main thread polls cuStreamQuery / cuEventQuery (the context is current only
// on the main thread), first on setImmediate for short work, then on a timer
// whose period grows to a few milliseconds.

import type { BackendEvent, BackendStream } from "../../../abi/backend.js";
import { CUDA_ERROR_NOT_READY, CUDA_SUCCESS } from "./driver.js";
import type { DeviceContext, StreamHandle } from "./context.js";
import { raiseKernelErrors } from "../../../abi/kernel-errors.js";

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

/** What streams and events have alike: the driver's handle, its device, and waiting for the work before it. */
abstract class DriverQueue {
  constructor(
    readonly owner: DeviceContext,
    readonly handle: unknown,
    /** the context generation it was made in (the default stream lives in every one) */
    readonly generation: number | undefined,
    private readonly calls: { readonly synchronize: "cuStreamSynchronize" | "cuEventSynchronize"; readonly query: "cuStreamQuery" | "cuEventQuery" },
  ) {}

  /** checks that it is the owner's and of its current context, and activates the context (before `call`) */
  protected abstract use(call: string): void;

  synchronize(): void {
    const call = this.calls.synchronize;
    this.use(call);
    this.owner.driver.check(call, this.owner.driver.api[call](this.handle));
    raiseKernelErrors();
  }

  /** true once all work queued before it has finished */
  query(): boolean {
    const call = this.calls.query;
    this.use(call);
    return ready(this.owner, call, this.owner.driver.api[call](this.handle));
  }
}

export class CudaStream extends DriverQueue implements BackendStream, StreamHandle {
  captured: Set<object> | undefined = undefined;

  /** `handle`: the CUstream, null for the default (legacy null) stream */
  constructor(owner: DeviceContext, handle: unknown, generation: number | undefined) {
    super(owner, handle, generation, { synchronize: "cuStreamSynchronize", query: "cuStreamQuery" });
  }

  protected use(call: string): void {
    this.owner.useStream(this, call);
  }

  get isDefault(): boolean {
    return this.handle === null;
  }

  done(): Promise<void> {
    return pollUntil(() => {
      const finished = this.query();
      if (finished) raiseKernelErrors();
      return finished;
    });
  }
}

export class CudaEvent extends DriverQueue implements BackendEvent {
  constructor(owner: DeviceContext, handle: unknown, generation: number) {
    super(owner, handle, generation, { synchronize: "cuEventSynchronize", query: "cuEventQuery" });
  }

  protected use(call: string): void {
    this.owner.useEvent(this, call);
  }

  record(stream: BackendStream): void {
    const s = this.owner.useStream(stream, "cuEventRecord");
    this.use("cuEventRecord");
    this.owner.driver.check("cuEventRecord", this.owner.driver.api.cuEventRecord(this.handle, s.handle));
  }

  elapsedSince(start: BackendEvent): number {
    const from = this.owner.useEvent(start, "cuEventElapsedTime");
    this.use("cuEventElapsedTime");
    const ms = [0];
    this.owner.driver.check("cuEventElapsedTime", this.owner.driver.api.cuEventElapsedTime(ms, from.handle, this.handle));
    return ms[0]!;
  }
}

function ready(owner: DeviceContext, call: "cuStreamQuery" | "cuEventQuery", rc: number): boolean {
  if (rc === CUDA_SUCCESS) return true;
  if (rc === CUDA_ERROR_NOT_READY) return false;
  throw owner.driver.error(call, rc);
}
