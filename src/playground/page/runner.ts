// The playground's runner, a module worker (one per run, ended when the run ends or is stopped): it
// runs the program it is sent (run.ts) and posts back what the page shows.

import { runProgram, type RunRequest } from "./run.js";

const worker = globalThis as unknown as { onmessage: (e: { data: RunRequest }) => void; postMessage(m: unknown): void };
worker.onmessage = (e) => worker.postMessage(runProgram(e.data));
