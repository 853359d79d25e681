// Blocking access to the store, for the synchronous collectives of the simulator's engine (NCCL's
// calls return without awaiting, and so do ours). A Node thread cannot block on a socket, so a worker
// thread owns the connection (and, for rank 0 under mpirun/srun or after `nccl.uniqueId()`, the
// server): the caller posts a request, sleeps in `Atomics.wait` on a shared flag, and takes the reply
// with `receiveMessageOnPort` once the worker raises the flag.

import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { workerCode } from "../workers/worker-entry.js";
import { formatAddress, type StoreAddress } from "./store.js";

/** One value to store: deleted after `readers` gets (kept when undefined). */
export interface Put {
  readonly key: string;
  readonly value: Uint8Array;
  readonly readers?: number;
}

/** Puts, then gets (each waits for its key); the values of the gets, in order. */
export interface Exchange {
  exchange(puts: readonly Put[], gets: readonly string[]): Uint8Array[];
  close(): void;
}

/** What the worker is asked to do first: connect to a store, or serve one and connect to it. */
export interface StoreWorkerInit {
  readonly port: MessagePort;
  readonly flag: Int32Array;
  readonly connect?: StoreAddress;
  readonly serve?: { host: string; port: number };
}
export interface StoreWorkerRequest { readonly puts: readonly Put[]; readonly gets: readonly string[] }
export type StoreWorkerReply = { readonly values: Uint8Array[]; readonly address?: StoreAddress } | { readonly error: string };

/** How long a rank waits for the others before giving up: NUMBATS_DIST_TIMEOUT seconds, default 600. */
function timeoutMs(): number {
  const raw = process.env.NUMBATS_DIST_TIMEOUT;
  const s = raw === undefined ? 600 : Number(raw);
  if (!(s > 0)) throw new RangeError(`NUMBATS_DIST_TIMEOUT=${raw} is not a positive number of seconds`);
  return s * 1000;
}

/** A store reached through a worker thread, with blocking calls. */
export class SyncStore implements Exchange {
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly flag: Int32Array,
    /** the store's address (the one served, when this process serves it) */
    readonly address: StoreAddress,
  ) {}

  /** Connects to the store at `connect`, or serves one on `serve` (port 0: any) and connects to it. */
  static open(where: { connect: StoreAddress } | { serve: { host: string; port: number } }): SyncStore {
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const init: StoreWorkerInit = { port: port2, flag, ...where };
    const worker = new Worker(workerCode("store-worker"), { eval: true, workerData: init, transferList: [port2] });
    worker.unref();
    const what = "connect" in where ? `connecting to the store at ${formatAddress(where.connect)}` : `serving a store on ${formatAddress(where.serve)}`;
    const reply = awaitReply(port1, flag, worker, what);
    return new SyncStore(worker, port1, flag, reply.address!);
  }

  exchange(puts: readonly Put[], gets: readonly string[]): Uint8Array[] {
    if (this.closed) throw new Error("the communicator's store connection is closed (after destroy())");
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ puts, gets } satisfies StoreWorkerRequest);
    return awaitReply(this.port, this.flag, this.worker, `waiting for ${gets.length ? gets.join(", ") : "the store"}`).values;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }
}

/** Waits for the worker's reply to the request just posted (exported for tests). */
export function awaitReply(port: MessagePort, flag: Int32Array, worker: Worker, what: string): { values: Uint8Array[]; address?: StoreAddress } {
  const limit = timeoutMs();
  const deadline = Date.now() + limit;
  // a wake-up with the flag still down is the previous reply's notify, late (the worker was preempted
  // between raising the flag and notifying): wait on until this reply raises it
  while (Atomics.load(flag, 0) === 0) {
    const left = deadline - Date.now();
    if (left <= 0 || Atomics.wait(flag, 0, 0, left) === "timed-out") {
      void worker.terminate();
      throw new Error(`gave up after ${limit / 1000} s ${what}: another rank may have failed or not called the same collective (NUMBATS_DIST_TIMEOUT sets the limit in seconds)`);
    }
  }
  const reply = receiveMessageOnPort(port)?.message as StoreWorkerReply | undefined;
  if (!reply) throw new Error(`the store worker stopped while ${what}`);
  if ("error" in reply) throw new Error(`${what}: ${reply.error}`);
  return reply;
}

/** The exchange of a single process (world size 1): a map; a get of a key nobody put can never be answered. */
export class LocalExchange implements Exchange {
  private readonly values = new Map<string, Uint8Array>();

  exchange(puts: readonly Put[], gets: readonly string[]): Uint8Array[] {
    for (const p of puts) this.values.set(p.key, p.value);
    return gets.map((key) => {
      const v = this.values.get(key);
      if (v === undefined) throw new Error(`a single rank waits for '${key}', which it never sent: it would wait forever`);
      this.values.delete(key);
      return v;
    });
  }

  close(): void {
    this.values.clear();
  }
}
