// numbats' worker threads in the browser bundle, in place of ../runtime/worker-entry.ts: none start.
// A launch is a synchronous call that waits for the simulator's workers (Atomics.wait on the calling
// thread, results read with Node.js's receiveMessageOnPort); a page's main thread may not block, and a
// browser has no synchronous port read. So launches run on the calling thread, and cuda.detect() says why.

/** Why the simulator's workers do not start here (cuda.detect() prints it). */
export function browserWorkersReason(): string {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  const memory = isolated
    ? "device memory is SharedArrayBuffers (the page is cross-origin isolated)"
    : "device memory is plain ArrayBuffers: the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp for SharedArrayBuffer)";
  return `in a browser a launch cannot wait for worker threads (a page may not block its thread, and has no synchronous message read); ${memory}`;
}

export type WorkerName = "sim-worker" | "store-worker";

/** Never returns: the reason workers do not start in a browser, as the error the simulator reports. */
export function workerCode(_name: WorkerName): never {
  throw new Error(browserWorkersReason());
}
