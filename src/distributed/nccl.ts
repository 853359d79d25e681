// The public `nccl` API: communicators between ranks (one process per GPU) and their collectives.
// On the cuda target the engine is NCCL itself, on the simulator the ranks' processes exchange data
// through the launcher's store (src/backends/communicators.ts).
// Every collective first exchanges a small descriptor of its arguments (through the engine's own
// allGather), so that ranks disagreeing on sizes, dtypes, ops or roots get a LaunchError on every rank
// instead of a hang or corrupt data.

import { randomBytes } from "node:crypto";
import { LaunchError, NcclError } from "../errors.js";
import { deviceArray, type DeviceArray, type StreamLike } from "../runtime/devicearray.js";
import { currentTargetInfo, selectDevice } from "../runtime/select.js";
import type { Communicator, ReduceOp } from "../runtime/communicator.js";
import { isNcclDType, NCCL_DTYPES, REDUCE_OPS } from "./reduce-ops.js";
import { createSimCommunicator, ncclEngine, onSimulator } from "../backends/communicators.js";
import { formatAddress, parseAddress, type StoreAddress } from "./store.js";
import { LocalExchange, SyncStore, type Exchange } from "./sync-store.js";

export type { ReduceOp } from "../runtime/communicator.js";

export interface InitOptions {
  /** this process's rank, 0 … worldSize - 1 */
  readonly rank: number;
  readonly worldSize: number;
  /** from `nccl.uniqueId()` on one rank, sent to the others */
  readonly id: string;
}

const SIM_ID = "numbats-sim:";
const NCCL_ID = "nccl:";


// ---------------------------------------------------------------------------
// argument checks

const CALLS = ["allReduce", "broadcast", "reduce", "allGather", "reduceScatter"] as const;
type Call = (typeof CALLS)[number];

/** What a rank passes to a collective, as the float64s exchanged: call, dtype, counts, op, root, local problem. */
interface Descriptor {
  readonly call: Call;
  readonly dtype: string;
  readonly sendCount: number;
  readonly recvCount: number;
  readonly op?: ReduceOp;
  readonly root?: number;
  /** set when this rank's own checks failed: it still takes part in the exchange, so no rank hangs */
  readonly problem?: string;
}

const DTYPE_CODES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"];
const DESCRIPTOR_LENGTH = 7;

function encode(d: Descriptor): Float64Array {
  return Float64Array.of(CALLS.indexOf(d.call), DTYPE_CODES.indexOf(d.dtype), d.sendCount, d.recvCount,
    d.op === undefined ? -1 : REDUCE_OPS.indexOf(d.op), d.root ?? -1, d.problem === undefined ? 0 : 1);
}

function decode(v: Float64Array, at: number): Descriptor {
  const f = (i: number) => v[at * DESCRIPTOR_LENGTH + i]!;
  return {
    call: CALLS[f(0)]!, dtype: DTYPE_CODES[f(1)] ?? "?", sendCount: f(2), recvCount: f(3),
    ...(f(4) >= 0 ? { op: REDUCE_OPS[f(4)]! } : {}), ...(f(5) >= 0 ? { root: f(5) } : {}), ...(f(6) ? { problem: "yes" } : {}),
  };
}

const describe = (d: Descriptor) =>
  `${d.call}(${d.sendCount} ${d.dtype}${d.op ? `, ${d.op}` : ""}${d.root !== undefined ? `, root ${d.root}` : ""})`;

