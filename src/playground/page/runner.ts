// The playground's runner, a module worker (one per run, ended when the run ends or is stopped): it
// runs the program it is sent (run.ts) and posts back what the page shows. The simulator's worker
// threads (module workers of this one) boot first: a browser starts them only once this thread
// returns to its event loop, and a program runs start to end without returning to it. On WebGPU the
// target is set before numbats' ready(), which opens the adapter (navigator.gpu, a Worker's too).

import { env, ready, startSimulatorWorkers } from "numbats";
import { runProgram, type RunRequest } from "./run.js";

// where they cannot start, the run goes on without them (cuda.detect() says why)
const started = startSimulatorWorkers().catch(() => {});
const worker = globalThis as unknown as { onmessage: (e: { data: RunRequest }) => void; postMessage(m: unknown): void };
worker.onmessage = async (e) => {
  await started;
  env.NUMBATS_TARGET = e.data.target;
  if (e.data.target !== "sim") await ready();
  worker.postMessage(await runProgram(e.data));
};
