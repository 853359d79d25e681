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
import { moduleFile } from "../module-file.js";
import { WORKER_SOURCES } from "./worker-sources.js";

/** numbats' worker entry modules, from this file's folder (src/runtime/), without extension. */
const ENTRIES = { "sim-worker": "./sim-worker", "store-worker": "../distributed/store-worker" } as const;

export type WorkerName = keyof typeof ENTRIES;

/** `new Worker(code, { eval: true })`'s code for worker `name`; throws, saying why, where it cannot be started. */
export function workerCode(name: WorkerName): string {
  try {
    return bootstrap(name, loader(name));
  } catch (e) {
    throw new Error(`numbats' ${name} thread cannot start: ${(e as Error).message}`);
  }
}

/** The statements that run the worker's code. */
function loader(name: WorkerName): string {
  const bundled = WORKER_SOURCES[name];
  if (bundled !== undefined) return bundled;
  const here = moduleFile();
  if (here === undefined) throw new Error("numbats cannot tell where its own files are (its code was loaded by eval)");
  const file = join(dirname(here), ENTRIES[name]);
  if (!here.endsWith(".ts")) {
    if (!existsSync(`${file}.js`)) {
      throw new Error(`numbats was built without its worker scripts (plain tsc, not npm run build), and their module ${file}.js is not there (a bundle leaves it behind): build numbats with npm run build`);
    }
    return `await import(${JSON.stringify(pathToFileURL(`${file}.js`).href)});`;
  }
  let tsx: string;
  try {
    tsx = tsxApi(here);
  } catch (e) {
    throw new Error(`numbats runs from its TypeScript sources, and its workers need tsx to load them: install tsx (${(e as Error).message})`);
  }
  return `(await import(${JSON.stringify(tsx)})).register(); await import(${JSON.stringify(pathToFileURL(`${file}.ts`).href)});`;
}

/**
 * The URL of tsx's ES-module API (its `register()` hooks the thread's imports), as `import` resolves it:
 * read from tsx's package.json, since `require.resolve` gives its CommonJS build, whose `register()`
 * fails in a worker.
 */
function tsxApi(from: string): string {
  const pkg = createRequire(from).resolve("tsx/package.json");
  const { exports } = JSON.parse(readFileSync(pkg, "utf8")) as { exports: Record<string, { import?: { default?: string } }> };
  const api = exports["./esm/api"]?.import?.default;
  if (api === undefined) throw new Error(`${pkg} has no ES-module "./esm/api" export`);
  return pathToFileURL(join(dirname(pkg), api)).href;
}

/** `load` run in a worker, a failure to start reported to a caller that blocks (above); exported for tests. */
export function bootstrap(name: WorkerName, load: string): string {
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
