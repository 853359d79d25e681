// The cuda target's Communicator: NCCL's collectives on this process's current GPU (nccl.ts binds
// the library). Each call is checked here first (arrays on the communicator's device, contiguous,
// dtypes and sizes that agree) so that NCCL never sees a call it would reject or misread.

import type { Communicator, ReduceOp } from "../../../runtime/communicator.js";
import { LaunchError } from "../../../errors.js";
import { DTYPE_INFO } from "../../../dtypes.js";
import { DeviceArray, type StreamLike } from "../../../runtime/devicearray.js";
import { getBackend } from "../../../runtime/select.js";
import { streamHandle } from "../../../runtime/streams.js";
import { CudaDevice } from "../driver/device.js";
import { NCCL_DATA_TYPES, NCCL_OPS, NCCL_UNIQUE_ID_BYTES, ncclUint8, ncclLibrary, type Nccl, type NcclCall } from "../driver/nccl.js";

/** A new NCCL unique id (ncclGetUniqueId): rank 0 makes it and every rank passes it to createNcclCommunicator. */
export function ncclUniqueId(): Uint8Array {
  const lib = ncclLibrary();
  const id = new Uint8Array(NCCL_UNIQUE_ID_BYTES);
  lib.check("ncclGetUniqueId", lib.api.ncclGetUniqueId(id));
  return id;
}

/** This process's rank of `worldSize` (ncclCommInitRank, which waits for every rank), on the current GPU. */
export function createNcclCommunicator(opts: { rank: number; worldSize: number; id: Uint8Array }): Communicator {
  const { rank, worldSize, id } = opts;
  if (!Number.isInteger(worldSize) || worldSize < 1) throw new RangeError(`worldSize must be a positive whole number, got ${worldSize}`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize) throw new RangeError(`rank must be a whole number from 0 to ${worldSize - 1}, got ${rank}`);
  if (!(id instanceof Uint8Array) || id.length !== NCCL_UNIQUE_ID_BYTES) throw new TypeError(`an NCCL unique id is ${NCCL_UNIQUE_ID_BYTES} bytes (from ncclUniqueId())`);
  const device = getBackend();
  if (!(device instanceof CudaDevice)) throw new LaunchError(`NCCL collectives run on GPUs; this process runs kernels on the ${device.name} target`);
  const lib = ncclLibrary();
  device.activate(); // NCCL binds the communicator to the current device
  const out: unknown[] = [null];
  lib.check("ncclCommInitRank", lib.api.ncclCommInitRank(out, worldSize, { internal: Array.from(id) }, rank),
    `rank ${rank} of ${worldSize} on device ${device.device.id} (${device.device.name})`);
  return new NcclCommunicator(lib, device, out[0], rank, worldSize);
}

/** An array's part in one call: its device address, element count and NCCL datatype. */
interface Operand { readonly address: bigint; readonly count: number; readonly datatype: number }

class NcclCommunicator implements Communicator {
  private comm: unknown;

  constructor(private readonly lib: Nccl, private readonly device: CudaDevice, comm: unknown, readonly rank: number, readonly worldSize: number) {
    this.comm = comm;
  }

  allReduce(send: DeviceArray, recv: DeviceArray, op: ReduceOp = "sum", stream?: StreamLike): void {
    const call = "ncclAllReduce";
    const [s, r] = this.pair(call, send, recv, false, true);
    this.run(call, this.lib.api.ncclAllReduce(s.address, r.address, r.count, r.datatype, this.op(call, op), this.live(call), this.stream(call, stream)));
  }

  broadcast(send: DeviceArray, recv: DeviceArray, root: number, stream?: StreamLike): void {
    const call = "ncclBroadcast";
    const [s, r] = this.pair(call, send, recv, false, false);
    this.run(call, this.lib.api.ncclBroadcast(s.address, r.address, r.count, r.datatype, this.root(call, root), this.live(call), this.stream(call, stream)));
  }

  reduce(send: DeviceArray, recv: DeviceArray, op: ReduceOp, root: number, stream?: StreamLike): void {
    const call = "ncclReduce";
    const [s, r] = this.pair(call, send, recv, false, true);
    this.run(call, this.lib.api.ncclReduce(s.address, r.address, r.count, r.datatype, this.op(call, op), this.root(call, root), this.live(call), this.stream(call, stream)));
  }

  allGather(send: DeviceArray, recv: DeviceArray, stream?: StreamLike): void {
    const call = "ncclAllGather";
    const [s, r] = this.pair(call, send, recv, true, false);
    this.run(call, this.lib.api.ncclAllGather(s.address, r.address, s.count, s.datatype, this.live(call), this.stream(call, stream)));
  }

  reduceScatter(send: DeviceArray, recv: DeviceArray, op: ReduceOp = "sum", stream?: StreamLike): void {
    const call = "ncclReduceScatter";
    const [s, r] = this.pair(call, recv, send, true, true).reverse() as [Operand, Operand];
    this.run(call, this.lib.api.ncclReduceScatter(s.address, r.address, r.count, r.datatype, this.op(call, op), this.live(call), this.stream(call, stream)));
  }