/** This rank's own problems with its arguments, before any exchange. */
function localProblem(call: Call, send: DeviceArray, recv: DeviceArray | undefined, worldSize: number, rank: number, op?: ReduceOp, root?: number): string | undefined {
  for (const [what, a] of [["send", send], ["recv", recv]] as const) {
    if (!a) continue;
    if (!isNcclDType(a.dtype)) return `the ${what} buffer is ${a.dtype}, which NCCL has no type for (it has ${NCCL_DTYPES.join(", ")}): convert to int32 or float32 first`;
    if (!a.isCContiguous()) return `the ${what} buffer is not contiguous: collectives need contiguous arrays (copy the view into a new array first)`;
  }
  if (recv && recv.dtype !== send.dtype) return `the send buffer is ${send.dtype} but the recv buffer is ${recv.dtype}`;
  if (op !== undefined && !(REDUCE_OPS as readonly string[]).includes(op)) return `'${op}' is not a reduction: use one of ${REDUCE_OPS.join(", ")}`;
  if (root !== undefined && !(Number.isInteger(root) && root >= 0 && root < worldSize)) return `root ${root} is not a rank 0…${worldSize - 1}`;
  const want = call === "allGather" ? send.size * worldSize : call === "reduceScatter" ? send.size / worldSize : send.size;
  const needsRecv = call !== "reduce" || rank === root;
  if (recv && needsRecv && recv.size !== want) {
    return `the recv buffer holds ${recv.size} elements, but ${call} of ${send.size} over ${worldSize} ranks needs ${want}${call === "reduceScatter" && !Number.isInteger(want) ? ` (the send size must be a multiple of ${worldSize})` : ""}`;
  }
  return undefined;
}

