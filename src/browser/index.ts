// numbats in a browser (the package's `browser` export condition; docs/browser.md): the compiler, the
// simulator and the WebGPU target (navigator.gpu), bundled with no Node.js module (scripts/browser.ts).
// The CUDA target is absent. `await ready()` (../ready.ts) before the first launch: a browser finds its
// WebGPU adapter only asynchronously, and starts the simulator's worker threads (in a cross-origin
// isolated Worker) only once the thread that creates them yields; after it `auto` runs kernels on WebGPU
// where the browser has an adapter, else on the simulator.

import { process } from "./globals.js";

export * from "../index.js";
export { setOutput } from "./globals.js";
export { startSimulatorWorkers } from "../runtime/select.js";

/**
 * numbats' settings, which Node.js reads from environment variables (NUMBATS_SANITIZE, NUMBATS_SIM_SCHEDULE,
 * NUMBATS_SIM_DEVICES, NUMBATS_TARGET): set them here before the first launch (and before `ready()`).
 */
export const env: Record<string, string | undefined> = process.env;
