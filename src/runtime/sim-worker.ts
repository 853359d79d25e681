// A simulator worker thread (sim-workers.ts starts it): waits on its doorbell
// (spinning briefly, then asleep),
// takes the launches posted on its port, compiles each kernel it is sent once,
// runs chunks of a launch's blocks, posts a result when there is something to
// report (printf output, a fault), then counts itself done on the launch's
// shared counter, which wakes the caller. It never returns to its event loop.

import { receiveMessageOnPort, workerData } from "node:worker_threads";
import { awaitChange, compileShared, CTL, describe, runChunks, type Job, type KernelFn, type RunnerResult, type WorkerInit } from "./sim-workers.js";

const { port, ready, bell, index } = workerData as WorkerInit;
const kernels = new Map<number, KernelFn>();

function run(job: Job): void {
  let result: RunnerResult;
  try {
    if (job.payload) kernels.set(job.kernel, compileShared(job.payload));
    result = runChunks(kernels.get(job.kernel)!, job);
  } catch (e) {
    result = { chunks: 0, outputs: [], error: { chunk: -1, ...describe(e) } };
  }
  if (result.outputs.length > 0 || result.error) port.postMessage(result);
  Atomics.add(job.ctl, CTL.chunks, result.chunks);
  Atomics.add(job.ctl, CTL.done, 1);
  Atomics.notify(job.ctl, CTL.done);
}

Atomics.store(ready, index, 1);
for (let rung = 0; ; ) {
  awaitChange(bell, index, rung);
  rung = Atomics.load(bell, index);
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) run(m.message as Job);
}