/** The first way in which the ranks' descriptors differ, or undefined when they agree. */
function disagreement(all: readonly Descriptor[]): string | undefined {
  const fields = ["call", "dtype", "sendCount", "op", "root"] as const;
  for (const field of fields) {
    const groups = new Map<string, number[]>();
    all.forEach((d, r) => groups.set(String(d[field]), [...(groups.get(String(d[field])) ?? []), r]));
    if (groups.size > 1) {
      const name = { call: "the call", dtype: "the dtype", sendCount: "the send size", op: "the op", root: "the root" }[field];
      return `ranks disagree on ${name}: ${[...groups].map(([v, ranks]) => `rank${ranks.length > 1 ? "s" : ""} ${ranks.join(", ")}: ${v}`).join("; ")}`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// the communicator users get

/** A rank's communicator: NCCL's collectives, checked across ranks first. Made by `nccl.init` or `nccl.initFromEnv`. */
export class NcclComm implements Communicator {
  private readonly mine = new Float64Array(DESCRIPTOR_LENGTH);
  private descriptorSend: DeviceArray | undefined;
  private descriptorRecv: DeviceArray | undefined;

  /** @internal */
  constructor(private readonly engine: Communicator, readonly localRank: number) {}

  get rank(): number { return this.engine.rank; }
  get worldSize(): number { return this.engine.worldSize; }

  /** Exchanges this rank's descriptor with the others'; throws the same LaunchError on every rank when they disagree. */
  private check(d: Descriptor): void {
    this.mine.set(encode(d));
    this.descriptorSend ??= deviceArray([DESCRIPTOR_LENGTH], "float64");
    this.descriptorRecv ??= deviceArray([DESCRIPTOR_LENGTH * this.worldSize], "float64");
    this.descriptorSend.copyToDevice(this.mine);
    this.engine.allGather(this.descriptorSend, this.descriptorRecv);
    const gathered = this.descriptorRecv.copyToHost() as Float64Array;
    const all = [...Array(this.worldSize).keys()].map((r) => decode(gathered, r));
    const here = `${d.call} on rank ${this.rank} of ${this.worldSize}`;
    if (d.problem) throw new LaunchError(`${here}: ${d.problem}`);
    const failed = all.flatMap((o, r) => (o.problem ? [r] : []));
    if (failed.length) throw new LaunchError(`${here}: rank${failed.length > 1 ? "s" : ""} ${failed.join(", ")} rejected ${failed.length > 1 ? "their" : "its"} arguments (see the error there); no rank ran the call`);
    const differ = disagreement(all);
    if (differ) throw new LaunchError(`${here}: ${differ}. Every rank must make the same collective calls in the same order, with the same sizes and dtypes (${all.map((o, r) => `rank ${r}: ${describe(o)}`).join(", ")})`);
  }

  private checked(call: Call, send: DeviceArray, recv: DeviceArray | undefined, op?: ReduceOp, root?: number): void {
    const problem = localProblem(call, send, recv, this.worldSize, this.rank, op, root);
    const recvCount = recv?.size ?? 0;
    this.check({ call, dtype: send.dtype, sendCount: send.size, recvCount, ...(op ? { op } : {}), ...(root !== undefined ? { root } : {}), ...(problem ? { problem } : {}) });
  }

  /** recv = send₀ op send₁ op … over all ranks (op: sum by default). */
  allReduce(send: DeviceArray, recv: DeviceArray, op: ReduceOp = "sum", stream?: StreamLike): void {
    this.checked("allReduce", send, recv, op);
    this.engine.allReduce(send, recv, op, stream);
  }

  /** Every rank's recv = the root's send. */
  broadcast(send: DeviceArray, recv: DeviceArray, root: number, stream?: StreamLike): void {
    this.checked("broadcast", send, recv, undefined, root);
    this.engine.broadcast(send, recv, root, stream);
  }

  /** The root's recv = send₀ op send₁ op …; other ranks' recv is left as it was. */
  reduce(send: DeviceArray, recv: DeviceArray, op: ReduceOp, root: number, stream?: StreamLike): void {
    this.checked("reduce", send, recv, op, root);
    this.engine.reduce(send, recv, op, root, stream);
  }

  /** recv = send₀, send₁, … concatenated in rank order (recv holds worldSize × send.size). */
  allGather(send: DeviceArray, recv: DeviceArray, stream?: StreamLike): void {
    this.checked("allGather", send, recv);
    this.engine.allGather(send, recv, stream);
  }

  /** Rank r's recv = block r of (send₀ op send₁ op …), the send split in worldSize equal blocks. */
  reduceScatter(send: DeviceArray, recv: DeviceArray, op: ReduceOp = "sum", stream?: StreamLike): void {
    this.checked("reduceScatter", send, recv, op);
    this.engine.reduceScatter(send, recv, op, stream);
  }

  /** Sends `buffer` to rank `peer`, which must recv the same size and dtype; pair them inside `group`. */
  send(buffer: DeviceArray, peer: number, stream?: StreamLike): void {
    this.p2pCheck("send", buffer);
    this.engine.send(buffer, peer, stream);
  }

  recv(buffer: DeviceArray, peer: number, stream?: StreamLike): void {
    this.p2pCheck("recv", buffer);
    this.engine.recv(buffer, peer, stream);
  }

  private p2pCheck(call: string, buffer: DeviceArray): void {
    const problem = localProblem("allReduce", buffer, undefined, this.worldSize, this.rank);
    if (problem) throw new LaunchError(`${call} on rank ${this.rank}: ${problem}`);
  }

  /** Runs `body`'s sends and receives as one group, so exchanges between pairs cannot deadlock. */
  group(body: () => void): void {
    this.engine.group(body);
  }

  /** Releases the communicator; every rank calls it. */
  destroy(): void {
    this.descriptorSend?.free();
    this.descriptorRecv?.free();
    this.engine.destroy();
  }

  [Symbol.dispose](): void {
    this.destroy();
  }
}

// ---------------------------------------------------------------------------
// making communicators

function checkRank(rank: number, worldSize: number, by: string): void {
  if (!Number.isInteger(worldSize) || worldSize < 1) throw new RangeError(`${by}: the world size must be a positive integer; got ${worldSize}`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize) throw new RangeError(`${by}: rank ${rank} is not in 0…${worldSize - 1}`);
}

/** Stores this process opened (served or connected), by address, so one process uses one connection. */
const stores = new Map<string, SyncStore>();

function storeAt(address: StoreAddress): SyncStore {
  const key = formatAddress(address);
  let s = stores.get(key);
  if (!s) stores.set(key, (s = SyncStore.open({ connect: address })));
  return s;
}

/** The store a simulator id names, without closing it when one communicator is destroyed. */
function sharedExchange(store: SyncStore): Exchange {
  return { exchange: (puts, gets) => store.exchange(puts, gets), close: () => {} };
}

async function createEngine(rank: number, worldSize: number, id: string): Promise<Communicator> {
  if (onSimulator() || id === SINGLE_RANK_ID) {
    if (!id.startsWith(SIM_ID)) throw new RangeError(`nccl.init: '${id.slice(0, 24)}…' is not an id of the simulator's engine: the ranks run on different targets (make them all use NUMBATS_TARGET=sim, or all the GPU)`);
    const [address, token] = id.slice(SIM_ID.length).split("/") as [string, string];
    const exchange = worldSize === 1 ? new LocalExchange() : sharedExchange(storeAt(parseAddress(address, "the id's store")));
    return createSimCommunicator({ rank, worldSize, token: token ?? "", exchange });
  }
  if (!id.startsWith(NCCL_ID)) throw new RangeError(`nccl.init: '${id.slice(0, 24)}…' is not an NCCL unique id: the ranks run on different targets (make them all use the GPU, or all NUMBATS_TARGET=sim)`);
  const { createNcclCommunicator } = await ncclEngine();
  return createNcclCommunicator({ rank, worldSize, id: new Uint8Array(Buffer.from(id.slice(NCCL_ID.length), "base64")) });
}

/** A single rank's id on the simulator: no store, no other process. */
const SINGLE_RANK_ID = `${SIM_ID}local/0`;

/**
 * NCCL's id for a lone rank on a GPU; where NCCL is not installed, the single-rank engine's (its collectives
 * are copies through the host), so a program written for N ranks still runs as one without NCCL.
 */
async function singleRankNcclId(): Promise<string> {
  try {
    return await uniqueId();
  } catch (e) {
    if (e instanceof NcclError && e.code === -1) return SINGLE_RANK_ID;
    throw e;
  }
}

/** A simulator id: where the store is and a fresh token naming the communicator's keys. */
function simId(address: StoreAddress): string {
  return `${SIM_ID}${formatAddress(address)}/${randomBytes(8).toString("hex")}`;
}

/** The store for a simulator id made outside the launcher: NUMBATS_MASTER's, else one this process serves. */
function simIdStore(): StoreAddress {
  const master = process.env.NUMBATS_MASTER;
  if (master) return parseAddress(master, "NUMBATS_MASTER");
  const served = SyncStore.open({ serve: { host: "127.0.0.1", port: 0 } });
  stores.set(formatAddress(served.address), served);
  return served.address;
}

/** A new communicator id (a string to send to the other ranks), for `nccl.init`. */
async function uniqueId(): Promise<string> {
  if (onSimulator()) return simId(simIdStore());
  const { ncclUniqueId } = await ncclEngine();
  return NCCL_ID + Buffer.from(ncclUniqueId()).toString("base64");
}

/** Makes this rank's communicator. Every rank calls it with the same id and world size. */
async function init(opts: InitOptions): Promise<NcclComm> {
  checkRank(opts.rank, opts.worldSize, "nccl.init");
  if (typeof opts.id !== "string") throw new TypeError("nccl.init: id must be the string nccl.uniqueId() returned");
  return new NcclComm(await createEngine(opts.rank, opts.worldSize, opts.id), opts.rank);
}

// ---------------------------------------------------------------------------
// initFromEnv: the launcher's variables, mpirun's, srun's

/** Where a process sits in the run, and who says so. */
export interface Placement {
  readonly rank: number;
  readonly localRank: number;
  readonly worldSize: number;
  /** the rendezvous store (needed when worldSize > 1) */
  readonly master?: StoreAddress;
  /** true when rank 0 serves the store itself (mpirun, srun); the launcher serves its own */
  readonly rankZeroServes: boolean;
  /** the variables read, for messages */
  readonly by: string;
}

function intVar(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`${name}=${raw} is not a non-negative integer`);
  return v;
}

function masterFrom(env: NodeJS.ProcessEnv): StoreAddress | undefined {
  if (env.NUMBATS_MASTER) return parseAddress(env.NUMBATS_MASTER, "NUMBATS_MASTER");
  if (env.MASTER_ADDR && env.MASTER_PORT) return parseAddress(`${env.MASTER_ADDR}:${env.MASTER_PORT}`, "MASTER_ADDR:MASTER_PORT");
  return undefined;
}

/** This process's rank, local rank, world size and store, from the environment. */
export function placementFromEnv(env: NodeJS.ProcessEnv = process.env): Placement {
  // [rank, size, local rank] variables of: numbats run, Open MPI's mpirun, MPICH/Intel MPI (PMI), Slurm's srun
  const schemes = [
    ["NUMBATS_RANK", "NUMBATS_WORLD_SIZE", "NUMBATS_LOCAL_RANK"],
    ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"],
    ["PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"],
    ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"],
  ] as const;
  for (const [rankVar, sizeVar, localVar] of schemes) {
    const rank = intVar(env, rankVar);
    if (rank === undefined) continue;
    const worldSize = intVar(env, sizeVar);
    if (worldSize === undefined) throw new RangeError(`${rankVar} is set but ${sizeVar} is not: both are needed to place this rank`);
    checkRank(rank, worldSize, `${rankVar}=${rank}, ${sizeVar}=${worldSize}`);
    const master = masterFrom(env);
    const by = `${rankVar}, ${sizeVar}`;
    if (worldSize > 1 && !master) {
      throw new RangeError(`${by} say this is rank ${rank} of ${worldSize}, but no store address for the rendezvous is set: set NUMBATS_MASTER=HOST:PORT (or MASTER_ADDR and MASTER_PORT) to a free port on the host of rank 0, or start the program with \`numbats run\``);
    }
    return { rank, worldSize, localRank: intVar(env, localVar) ?? (rankVar === "NUMBATS_RANK" ? rank : 0), ...(master ? { master } : {}), rankZeroServes: rankVar !== "NUMBATS_RANK", by };
  }
  return { rank: 0, localRank: 0, worldSize: 1, rankZeroServes: false, by: "no launcher variables (a single rank)" };
}

let initCount = 0;

/**
 * Each rank uses the device of its local rank: on GPUs device `localRank` (one process per GPU), on the
 * simulator device `localRank % N` of its N (NUMBATS_SIM_DEVICES, default 1), so any number of ranks runs.
 */
function deviceOfLocalRank(localRank: number): number {
  return onSimulator() ? localRank % currentTargetInfo().devices.length : localRank;
}

/** Makes this rank's communicator from the launcher's (or mpirun's, srun's) environment. */
async function initFromEnv(): Promise<NcclComm> {
  const p = placementFromEnv();
  selectDevice(deviceOfLocalRank(p.localRank));
  if (p.worldSize === 1) return init({ rank: 0, worldSize: 1, id: onSimulator() ? SINGLE_RANK_ID : await singleRankNcclId() });
  const master = p.master!;
  const serves = p.rankZeroServes && p.rank === 0;
  let store: SyncStore;
  if (serves) {
    store = SyncStore.open({ serve: { host: "0.0.0.0", port: master.port } });
    stores.set(formatAddress(master), store);
  } else {
    store = storeAt(master);
  }
  // rank 0 makes the id and hands it to the others through the store (a fresh key per initFromEnv)
  const key = `numbats/init/${initCount++}`;
  let id: string;
  if (p.rank === 0) {
    id = onSimulator() ? simId(master) : await uniqueId();
    store.exchange([{ key, value: new TextEncoder().encode(id), readers: p.worldSize - 1 }], []);
  } else {
    id = new TextDecoder().decode(store.exchange([], [key])[0]);
  }
  return new NcclComm(await createEngine(p.rank, p.worldSize, id), p.localRank);
}

/** NCCL's communicators and collectives, on the GPU or between simulator processes. */
export const nccl = { uniqueId, init, initFromEnv } as const;
