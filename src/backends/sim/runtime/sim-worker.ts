// A simulator worker thread in Node.js (sim-workers.ts starts it; what it does: sim-worker-loop.ts).
// It reads its jobs from its port synchronously once its doorbell rings, and never returns to its
// event loop.

import { receiveMessageOnPort, workerData } from "node:worker_threads";
import type { Job, WorkerInit } from "./sim-chunks.js";
import { WorkerLoop } from "./sim-worker-loop.js";

const init = workerData as WorkerInit;
const loop: WorkerLoop = new WorkerLoop(init, () => {
  for (let m = receiveMessageOnPort(init.port); m; m = receiveMessageOnPort(init.port)) loop.receive(m.message as Job);
});
loop.serve();
