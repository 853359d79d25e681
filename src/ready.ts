// `await ready()`: numbats made ready to launch, where finding a device is asynchronous. A browser (and
// Deno) finds its WebGPU adapter only through a promise (navigator.gpu.requestAdapter), while the
// target is chosen synchronously at the first launch; and a browser starts a thread only once its
// creator yields. So a program there awaits this before its first launch. In Node.js it only chooses
// the target early: a program that awaits it runs unchanged everywhere.

import { BACKENDS } from "./backends/index.js";
import { currentTargetInfo, prepareBackends } from "./runtime/select.js";

/**
 * Finds the devices that are found asynchronously (a browser's WebGPU adapter), chooses the target
 * as the first launch would (`cuda.detect()` says which, and why), and starts its worker threads (the
 * simulator's, where they can start). Set `NUMBATS_TARGET` (a browser: `env`) before; a target that
 * cannot be used rejects it, with the error the first launch would throw.
 */
export async function ready(): Promise<void> {
  await prepareBackends();
  const { target } = currentTargetInfo();
  await BACKENDS.find((b) => b.name === target)?.startWorkers?.();
}
