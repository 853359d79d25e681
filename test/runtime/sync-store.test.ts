// The store's synchronous exchange with its worker thread: the caller sleeps in Atomics.wait until the
// worker raises the flag. A worker preempted between raising the flag for one reply and notifying can
// wake the caller during its next request, before that reply exists: the caller must wait on.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MessageChannel, Worker } from "node:worker_threads";
import { awaitReply } from "../../src/distributed/sync-store.js";

/** A worker that replies to each request at once, but notifies its reply only 200 ms later. */
const LATE_NOTIFY = `
const { parentPort, workerData: { port, flag } } = require("node:worker_threads");
parentPort.on("message", (n) => {
  port.postMessage({ values: [new Uint8Array([n])] });
  Atomics.store(flag, 0, 1);
  const until = Date.now() + 200;
  while (Date.now() < until) {} // preempted here, as a loaded machine may
  Atomics.notify(flag, 0);
});`;

test("a late notify of the previous reply does not end the wait for the next one", async () => {
  const { port1, port2 } = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(LATE_NOTIFY, { eval: true, workerData: { port: port2, flag }, transferList: [port2] });
  try {
    for (const n of [1, 2, 3]) {
      Atomics.store(flag, 0, 0);
      worker.postMessage(n);
      // the worker replies, raises the flag and is between that and its notify when the caller waits;
      // the caller takes the reply, posts the next request, and the late notify comes while it waits
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      assert.deepEqual(awaitReply(port1, flag, worker, `request ${n}`).values, [new Uint8Array([n])]);
    }
  } finally {
    port1.close();
    await worker.terminate();
  }
});
