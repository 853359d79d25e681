// A simulator worker thread (sim-workers.ts starts it): waits on its doorbell
// (spinning briefly while launches come close together, then asleep), reads
// the jobs sent on its port (a launch that repeats the last job sends none)
// and compiles each kernel it is sent once. It joins a launch unless the
// caller has withdrawn it (all its chunks taken before the worker got to it),
// runs chunks of the launch's blocks, posts a result when there is something
// to report (printf output, a fault), then counts itself done on the control
// block, which wakes the caller. It never returns to its event loop.

import { receiveMessageOnPort, workerData } from "node:worker_threads";
import { awaitChange, compileShared, CTL, MARKS, monotonicUs, runChunks, WORKER_MARK, workerSpinMs, type Job, type KernelFn, type KernelPayload, type WorkerInit } from "./sim-chunks.js";

const { port, ready, bell, ctl, postedAt, marks, index } = workerData as WorkerInit;
const kernels = new Map<number, KernelFn>();
let job: Job | undefined;

/** the kernel's function; one that does not compile throws its error in every chunk, which reports it */
function compile(p: KernelPayload): KernelFn {
  try {
    return compileShared(p);
  } catch (e) {
    return () => { throw e; };
  }
}

/** takes the jobs sent so far: the last is the current launch's */
function readJobs(): void {
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    job = m.message as Job;
    if (job.payload) kernels.set(job.kernel, compile(job.payload));
  }
}

/** marks a moment of a launch whose timeline the caller records (sim-workers.ts simWorkerTimeline) */
function mark(what: number, at: number): void {
  if (Atomics.load(ctl, CTL.timeline) === 1) marks[MARKS * index + what] = at;
}

function run(job: Job, joined: number): void {
  Atomics.add(ctl, CTL.lagUs, Math.round(joined - postedAt[0]!));
  const result = runChunks(kernels.get(job.kernel)!, job, ctl);
  mark(WORKER_MARK.end, monotonicUs());
  if (result.outputs.length > 0 || result.error) port.postMessage(result);
  Atomics.add(ctl, CTL.chunks, result.chunks);
  Atomics.add(ctl, CTL.done, 1);
  Atomics.notify(ctl, CTL.done);
}

Atomics.store(ready, index, 1);
for (let rung = 0, spinMs = 0, lastWaitMs = Infinity; ; ) {
  const idleSince = monotonicUs();
  awaitChange(bell, index, rung, spinMs);
  const woke = monotonicUs();
  rung = Atomics.load(bell, index);
  const seq = Atomics.load(ctl, CTL.posted + index);
  readJobs(); // after reading the launch's number: its job was sent before it
  if (seq === 0 || Atomics.compareExchange(ctl, CTL.posted + index, seq, 0) !== seq) continue; // withdrawn
  const joined = monotonicUs();
  mark(WORKER_MARK.woke, woke);
  mark(WORKER_MARK.joined, joined);
  // how long the caller took to post the launch, not how long the OS took to wake this thread
  const waitMs = (postedAt[0]! - idleSince) / 1000;
  spinMs = workerSpinMs(waitMs, lastWaitMs);
  lastWaitMs = waitMs;
  run(job!, joined);
}
