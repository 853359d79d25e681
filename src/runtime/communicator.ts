// The contract between the public `nccl` API (src/distributed/nccl.ts) and the two engines behind it:
// NCCL itself through koffi on the cuda target (src/backends/cuda/host/nccl-comm.ts), and the simulator's
// collectives between the ranks' processes (src/distributed/sim-*.ts).
import type { DeviceArray } from "./devicearray.js";
import type { StreamLike } from "./devicearray.js";

/** Reduction operators, as NCCL names them (`ncclSum`, `ncclProd`, `ncclMin`, `ncclMax`, `ncclAvg`). */
export type ReduceOp = "sum" | "prod" | "min" | "max" | "avg";

/** One rank's place in a group of ranks, and the collectives between them. Calls are stream-ordered. */
export interface Communicator {
  readonly rank: number;
  readonly worldSize: number;
  allReduce(send: DeviceArray, recv: DeviceArray, op?: ReduceOp, stream?: StreamLike): void;
  broadcast(send: DeviceArray, recv: DeviceArray, root: number, stream?: StreamLike): void;
  reduce(send: DeviceArray, recv: DeviceArray, op: ReduceOp, root: number, stream?: StreamLike): void;
  allGather(send: DeviceArray, recv: DeviceArray, stream?: StreamLike): void;
  reduceScatter(send: DeviceArray, recv: DeviceArray, op?: ReduceOp, stream?: StreamLike): void;
  send(buffer: DeviceArray, peer: number, stream?: StreamLike): void;
  recv(buffer: DeviceArray, peer: number, stream?: StreamLike): void;
  /** Runs `body`'s sends and receives as one group (`ncclGroupStart`/`ncclGroupEnd`), so pairs cannot deadlock. */
  group(body: () => void): void;
  destroy(): void;
}
