// The simulator's engine behind `nccl`: the same collectives as NCCL's, between the ranks' processes,
// through the launcher's store (or a map, for a single rank). Each collective is one exchange: a rank
// puts what the others need under keys named by the communicator, the call's sequence number and the
// ranks, then gets what it needs (waiting for it) and reduces in rank order, so results do not depend
// on timing. The caller's thread blocks for the exchange (sync-store.ts), as NCCL's stream-ordered
// calls do when the stream is synchronised; on the simulator all device work is already complete.

import { LaunchError } from "../../../errors.js";
import type { DeviceArray, StreamLike } from "../../../runtime/devicearray.js";
import type { TypedArray } from "../../../dtypes.js";
import type { Communicator, ReduceOp } from "../../../runtime/communicator.js";
import { reduceParts, typedView, type NcclDType } from "../../../distributed/reduce-ops.js";
import type { Exchange, Put } from "../../../distributed/sync-store.js";

export interface SimCommOptions {
  readonly rank: number;
  readonly worldSize: number;
  /** names this communicator's keys in the store (from its unique id) */
  readonly token: string;
  readonly exchange: Exchange;
}

/** The bytes of a contiguous device array (a copy on the host). */
function readBytes(a: DeviceArray, stream: StreamLike | undefined): Uint8Array {
  const host = a.ravel().copyToHost(undefined, stream) as TypedArray;
  return new Uint8Array(host.buffer, host.byteOffset, host.byteLength);
}

function writeBytes(a: DeviceArray, bytes: Uint8Array, stream: StreamLike | undefined): void {
  a.ravel().copyToDevice(typedView(a.dtype, bytes) as never, stream);
}

/** A point-to-point message: its dtype and element count ahead of the data, so the receiver can check them. */
const P2P_HEADER = 16;

function p2pMessage(a: DeviceArray, stream: StreamLike | undefined): Uint8Array {
  const data = readBytes(a, stream);
  const msg = new Uint8Array(P2P_HEADER + data.byteLength);
  const head = new DataView(msg.buffer);
  head.setFloat64(0, a.size);
  msg.set(new TextEncoder().encode(a.dtype.padEnd(8)), 8);
  msg.set(data, P2P_HEADER);
  return msg;
}

interface PendingRecv { readonly key: string; readonly buffer: DeviceArray; readonly peer: number; readonly stream?: StreamLike }
interface Group { readonly puts: Put[]; readonly recvs: PendingRecv[] }

class SimCommunicator implements Communicator {
  readonly rank: number;
  readonly worldSize: number;
  private seq = 0;
  private readonly sent: number[];
  private readonly received: number[];
  /** sends and receives queued by group(), run as one exchange at its end */
  private grouped: Group | undefined;
  private destroyed = false;

  constructor(private readonly opts: SimCommOptions) {
    this.rank = opts.rank;
    this.worldSize = opts.worldSize;
    this.sent = new Array<number>(opts.worldSize).fill(0);
    this.received = new Array<number>(opts.worldSize).fill(0);
  }

  private key(...parts: (string | number)[]): string {
    return [this.opts.token, ...parts].join("/");
  }

  /** Starts collective number seq: the keys of rank r's contribution are key(seq, r, …). */
  private collective(call: string): number {
    if (this.destroyed) throw new LaunchError(`${call} on a destroyed communicator`);
    if (this.grouped) throw new LaunchError(`${call} inside group(): only send and recv can be grouped on the simulator`);
    return this.seq++;
  }

  private others(): number[] {
    return [...Array(this.worldSize).keys()].filter((r) => r !== this.rank);
  }

  /** Every rank's bytes of `mine` (its own included), in rank order. */
  private gatherAll(seq: number, mine: Uint8Array): Uint8Array[] {
    const others = this.others();
    const got = this.opts.exchange.exchange(
      others.length ? [{ key: this.key(seq, this.rank), value: mine, readers: others.length }] : [],
      others.map((r) => this.key(seq, r)),
    );
    return [...got.slice(0, this.rank), mine, ...got.slice(this.rank)];
  }

  allReduce(send: DeviceArray, recv: DeviceArray, op: ReduceOp = "sum", stream?: StreamLike): void {
    const seq = this.collective("allReduce");
    writeBytes(recv, reduceParts(send.dtype as NcclDType, op, this.gatherAll(seq, readBytes(send, stream))), stream);
  }

  broadcast(send: DeviceArray, recv: DeviceArray, root: number, stream?: StreamLike): void {
    const seq = this.collective("broadcast");
    if (this.rank === root) {
      const data = readBytes(send, stream);
      if (this.worldSize > 1) this.opts.exchange.exchange([{ key: this.key(seq, root), value: data, readers: this.worldSize - 1 }], []);
      writeBytes(recv, data, stream);
    } else {
      writeBytes(recv, this.opts.exchange.exchange([], [this.key(seq, root)])[0]!, stream);
    }
  }

