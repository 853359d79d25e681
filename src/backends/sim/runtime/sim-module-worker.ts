// A simulator worker thread in a browser: a module worker (src/browser/workers.ts starts it, from its
// bundle in the browser build; what it does: sim-worker-loop.ts). Its first message is its WorkerInit; its jobs come on the
// port in it. A thread blocked in Atomics.wait cannot read its port, so where a launch's job is on its
// way the loop returns to the event loop, which delivers the job and resumes it.

import type { Job, WorkerInit } from "./sim-chunks.js";
import { WorkerLoop } from "./sim-worker-loop.js";

interface MessageTarget { onmessage: ((e: { data: unknown }) => void) | null }

const self = globalThis as unknown as MessageTarget;
self.onmessage = (first) => {
  self.onmessage = null;
  const init = first.data as WorkerInit;
  const loop = new WorkerLoop(init);
  (init.port as unknown as MessageTarget).onmessage = (e) => {
    loop.receive(e.data as Job);
    loop.serve();
  };
  loop.serve();
};
