// How the back end reaches its device: a channel that runs executor jobs (executor.ts) in order, on the
// device's thread. Node.js: a worker thread (node-channel.ts), which the caller can wait for; a
// browser: the executor in the page's own thread (InThreadChannel), which it cannot.

import { GpuExecutor, type GpuJob, type GpuJobResult } from "./executor.js";

/** A job whose result someone wants. */
export interface Ticket {
  /** whether the job has finished (without waiting) */
  settled(): boolean;
  /** waits for the job (only where the channel can block) and returns its result, or throws its error */
  wait(): GpuJobResult;
  /** the job's result, without blocking the thread */
  promise(): Promise<GpuJobResult>;
}

export interface DeviceChannel {
  /** whether this thread can wait for the device (Ticket.wait) */
  readonly canBlock: boolean;
  /** queues `job` (its bytes may be taken: the caller passes a copy); a failure is kept for `check` */
  post(job: GpuJob): void;
  /** queues `job` and returns its ticket */
  request(job: GpuJob): Ticket;
  /** throws the first failure of a posted job since the last check, if one failed */
  check(): void;
}

/** The executor in the calling thread (a browser page): nothing can wait; tickets are promises. */
export class InThreadChannel implements DeviceChannel {
  readonly canBlock = false;
  private failure: unknown;
  private failed = false;

  constructor(private readonly executor: GpuExecutor) {}

  post(job: GpuJob): void {
    this.executor.run(job).catch((e: unknown) => this.fail(e));
  }

  request(job: GpuJob): Ticket {
    let settled = false, awaited = false;
    const result = this.executor.run(job).finally(() => (settled = true));
    // the failure of a job whose result nobody awaits (a kernel's module) is reported by check()
    result.catch((e: unknown) => {
      if (!awaited) this.fail(e);
    });
    return {
      settled: () => settled,
      wait: () => {
        throw new Error("the WebGPU device cannot be waited for on this thread");
      },
      promise: () => ((awaited = true), result),
    };
  }

  private fail(e: unknown): void {
    if (!this.failed) (this.failed = true), (this.failure = e);
  }

  check(): void {
    if (!this.failed) return;
    const e = this.failure;
    this.failed = false;
    this.failure = undefined;
    throw e;
  }
}
