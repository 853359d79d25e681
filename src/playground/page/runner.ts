// The playground's runner, a module worker (one per run, ended when the run ends or is stopped): it
// runs the program it is sent (run.ts) and posts back what the page shows. numbats' ready() starts
// while the page sends the program: it opens the WebGPU adapter (navigator.gpu, a Worker's too) and
// boots the simulator's worker threads (module workers of this one), which a browser starts only once
// this thread returns to its event loop, and a program runs start to end without returning to it.

import { ready } from "numbats";
import { runProgram, type RunRequest } from "./run.js";

// where WebGPU or the simulator's threads cannot start, the run goes on without them (cuda.detect() says why)
const started = ready().catch(() => {});
const worker = globalThis as unknown as { onmessage: (e: { data: RunRequest }) => void; postMessage(m: unknown): void };
worker.onmessage = async (e) => {
  await started;
  worker.postMessage(await runProgram(e.data));
};
