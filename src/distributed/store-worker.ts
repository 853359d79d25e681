// The worker thread behind SyncStore (sync-store.ts): owns the store connection (and the server, when
// this process serves it), runs each request's puts then gets, replies on its port and raises the flag.

import { workerData, parentPort } from "node:worker_threads";
import { serveStore, StoreClient } from "./store.js";
import type { StoreWorkerInit, StoreWorkerReply, StoreWorkerRequest } from "./sync-store.js";

const { port, flag, connect, serve } = workerData as StoreWorkerInit;

function reply(message: StoreWorkerReply): void {
  port.postMessage(message);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

async function start(): Promise<StoreClient> {
  const server = serve ? await serveStore(serve.host, serve.port) : undefined;
  // the server's own process reaches it on loopback (it may listen on 0.0.0.0)
  const address = server ? { host: "127.0.0.1", port: server.address.port } : connect!;
  const client = await StoreClient.connect(address);
  reply({ values: [], address: server?.address ?? address });
  return client;
}

start().then((client) => {
  parentPort!.on("message", (req: StoreWorkerRequest) => {
    Promise.all(req.puts.map((p) => client.set(p.key, p.value, p.readers)))
      .then(() => Promise.all(req.gets.map((key) => client.get(key))))
      .then((values) => reply({ values }), (e: Error) => reply({ error: e.message }));
  });
}, (e: Error) => reply({ error: e.message }));
