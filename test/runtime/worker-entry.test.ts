// How numbats finds its own files and starts its worker threads without import.meta (worker-entry.ts,
// module-file.ts): a worker that fails to start tells a caller blocked in Atomics.wait at once, and
// describeSimWorkers() words what cuda.detect() and `numbats -s` print. Bundles of the built package
// are tested in test/product/package.test.ts.

import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { moduleFile } from "../../src/module-file.js";
import { describeSimWorkers } from "../../src/backends/sim/runtime/sim-workers.js";
import { bootstrap, moduleWorkerCode, workerCode } from "../../src/workers/worker-entry.js";

test("moduleFile() is the calling module's own file, as a path", () => {
  assert.equal(moduleFile(), fileURLToPath(import.meta.url));
});

test("a worker whose code throws at start: its caller, blocked in Atomics.wait, gets the reason at once", () => {
  const { port1, port2 } = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(bootstrap("numbats' store-worker", 'throw new Error("no such module");'), { eval: true, workerData: { port: port2, flag }, transferList: [port2], stderr: true });
  worker.on("error", () => {}); // the caller does not see it while it waits: the flag says it
  assert.equal(Atomics.wait(flag, 0, 0, 30_000), "ok", "the flag was raised, not timed out");
  assert.deepEqual(receiveMessageOnPort(port1)?.message, { error: "numbats' store-worker thread failed to start: no such module" });
  void worker.terminate();
});

test("from the sources, a worker starts on its .ts module under tsx, registered first", async () => {
  const code = workerCode("store-worker");
  assert.ok(code.includes(JSON.stringify(new URL("../../src/distributed/store-worker.ts", import.meta.url).href)), code);
  assert.match(code, /\(await import\("file:\S+\/tsx\/\S+\.mjs"\)\)\.register\(\); await import\("file:\S+store-worker\.ts"\)/, "tsx's hooks first");
  // a worker that runs a module with no effect but to exit: the bootstrap loads and runs the module
  const worker = new Worker(moduleWorkerCode(new URL("../fixtures/bundled/exit.ts", import.meta.url).href), { eval: true });
  const exit = await new Promise<number>((resolve, reject) => { worker.on("exit", resolve); worker.on("error", reject); });
  assert.equal(exit, 7);
});

test("describeSimWorkers(): running threads and their chunks, none at 1, or why launches run on the calling thread", () => {
  assert.equal(describeSimWorkers({ max: 3, running: 2, chunks: 40 }), "2 running of up to 3 (they start at the first launch large enough to share), 40 block chunks run on them so far");
  assert.equal(describeSimWorkers({ max: 0, running: 0, chunks: 0 }), "none (NUMBATS_SIM_WORKERS=1): launches run on the calling thread");
  assert.equal(describeSimWorkers({ max: 0, running: 0, chunks: 0, fallback: "why" }), "0 running; launches run on the calling thread alone: why");
});

