// The browser's simulator worker (backends/sim/runtime/sim-module-worker.ts) as module source text: the browser build replaces
// this module with one that holds it (scripts/browser.ts). Undefined unbundled.

export const SIM_WORKER_SOURCE: string | undefined = undefined;
