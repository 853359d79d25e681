// A small TCP key-value store for the ranks of a distributed run (torchrun's rendezvous model): the
// launcher (or rank 0 under mpirun/srun) serves it; ranks put NCCL's unique id in it, and the
// simulator's collectives pass their data through it.
//
// Frames, both ways: u32 header length, u32 payload length (big-endian), a JSON header, the payload.
// Requests: { id, op: "set", key, readers? } + value, or { id, op: "get", key }; a get waits until
// the key is set. A value set with `readers: n` is deleted after n gets, so collectives' data does
// not pile up. Replies: { id } + value (get) or nothing (set), or { id, error }.

import net from "node:net";

export interface StoreAddress {
  readonly host: string;
  readonly port: number;
}

export const formatAddress = (a: StoreAddress) => `${a.host}:${a.port}`;

/** `HOST:PORT` → an address; `what` names where the text came from, for the error. */
export function parseAddress(text: string, what: string): StoreAddress {
  const m = /^(.+):(\d+)$/.exec(text.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new RangeError(`${what}=${text} is not HOST:PORT (e.g. 10.0.0.1:29500)`);
  return { host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port };
}

interface Header {
  readonly id: number;
  readonly op?: "set" | "get";
  readonly key?: string;
  readonly readers?: number;
  readonly error?: string;
}

function frame(header: Header, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const head = Buffer.alloc(8);
  head.writeUInt32BE(json.length, 0);
  head.writeUInt32BE(payload.byteLength, 4);
  return Buffer.concat([head, json, payload]);
}

/** Splits a byte stream into frames; `onFrame` gets each payload as its own (aligned) copy. */
function frameReader(onFrame: (header: Header, payload: Uint8Array) => void): (chunk: Buffer) => void {
  // chunks are joined only once a whole frame has arrived: joining at every chunk is quadratic in a large frame
  let chunks: Buffer[] = [], buffered = 0, need = 8;
  return (chunk) => {
    chunks.push(chunk);
    buffered += chunk.length;
    while (buffered >= need) {
      let pending = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
      const jsonLength = pending.readUInt32BE(0), payloadLength = pending.readUInt32BE(4);
      const end = 8 + jsonLength + payloadLength;
      if (buffered < end) {
        chunks = [pending];
        need = end;
        return;
      }
      const header = JSON.parse(pending.subarray(8, 8 + jsonLength).toString()) as Header;
      onFrame(header, new Uint8Array(pending.subarray(8 + jsonLength, end)));
      pending = pending.subarray(end);
      chunks = pending.length ? [pending] : [];
      buffered = pending.length;
      need = 8;
    }
  };
}

export interface StoreServer {
  readonly address: StoreAddress;
  close(): Promise<void>;
}

/** Serves a store on `host:port` (port 0: any free port; the address says which). */
export async function serveStore(host = "127.0.0.1", port = 0): Promise<StoreServer> {
  const values = new Map<string, { value: Uint8Array; readersLeft: number }>();
  const waiting = new Map<string, ((value: Uint8Array) => void)[]>();
  const sockets = new Set<net.Socket>();

  /** hands the value to one reader, deleting it after its last */
  const take = (key: string): Uint8Array => {
    const entry = values.get(key)!;
    if (--entry.readersLeft === 0) values.delete(key);
    return entry.value;
  };
  const set = (key: string, value: Uint8Array, readers: number) => {
    values.set(key, { value, readersLeft: readers });
    const queue = waiting.get(key) ?? [];
    while (queue.length > 0 && values.has(key)) queue.shift()!(take(key));
    if (queue.length === 0) waiting.delete(key);
  };
  const get = (key: string, reply: (value: Uint8Array) => void) => {
    if (values.has(key)) reply(take(key));
    else waiting.set(key, [...(waiting.get(key) ?? []), reply]);
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.on("data", frameReader((h, payload) => {
      if (h.op === "set" && h.key !== undefined) {
        set(h.key, payload, h.readers ?? Infinity);
        socket.write(frame({ id: h.id }));
      } else if (h.op === "get" && h.key !== undefined) {
        get(h.key, (value) => socket.write(frame({ id: h.id }, value)));
      } else {
        socket.write(frame({ id: h.id, error: `not a store request: ${JSON.stringify(h)}` }));
      }
    }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  server.unref();
  const bound = server.address() as net.AddressInfo;
  return {
    address: { host, port: bound.port },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** One connection to a store. Gets wait for their key; requests may be in flight together. */
export class StoreClient {
  private nextId = 0;
  private readonly replies = new Map<number, { resolve(v: Uint8Array): void; reject(e: Error): void }>();
  private closedBecause: string | undefined;

  private constructor(private readonly socket: net.Socket, readonly address: StoreAddress) {
    socket.setNoDelay(true);
    socket.on("data", frameReader((h, payload) => {
      const r = this.replies.get(h.id);
      this.replies.delete(h.id);
      if (h.error !== undefined) r?.reject(new Error(h.error));
      else r?.resolve(payload);
    }));
    const fail = (why: string) => {
      this.closedBecause ??= why;
      for (const r of this.replies.values()) r.reject(new Error(`the store at ${formatAddress(address)} ${this.closedBecause}`));
      this.replies.clear();
    };
    const gone = "closed the connection (did the launcher or rank 0 exit?)";
    socket.on("error", (e: NodeJS.ErrnoException) => fail(e.code === "ECONNRESET" || e.code === "EPIPE" ? gone : `failed: ${e.message}`));
    socket.on("close", () => fail(gone));
  }

  /** Connects, retrying while nobody listens yet (the store's process may start after us) for up to `timeoutMs`. */
  static async connect(address: StoreAddress, timeoutMs = 60_000): Promise<StoreClient> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const socket = await new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(address.port, address.host, () => { s.off("error", reject); resolve(s); });
          s.once("error", reject);
        });
        return new StoreClient(socket, address);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if ((code !== "ECONNREFUSED" && code !== "ENOTFOUND" && code !== "EAI_AGAIN") || Date.now() > deadline) {
          throw new Error(`could not reach the store at ${formatAddress(address)} within ${timeoutMs / 1000} s: ${(e as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private request(header: Omit<Header, "id">, payload?: Uint8Array): Promise<Uint8Array> {
    if (this.closedBecause !== undefined) return Promise.reject(new Error(`the store at ${formatAddress(this.address)} ${this.closedBecause}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.replies.set(id, { resolve, reject });
      this.socket.write(frame({ id, ...header }, payload));
    });
  }

  /** Stores `value` under `key`; with `readers`, it is deleted after that many gets. */
  async set(key: string, value: Uint8Array, readers?: number): Promise<void> {
    await this.request({ op: "set", key, ...(readers === undefined ? {} : { readers }) }, value);
  }

  /** The value under `key`, once some rank has set it. */
  get(key: string): Promise<Uint8Array> {
    return this.request({ op: "get", key });
  }

  close(): void {
    this.closedBecause ??= "was closed by this process";
    this.socket.destroy();
  }
}
