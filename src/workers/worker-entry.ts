// How numbats starts a worker thread on one of its own modules. Three ways, first that applies:
// - the built package: the worker's script, bundled at build (worker-sources.ts), run as eval code;
//   a bundler that bundles numbats carries it, and no file beside numbats' own is needed;
// - running from src/ under tsx: the .ts module, with tsx registered in the worker first (a worker
//   does not inherit its parent's loader hooks);
// - compiled without the package build (plain tsc): the .js module beside this one.
// Each way runs inside a bootstrap that reports a failure to start: a worker's caller that blocks in
// Atomics.wait (the store's) never sees the worker's 'error' event, so when workerData holds `port`
// and `flag` the bootstrap posts `{ error }` on the port and raises the flag, as the worker would reply.

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { MessageChannel, Worker } from "node:worker_threads";
import { moduleFile } from "../module-file.js";
import { WORKER_SOURCES } from "./worker-sources.js";

/** numbats' worker entry modules, from this file's folder (src/workers/), without extension. */
const ENTRIES = {
  "sim-worker": "../backends/sim/runtime/sim-worker",
  "store-worker": "../distributed/store-worker",
  "webgpu-worker": "../backends/webgpu/runtime/webgpu-worker",
} as const;

export type WorkerName = keyof typeof ENTRIES;

/** `new Worker(code, { eval: true })`'s code for numbats' worker `name`; throws, saying why, where it cannot be started. */
export function workerCode(name: WorkerName): string {
  const bundled = WORKER_SOURCES[name];
  if (bundled !== undefined) return bootstrap(`numbats' ${name}`, bundled);
  const here = moduleFile();
  if (here === undefined) throw new Error(`numbats' ${name} thread cannot start: numbats cannot tell where its own files are (its code was loaded by eval)`);
  const file = `${join(dirname(here), ENTRIES[name])}${here.endsWith(".ts") ? ".ts" : ".js"}`;
  if (!existsSync(file)) {
    throw new Error(`numbats' ${name} thread cannot start: numbats was built without its worker scripts (plain tsc, not npm run build), and their module ${file} is not there (a bundle leaves it behind): build numbats with npm run build`);
  }
  return moduleWorkerCode(file, `numbats' ${name}`);
}

/** Where a thread that runs launches gets its jobs: a port's sending end. */
export interface JobPort {
  postMessage(message: unknown): void;
}

/**
 * Starts a worker thread on `code` (workerCode) with `data` and `port` as its workerData, `port` the
 * receiving end of the port returned. It does not keep the process alive; `onError` hears of its failure.
 */
export function startWorker(code: string, data: object, onError: (message: string) => void): JobPort {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(code, { eval: true, workerData: { ...data, port: port2 }, transferList: [port2], stdout: false, stderr: false });
  worker.on("error", (e: Error) => onError(e.message));
  worker.unref();
  port1.unref();
  return port1;
}

/**
 * `new Worker(code, { eval: true })`'s code that runs the module `file` (a path or file: URL; a .ts one
 * under tsx), in the bootstrap below (`name` says whose thread failed).
 */
export function moduleWorkerCode(file: string, name = file): string {
  const url = file.startsWith("file:") ? file : pathToFileURL(file).href;
  if (!url.endsWith(".ts")) return bootstrap(name, `await import(${JSON.stringify(url)});`);
  let tsx: string;
  try {
    tsx = tsxApi(url);
  } catch (e) {
    throw new Error(`${name} thread cannot start: its TypeScript module needs tsx to load it: install tsx (${(e as Error).message})`);
  }
  return bootstrap(name, `(await import(${JSON.stringify(tsx)})).register(); await import(${JSON.stringify(url)});`);
}

/**
 * The URL of tsx's ES-module API (its `register()` hooks the thread's imports), as `import` resolves it:
 * read from tsx's package.json, since `require.resolve` gives its CommonJS build, whose `register()`
 * fails in a worker.
 */
function tsxApi(from: string): string {
  const pkg = createRequire(from).resolve("tsx/package.json"); // from: a path or file: URL
  const { exports } = JSON.parse(readFileSync(pkg, "utf8")) as { exports: Record<string, { import?: { default?: string } }> };
  const api = exports["./esm/api"]?.import?.default;
  if (api === undefined) throw new Error(`${pkg} has no ES-module "./esm/api" export`);
  return pathToFileURL(join(dirname(pkg), api)).href;
}

/** `load` run in a worker, a failure to start reported to a caller that blocks (above); exported for tests. */
export function bootstrap(name: string, load: string): string {
  return `(async () => {\n${load}\n})().catch((e) => {
  const { workerData } = require("node:worker_threads");
  if (workerData && workerData.port && workerData.flag) {
    workerData.port.postMessage({ error: ${JSON.stringify(`${name} thread failed to start: `)} + (e && e.message) });
    Atomics.store(workerData.flag, 0, 1);
    Atomics.notify(workerData.flag, 0);
  }
  throw e;
});`;
}
