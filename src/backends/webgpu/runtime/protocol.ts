// What the Node.js side (node-channel.ts) and the device's worker thread (webgpu-worker.ts) say to each
// other: requests and replies on a MessagePort, and a control block of Int32 words in shared memory.
//
// The caller posts a request, then stores its sequence number in CONTROL.posted and notifies: the worker
// waits there with the blocking Atomics.wait between jobs (Dawn does not wake a worker that waits with
// Atomics.waitAsync), then drains its port with receiveMessageOnPort. After each job the worker posts the
// reply (where one is wanted, or the job failed) and stores the job's number in CONTROL.done; a caller that
// must wait waits there. The worker's first reply, number 1, is the adapter or why there is none:
// CONTROL.done is word 0 because the worker bootstrap (src/workers/worker-entry.ts) raises word 0 when the
// thread fails to start.

import type { MessagePort } from "node:worker_threads";
import type { AdapterFacts } from "./adapter.js";
import type { GpuJob, GpuJobResult } from "./executor.js";

/** the control block's words */
export const CONTROL = { done: 0, posted: 1 } as const;
export const CONTROL_WORDS = 2;

/** the number of the worker's first reply (the adapter); requests count on from it */
export const OPENED = 1;
/** CONTROL.done of a worker that stopped: past every request's number, so that no caller waits on */
export const STOPPED = 0x7fffffff;

export interface WorkerData {
  readonly port: MessagePort;
  /** the control block (its name is the worker bootstrap's) */
  readonly flag: Int32Array;
  /** the options for the `webgpu` package's create() */
  readonly dawnOptions: readonly string[];
}

export interface DeviceRequest {
  readonly seq: number;
  readonly job: GpuJob;
  /** the caller wants the result (a failure is sent in any case) */
  readonly reply: boolean;
}

export type DeviceReply =
  | { readonly seq: number; readonly result: GpuJobResult | AdapterFacts }
  | { readonly seq: number; readonly error: string }
  /** the bootstrap's report of a thread that failed to start, or the thread's of its own end */
  | { readonly seq?: undefined; readonly error: string };
