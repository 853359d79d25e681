// The playground's runner, a module worker (one per run, ended when the run ends or is stopped): it
// runs the program it is sent (run.ts) and posts back what the page shows. The simulator's worker
// threads (module workers of this one) boot while the page sends the program: a browser starts them
// only once this thread returns to its event loop, and a program runs start to end without returning
// to it. With the program come its settings; then numbats' ready() opens the WebGPU adapter
// (navigator.gpu, a Worker's too) where there is one, and chooses the target.

import { ready, startSimulatorWorkers } from "numbats";
import { runProgram, settle, type RunRequest } from "./run.js";

// where they cannot start, the run goes on without them (cuda.detect() says why)
const booted = startSimulatorWorkers().catch(() => {});
const worker = globalThis as unknown as { onmessage: (e: { data: RunRequest }) => void; postMessage(m: unknown): void };
worker.onmessage = async (e) => {
  settle(e.data);
  await booted;
  // a target that cannot be used fails the program's first launch, which says why in the output
  await ready().catch(() => {});
  worker.postMessage(await runProgram(e.data));
};
