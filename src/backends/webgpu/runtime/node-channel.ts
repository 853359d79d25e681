// The WebGPU device in Node.js: a worker thread (webgpu-worker.ts) owns it, since Dawn delivers its
// callbacks only to a thread whose event loop runs, and the blocking host API (copyToHost, synchronize)
// must wait. The caller posts jobs and, where it must wait, sleeps in Atomics.wait until the worker has
// done them (protocol.ts). The worker is started once a process, by the first probe.

import { totalmem } from "node:os";
import { receiveMessageOnPort, Worker, MessageChannel, type MessagePort } from "node:worker_threads";
import { workerCode } from "../../../workers/worker-entry.js";
import type { AdapterFacts } from "./adapter.js";
import type { DeviceChannel, Ticket } from "./channel.js";
import type { GpuJob, GpuJobResult } from "./executor.js";
import { CONTROL, CONTROL_WORDS, OPENED, type DeviceReply, type DeviceRequest, type WorkerData } from "./protocol.js";

/**
 * Dawn's options: shared memory not zeroed at each workgroup's start (CUDA's is not either; and
 * SwiftShader otherwise takes seconds to create a pipeline with a large workgroup array).
 */
const DAWN_OPTIONS = ["enable-dawn-features=disable_workgroup_init"];

/** How long opening the device may take (loading Dawn, the Vulkan driver, the adapter) */
const OPEN_TIMEOUT_MS = 120_000;

/** How long the process's exit waits for the work posted to finish */
const EXIT_WAIT_MS = 10_000;

/** Atomics.waitAsync (Node.js 16+; ES2024's library, newer than this build's) */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string } }).waitAsync;

class NodeChannel implements DeviceChannel {
  readonly canBlock = true;
  private seq = OPENED;
  /** replies that arrived for jobs whose tickets have not taken them yet */
  private readonly replies = new Map<number, DeviceReply>();
  /** jobs whose reply a ticket will take */
  private readonly wanted = new Set<number>();
  /** the first failure of a posted job nobody waits for, until check() */
  private failure: string | undefined;

  constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly ctl: Int32Array,
  ) {
    // Node.js stops the thread at exit wherever it is, and Dawn aborts the process when stopped inside
    // one of its calls: the work posted is let finish first (a while at most)
    process.once("exit", () => {
      try {
        this.waitFor(this.seq, EXIT_WAIT_MS);
      } catch {
        // a thread that does not finish is stopped anyway
      }
    });
  }

  private send(job: GpuJob, reply: boolean): number {
    const seq = ++this.seq;
    if (reply) this.wanted.add(seq);
    const transfer = job.op === "write" ? [job.data.buffer as ArrayBuffer] : [];
    this.port.postMessage({ seq, job, reply } satisfies DeviceRequest, transfer);
    Atomics.store(this.ctl, CONTROL.posted, seq);
    Atomics.notify(this.ctl, CONTROL.posted);
    return seq;
  }

  post(job: GpuJob): void {
    this.send(job, false);
  }

  request(job: GpuJob): Ticket {
    const seq = this.send(job, true);
    // the reply, once taken: a ticket may be asked again (an event's time)
    let outcome: { result: GpuJobResult } | { error: unknown } | undefined;
    const taken = (): GpuJobResult => {
      if (!outcome) {
        try {
          outcome = { result: this.take(seq) };
        } catch (error) {
          outcome = { error };
        }
      }
      if ("error" in outcome) throw outcome.error;
      return outcome.result;
    };
    return {
      settled: () => this.done(seq),
      wait: () => {
        if (!outcome) this.waitFor(seq);
        return taken();
      },
      promise: async () => {
        if (!outcome) await this.waitAsyncFor(seq);
        return taken();
      },
    };
  }

  check(): void {
    this.drain();
    const failure = this.failure;
    if (failure === undefined) return;
    this.failure = undefined;
    throw new Error(failure);
  }

  private done(seq: number): boolean {
    return Atomics.load(this.ctl, CONTROL.done) >= seq;
  }

  /** sleeps until the worker has done job `seq` (a wake-up before that was for an earlier one) */
  waitFor(seq: number, timeoutMs = Infinity): void {
    const deadline = Date.now() + timeoutMs;
    for (let done = Atomics.load(this.ctl, CONTROL.done); done < seq; done = Atomics.load(this.ctl, CONTROL.done)) {
      const left = deadline - Date.now();
      if (left <= 0) {
        void this.worker.terminate();
        throw new Error(`the WebGPU device's thread did not answer within ${timeoutMs / 1000} s`);
      }
      Atomics.wait(this.ctl, CONTROL.done, done, left === Infinity ? undefined : left);
    }
  }

  private async waitAsyncFor(seq: number): Promise<void> {
    if (this.done(seq)) return;
    // Atomics.waitAsync keeps no process alive: a program that only awaits the device would exit
    const alive = setInterval(() => {}, 60_000);
    try {
      for (let done = Atomics.load(this.ctl, CONTROL.done); done < seq; done = Atomics.load(this.ctl, CONTROL.done)) {
        const w = waitAsync(this.ctl, CONTROL.done, done);
        if (w.async) await w.value;
      }
    } finally {
      clearInterval(alive);
    }
  }

  /** moves the replies that arrived into `replies`; a failure nobody waits for is kept for check() */
  private drain(): void {
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
      const reply = m.message as DeviceReply;
      if (reply.seq !== undefined && this.wanted.has(reply.seq)) this.replies.set(reply.seq, reply);
      else if ("error" in reply) this.failure ??= reply.error;
    }
  }

  /** the result of job `seq`, done: the reply taken, or its error thrown */
  take(seq: number): GpuJobResult {
    this.drain();
    const reply = this.replies.get(seq);
    this.replies.delete(seq);
    this.wanted.delete(seq);
    if (reply === undefined) throw new Error(this.failure ?? `the WebGPU device's thread stopped before replying to request ${seq}`);
    if ("error" in reply) throw new Error(reply.error);
    return reply.result as GpuJobResult;
  }
}

/** The device's thread started, its adapter, and the host's memory (WebGPU does not say a device's); or why not. */
export type NodeDevice = { readonly ok: true; readonly channel: DeviceChannel; readonly facts: AdapterFacts; readonly totalMemory: number } | { readonly ok: false; readonly reason: string };

let opened: NodeDevice | undefined;

/** Starts the device's thread and waits for its adapter, once a process. */
export function openNodeDevice(): NodeDevice {
  return (opened ??= start());
}

function start(): NodeDevice {
  let code: string;
  try {
    code = workerCode("webgpu-worker");
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
  const { port1, port2 } = new MessageChannel();
  const ctl = new Int32Array(new SharedArrayBuffer(CONTROL_WORDS * 4));
  const data: WorkerData = { port: port2, flag: ctl, dawnOptions: DAWN_OPTIONS };
  const worker = new Worker(code, { eval: true, workerData: data, transferList: [port2] });
  worker.unref();
  port1.unref();
  const channel = new NodeChannel(worker, port1, ctl);
  try {
    channel.waitFor(OPENED, OPEN_TIMEOUT_MS);
    // the bootstrap's report of a thread that failed to start carries no number
    const first = receiveMessageOnPort(port1)?.message as DeviceReply | undefined;
    if (first === undefined || "error" in first) throw new Error(first?.error ?? "the WebGPU device's thread stopped while starting");
    return { ok: true, channel, facts: first.result as AdapterFacts, totalMemory: totalmem() };
  } catch (e) {
    void worker.terminate();
    return { ok: false, reason: (e as Error).message };
  }
}
