// A simulator worker thread (sim-workers.ts starts it): compiles each kernel
// it is sent once, runs chunks of a launch's blocks, reports through its port,
// then counts itself done on the launch's shared counter, which wakes the caller.

import { workerData, parentPort } from "node:worker_threads";
import { compileShared, CTL, describe, runChunks, type Job, type KernelFn, type RunnerResult, type WorkerInit } from "./sim-workers.js";

const { port, ready, index } = workerData as WorkerInit;
const kernels = new Map<number, KernelFn>();

parentPort!.on("message", (job: Job) => {
  let result: RunnerResult;
  try {
    if (job.payload) kernels.set(job.kernel, compileShared(job.payload));
    result = runChunks(kernels.get(job.kernel)!, job);
  } catch (e) {
    result = { chunks: 0, outputs: [], error: { chunk: -1, ...describe(e) } };
  }
  port.postMessage(result);
  Atomics.add(job.ctl, CTL.done, 1);
  Atomics.notify(job.ctl, CTL.done);
});

Atomics.store(ready, index, 1);
