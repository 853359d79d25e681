// A simulator worker thread's launches (its entry module starts it: sim-worker.ts in Node.js,
// src/browser/sim-worker.ts in a browser): waits on its doorbell (spinning briefly while launches come
// close together, then asleep), reads the jobs sent on its port (a launch that repeats the last job
// sends none) and compiles each kernel it is sent once. It joins a launch unless the caller has
// withdrawn it (all its chunks taken before the worker got to it), runs chunks of the launch's blocks,
// leaves a result in its channel when there is something to report (printf output, a fault), then
// counts itself done on the control block, which wakes the caller.

import {
  awaitChange, compileShared, CTL, MARKS, monotonicUs, runChunks, WORKER_MARK, workerSpinMs, writeResult,
  type Job, type KernelFn, type KernelPayload, type WorkerInit,
} from "./sim-chunks.js";

/** the kernel's function; one that does not compile throws its error in every chunk, which reports it */
function compile(p: KernelPayload): KernelFn {
  try {
    return compileShared(p);
  } catch (e) {
    return () => { throw e; };
  }
}

export class WorkerLoop {
  private readonly kernels = new Map<number, KernelFn>();
  private job: Job | undefined;
  private received = 0;
  private rung = 0;
  private spinMs = 0;
  private lastWaitMs = Infinity;
  private idleSince = monotonicUs();
  private woke = this.idleSince;

  /**
   * `takeJobs` reads the jobs sent on the port so far into `receive` (Node.js: synchronously); undefined
   * where they come only by the thread's event loop (a browser), which then calls `receive` and `serve`.
   */
  constructor(private readonly init: WorkerInit, private readonly takeJobs?: () => void) {
    Atomics.store(init.ready, init.index, 1);
  }

  /** a job sent on the port: the last is the current launch's */
  receive(job: Job): void {
    this.received++;
    this.job = job;
    if (job.payload) this.kernels.set(job.kernel, compile(job.payload));
  }

  /**
   * Runs the launches posted to this worker. Returns only where a launch's job has not come yet and
   * cannot be read here (no `takeJobs`): the event loop brings it.
   */
  serve(): void {
    const { bell, ctl, postedAt, index } = this.init;
    for (;;) {
      const seq = Atomics.load(ctl, CTL.posted + index);
      if (!this.hasJobs()) return; // after reading the launch's number: its job was sent before it
      if (seq !== 0 && Atomics.compareExchange(ctl, CTL.posted + index, seq, 0) === seq) {
        const joined = monotonicUs();
        this.mark(WORKER_MARK.woke, this.woke);
        this.mark(WORKER_MARK.joined, joined);
        // how long the caller took to post the launch, not how long the OS took to wake this thread
        const waitMs = (postedAt[0]! - this.idleSince) / 1000;
        this.spinMs = workerSpinMs(waitMs, this.lastWaitMs);
        this.lastWaitMs = waitMs;
        this.run(this.job!, joined);
      }
      this.idleSince = monotonicUs();
      awaitChange(bell, index, this.rung, this.spinMs);
      this.woke = monotonicUs();
      this.rung = Atomics.load(bell, index);
    }
  }

  /** whether every job sent has been read, reading those the port holds where it can */
  private hasJobs(): boolean {
    while (Atomics.load(this.init.jobsSent, this.init.index) !== this.received) {
      if (!this.takeJobs) return false;
      this.takeJobs();
    }
    return true;
  }

  /** marks a moment of a launch whose timeline the caller records (sim-workers.ts simWorkerTimeline) */
  private mark(what: number, at: number): void {
    const { ctl, marks, index } = this.init;
    if (Atomics.load(ctl, CTL.timeline) === 1) marks[MARKS * index + what] = at;
  }

  private run(job: Job, joined: number): void {
    const { ctl, postedAt, results } = this.init;
    Atomics.add(ctl, CTL.lagUs, Math.round(joined - postedAt[0]!));
    const result = runChunks(this.kernels.get(job.kernel)!, job, ctl);
    this.mark(WORKER_MARK.end, monotonicUs());
    if (result.outputs.length > 0 || result.error) writeResult(results, result);
    Atomics.add(ctl, CTL.chunks, result.chunks);
    Atomics.add(ctl, CTL.done, 1);
    Atomics.notify(ctl, CTL.done);
  }
}