  send(buffer: DeviceArray, peer: number, stream?: StreamLike): void {
    const call = "ncclSend";
    const b = this.operand(call, "buffer", buffer, false);
    this.run(call, this.lib.api.ncclSend(b.address, b.count, b.datatype, this.peer(call, peer), this.live(call), this.stream(call, stream)));
  }

  recv(buffer: DeviceArray, peer: number, stream?: StreamLike): void {
    const call = "ncclRecv";
    const b = this.operand(call, "buffer", buffer, false);
    this.run(call, this.lib.api.ncclRecv(b.address, b.count, b.datatype, this.peer(call, peer), this.live(call), this.stream(call, stream)));
  }

  group(body: () => void): void {
    this.live("ncclGroupStart");
    this.run("ncclGroupStart", this.lib.api.ncclGroupStart());
    try {
      body();
    } catch (e) {
      // ended so that NCCL's group state stays balanced: after a call in it failed, NCCL runs none of the
      // group and ncclGroupEnd reports that failure again, which must not replace the body's own error
      this.lib.api.ncclGroupEnd();
      throw e;
    }
    this.run("ncclGroupEnd", this.lib.api.ncclGroupEnd());
  }

  /** Destroys the communicator; if NCCL refuses, it stays usable and destroy() may be called again. */
  destroy(): void {
    if (this.comm === undefined) return;
    this.device.activate();
    this.run("ncclCommDestroy", this.lib.api.ncclCommDestroy(this.comm));
    this.comm = undefined;
  }

  // ------------------------------------------------------------------ checks before NCCL sees a call

  private run(call: NcclCall, code: number): void {
    this.lib.check(call, code, `rank ${this.rank} of ${this.worldSize}`);
  }

  private live(call: string): unknown {
    if (this.comm === undefined) throw new LaunchError(`${call}: the communicator was destroyed`);
    this.device.activate();
    return this.comm;
  }

  /**
   * `small` and `large` of one call, both of one dtype; `large` holds worldSize times `small`'s elements
   * where `scaled` (allGather's recv, reduceScatter's send), else as many.
   */
  private pair(call: string, small: DeviceArray, large: DeviceArray, scaled: boolean, reduces: boolean): [Operand, Operand] {
    const names = call === "ncclReduceScatter" ? ["recv", "send"] as const : ["send", "recv"] as const;
    const operands: [Operand, Operand] = [this.operand(call, names[0], small, reduces), this.operand(call, names[1], large, reduces)];
    if (small.dtype !== large.dtype) throw new LaunchError(`${call}: ${names[0]} holds ${small.dtype}, ${names[1]} ${large.dtype}; both must hold one dtype`);
    const factor = scaled ? this.worldSize : 1;
    if (large.size !== small.size * factor) {
      const want = !scaled ? `as many elements as ${names[0]} (${small.size})` : `${factor} × ${small.size} elements (worldSize × ${names[0]}'s)`;
      throw new LaunchError(`${call}: ${names[1]} has ${large.size} elements; it must have ${want}`);
    }
    return operands;
  }

  /** The array as NCCL takes it; data that is only moved may be of a dtype NCCL lacks (sent as bytes). */
  private operand(call: string, name: string, a: DeviceArray, reduces: boolean): Operand {
    if (!(a instanceof DeviceArray)) throw new LaunchError(`${call}: ${name} must be a DeviceArray (cuda.toDevice / cuda.deviceArray)`);
    if (a.backend !== this.device) {
      throw new LaunchError(`${call}: ${name} is in the memory of device ${a.device.id} (${a.device.name}), but this communicator is on device ${this.device.device.id} (${this.device.device.name})`);
    }
    if (!a.isCContiguous()) throw new LaunchError(`${call}: ${name} must be C-contiguous (NCCL reads and writes consecutive elements); copy the view first`);
    const buffer = this.device.useBuffer(a.buffer, call);
    const address = buffer.ptr + BigInt(a.byteOffset);
    const datatype = NCCL_DATA_TYPES[a.dtype];
    if (datatype !== undefined) return { address, count: a.size, datatype };
    if (reduces) {
      throw new LaunchError(`${call}: NCCL cannot reduce ${a.dtype} (it reduces int8, uint8, int32, uint32, int64, uint64, float16, float32, float64 and bfloat16)`);
    }
    return { address, count: a.size * DTYPE_INFO[a.dtype].size, datatype: ncclUint8 };
  }

  private op(call: string, op: ReduceOp): number {
    const code = (NCCL_OPS as Record<string, number>)[op];
    if (code === undefined) throw new LaunchError(`${call}: unknown reduction '${op}': use one of ${Object.keys(NCCL_OPS).join(", ")}`);
    return code;
  }

  private root(call: string, root: number): number {
    return this.rankIn(call, "root", root);
  }

  private peer(call: string, peer: number): number {
    return this.rankIn(call, "peer", peer);
  }

  private rankIn(call: string, what: string, r: number): number {
    if (!Number.isInteger(r) || r < 0 || r >= this.worldSize) throw new LaunchError(`${call}: ${what} ${r} is not a rank (0…${this.worldSize - 1})`);
    return r;
  }

  private stream(call: string, stream: StreamLike | undefined): unknown {
    return this.device.useStream(streamHandle(stream) ?? this.device.defaultStream(), call).handle;
  }
}
