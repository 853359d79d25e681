// How numbats starts a worker thread on one of its own modules. Three ways, first that applies:
// - the built package: the worker's script, bundled at build (worker-sources.ts), run as eval code;
//   a bundler that bundles numbats carries it, and no file beside numbats' own is needed;
// - running from src/ under tsx: the .ts module, with tsx registered in the worker first (a worker
//   does not inherit its parent's loader hooks);
// - compiled without the package build (plain tsc): the .js module beside this one.
// Each way runs inside a bootstrap that reports a failure to start: a worker's caller that blocks in
// Atomics.wait (the store's) never sees the worker's 'error' event, so when workerData holds `port`
// and `flag` the bootstrap posts `{ error }` on the port and raises the flag, as the worker would reply.

import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { moduleFile } from "../module-file.js";
import { WORKER_SOURCES } from "./worker-sources.js";

/** numbats' worker entry modules, from this file's folder (src/runtime/), without extension. */
const ENTRIES = { "sim-worker": "./sim-worker", "store-worker": "../distributed/store-worker" } as const;

export type WorkerName = keyof typeof ENTRIES;

/** `new Worker(code, { eval: true })`'s code for worker `name`; throws, saying why, where it cannot be started. */
export function workerCode(name: WorkerName): string {
  return bootstrap(name, loader(name));
}

/** The statements that run the worker's code. */
function loader(name: WorkerName): string {
  const bundled = WORKER_SOURCES[name];
  if (bundled !== undefined) return bundled;
  const here = moduleFile();
  if (here === undefined) throw new Error("numbats cannot tell where its own files are (its code was loaded by eval)");
  const file = join(dirname(here), ENTRIES[name]);
  if (!here.endsWith(".ts")) return `await import(${JSON.stringify(pathToFileURL(`${file}.js`).href)});`;
  let tsx: string;
  try {
    tsx = createRequire(here).resolve("tsx/esm/api");
  } catch {
    throw new Error("numbats runs from its TypeScript sources, and its workers need tsx to load them: install tsx");
  }
  return `(await import(${JSON.stringify(pathToFileURL(tsx).href)})).register(); await import(${JSON.stringify(pathToFileURL(`${file}.ts`).href)});`;
}

function bootstrap(name: WorkerName, load: string): string {
  return `(async () => {\n${load}\n})().catch((e) => {
  const { workerData } = require("node:worker_threads");
  if (workerData && workerData.port && workerData.flag) {
    workerData.port.postMessage({ error: "numbats' ${name} thread failed to start: " + (e && e.message) });
    Atomics.store(workerData.flag, 0, 1);
    Atomics.notify(workerData.flag, 0);
  }
  throw e;
});`;
}
