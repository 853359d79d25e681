// A simulator worker thread (sim-workers.ts starts it): waits on its doorbell
// (spinning briefly while launches come close together, then asleep), takes the launches posted on its port and
// compiles each kernel it is sent once. It joins a launch unless the caller
// has withdrawn it (all its chunks taken before the worker got to it), runs
// chunks of the launch's blocks, posts a result when there is something to
// report (printf output, a fault), then counts itself done on the control
// block, which wakes the caller. It never returns to its event loop.

import { receiveMessageOnPort, workerData } from "node:worker_threads";
import { awaitChange, compileShared, CTL, monotonicUs, runChunks, workerSpinMs, type Job, type KernelFn, type KernelPayload, type WorkerInit } from "./sim-workers.js";

const { port, ready, bell, ctl, index } = workerData as WorkerInit;
const kernels = new Map<number, KernelFn>();

/** the kernel's function; one that does not compile throws its error in every chunk, which reports it */
function compile(p: KernelPayload): KernelFn {
  try {
    return compileShared(p);
  } catch (e) {
    return () => { throw e; };
  }
}

function run(job: Job): void {
  if (job.payload) kernels.set(job.kernel, compile(job.payload));
  if (Atomics.compareExchange(ctl, CTL.posted + index, job.seq, 0) !== job.seq) return; // withdrawn
  Atomics.add(ctl, CTL.lagUs, Math.round(monotonicUs() - job.sentAt));
  const result = runChunks(kernels.get(job.kernel)!, job, ctl);
  if (result.outputs.length > 0 || result.error) port.postMessage(result);
  Atomics.add(ctl, CTL.chunks, result.chunks);
  Atomics.add(ctl, CTL.done, 1);
  Atomics.notify(ctl, CTL.done);
}

Atomics.store(ready, index, 1);
for (let rung = 0, spinMs = 0; ; ) {
  const idleSince = monotonicUs();
  awaitChange(bell, index, rung, spinMs);
  rung = Atomics.load(bell, index);
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const job = m.message as Job;
    // how long the caller took to post the launch, not how long the OS took to wake this thread
    spinMs = workerSpinMs((job.sentAt - idleSince) / 1000);
    run(job);
  }
}
