// numbats' worker threads in the browser bundle, in place of ../workers/worker-entry.ts. The
// simulator's workers start as module workers (backends/sim/runtime/sim-module-worker.ts, bundled
// into the browser build as text: scripts/browser.ts) where a launch can wait for them: in a Worker (a page's main
// thread may not block in Atomics.wait) that is cross-origin isolated (their memory is
// SharedArrayBuffers). Elsewhere launches run on the calling thread, and cuda.detect() says why.
// The distributed store's worker is Node.js's (collectives need Node.js).

import type { JobPort } from "../workers/worker-entry.js";
import { SIM_WORKER_SOURCE } from "./sim-worker-source.js";

export type WorkerName = "sim-worker" | "store-worker";

/** The browser's globals this module uses (the project's TypeScript lib is Node.js's). */
interface BrowserGlobals {
  readonly crossOriginIsolated?: boolean;
  readonly DedicatedWorkerGlobalScope?: unknown;
  readonly Worker?: new (url: string, options: { type: "module"; name: string }) => {
    postMessage(message: unknown, transfer: unknown[]): void;
    addEventListener(type: "error", listener: (e: { message: string }) => void): void;
  };
}
const web = globalThis as BrowserGlobals;

/** Why the simulator's workers cannot start here, or undefined where they can (cuda.detect() prints it). */
export function browserWorkersReason(): string | undefined {
  if (web.crossOriginIsolated !== true) {
    return "device memory is plain ArrayBuffers, which threads cannot share: the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp for SharedArrayBuffer)";
  }
  if (web.DedicatedWorkerGlobalScope === undefined) {
    return "a launch waits for worker threads (Atomics.wait), which a page's main thread may not do: run numbats in a Worker to use them";
  }
  if (web.Worker === undefined) return "this browser cannot start a Worker from a Worker";
  if (SIM_WORKER_SOURCE === undefined) return "this build of numbats carries no worker script (the browser build makes it: scripts/browser.ts)";
  return undefined;
}

/** The simulator worker's module source; throws, saying why, where it cannot start. */
export function workerCode(name: WorkerName): string {
  if (name !== "sim-worker") throw new Error(`numbats' ${name} thread needs Node.js: not in a browser`);
  const why = browserWorkersReason();
  if (why !== undefined) throw new Error(why);
  return SIM_WORKER_SOURCE!;
}

export type { JobPort } from "../workers/worker-entry.js";

const moduleUrls = new Map<string, string>();

/**
 * Starts a module worker on `code` (workerCode), sends it `data` and `port`, the receiving end of the
 * port returned, as its first message; `onError` hears of its failure.
 */
export function startWorker(code: string, data: object, onError: (message: string) => void): JobPort {
  let url = moduleUrls.get(code);
  if (url === undefined) moduleUrls.set(code, url = URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
  const { port1, port2 } = new MessageChannel();
  const worker = new web.Worker!(url, { type: "module", name: "numbats simulator" });
  worker.addEventListener("error", (e) => onError(e.message));
  worker.postMessage({ ...data, port: port2 }, [port2]);
  return port1;
}