  reduce(send: DeviceArray, recv: DeviceArray, op: ReduceOp, root: number, stream?: StreamLike): void {
    const seq = this.collective("reduce");
    const mine = readBytes(send, stream);
    if (this.rank !== root) {
      this.opts.exchange.exchange([{ key: this.key(seq, this.rank), value: mine, readers: 1 }], []);
      return;
    }
    const got = this.opts.exchange.exchange([], this.others().map((r) => this.key(seq, r)));
    writeBytes(recv, reduceParts(send.dtype as NcclDType, op, [...got.slice(0, root), mine, ...got.slice(root)]), stream);
  }

  allGather(send: DeviceArray, recv: DeviceArray, stream?: StreamLike): void {
    const seq = this.collective("allGather");
    const parts = this.gatherAll(seq, readBytes(send, stream));
    const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
    parts.forEach((p, r) => all.set(p, r * p.byteLength));
    writeBytes(recv, all, stream);
  }

  reduceScatter(send: DeviceArray, recv: DeviceArray, op: ReduceOp = "sum", stream?: StreamLike): void {
    const seq = this.collective("reduceScatter");
    const mine = readBytes(send, stream);
    const chunk = mine.byteLength / this.worldSize;
    const part = (r: number) => mine.subarray(r * chunk, (r + 1) * chunk);
    // rank r gets chunk r of every rank's buffer
    const got = this.opts.exchange.exchange(
      this.others().map((r) => ({ key: this.key(seq, this.rank, r), value: part(r), readers: 1 })),
      this.others().map((r) => this.key(seq, r, this.rank)),
    );
    writeBytes(recv, reduceParts(send.dtype as NcclDType, op, [...got.slice(0, this.rank), part(this.rank), ...got.slice(this.rank)]), stream);
  }

  private checkPeer(call: string, peer: number): void {
    if (this.destroyed) throw new LaunchError(`${call} on a destroyed communicator`);
    if (!Number.isInteger(peer) || peer < 0 || peer >= this.worldSize) {
      throw new LaunchError(`${call}(…, peer ${peer}) on rank ${this.rank}: the peer must be a rank 0…${this.worldSize - 1}`);
    }
  }

  send(buffer: DeviceArray, peer: number, stream?: StreamLike): void {
    this.checkPeer("send", peer);
    const put: Put = { key: this.key("p2p", this.rank, peer, this.sent[peer]!++), value: p2pMessage(buffer, stream), readers: 1 };
    if (this.grouped) this.grouped.puts.push(put);
    else this.opts.exchange.exchange([put], []);
  }

  recv(buffer: DeviceArray, peer: number, stream?: StreamLike): void {
    this.checkPeer("recv", peer);
    const r: PendingRecv = { key: this.key("p2p", peer, this.rank, this.received[peer]!++), buffer, peer, ...(stream ? { stream } : {}) };
    if (this.grouped) this.grouped.recvs.push(r);
    else this.deliver(r, this.opts.exchange.exchange([], [r.key])[0]!);
  }

  /** Writes a received message into its buffer after checking it fits (the sender's side cannot know). */
  private deliver(r: PendingRecv, msg: Uint8Array): void {
    const count = new DataView(msg.buffer, msg.byteOffset).getFloat64(0);
    const dtype = new TextDecoder().decode(msg.subarray(8, P2P_HEADER)).trim();
    if (count !== r.buffer.size || dtype !== r.buffer.dtype) {
      throw new LaunchError(`recv on rank ${this.rank} from rank ${r.peer}: rank ${r.peer} sent ${count} ${dtype}, but the receive buffer holds ${r.buffer.size} ${r.buffer.dtype}: sizes and dtypes of a send and its recv must agree`);
    }
    writeBytes(r.buffer, msg.subarray(P2P_HEADER), r.stream);
  }

  group(body: () => void): void {
    if (this.grouped) {
      body(); // nested groups join the outer one, as ncclGroupStart/End nest
      return;
    }
    const grouped: Group = { puts: [], recvs: [] };
    this.grouped = grouped;
    try {
      body();
    } finally {
      this.grouped = undefined;
    }
    const got = this.opts.exchange.exchange(grouped.puts, grouped.recvs.map((r) => r.key));
    grouped.recvs.forEach((r, i) => this.deliver(r, got[i]!));
  }

  /** Collective: rank 0 may serve the store, so it waits until every rank is done with it. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    const ex = this.opts.exchange;
    if (this.rank === 0) ex.exchange([], this.others().map((r) => this.key("done", r)));
    else ex.exchange([{ key: this.key("done", this.rank), value: new Uint8Array(0), readers: 1 }], []);
    ex.close();
  }
}

/** The simulator's communicator for one rank. */
export function createSimCommunicator(opts: SimCommOptions): Communicator {
  return new SimCommunicator(opts);
}
