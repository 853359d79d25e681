// numbats in a browser (the package's `browser` export condition; docs/browser.md): the compiler and
// the simulator, bundled with no Node.js module (scripts/browser.ts). The CUDA target is absent:
// kernels run on the simulator: in a cross-origin isolated Worker on its worker threads (module
// workers) too, elsewhere on the calling thread.

import { process } from "./globals.js";

export * from "../index.js";
export { setOutput } from "./globals.js";
export { startSimulatorWorkers } from "../runtime/select.js";

/**
 * numbats' settings, which Node.js reads from environment variables (NUMBATS_SANITIZE, NUMBATS_SIM_SCHEDULE,
 * NUMBATS_SIM_DEVICES, NUMBATS_TARGET): set them here before the first launch.
 */
export const env: Record<string, string | undefined> = process.env;

