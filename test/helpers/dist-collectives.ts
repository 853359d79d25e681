// Run by test/host/distributed.test.ts under `numbats run -n 4`: for every world size k = 1…4 (ranks below k
// make a communicator with nccl.init and an id broadcast over the world), every collective, dtype and
// op; prints one JSON line per result, and the messages of the mismatched calls that must fail.
process.env.NUMBATS_TARGET = "sim";

import { cuda, LaunchError, nccl, type DeviceArray, type NcclComm } from "../../src/index.js";
import { type TypedArray } from "../../src/dtypes.js";
import { float16FromBits } from "../../src/half.js";
import { NCCL_DTYPES, REDUCE_OPS, type NcclDType } from "../../src/distributed/reduce-ops.js";
import { hostArrayOf, inputOf, type Value } from "./dist-inputs.js";

const N = 3;
const world = await nccl.initFromEnv();

const values = (dtype: NcclDType, d: DeviceArray) => {
  const h = d.copyToHost() as TypedArray;
  return [...h].map((v) => (dtype === "float16" ? float16FromBits(v as number) : v).toString());
};
/** A device array of `dtype` holding `values` (a Uint16Array alone would be taken for uint16, not float16). */
function upload(dtype: NcclDType, values: readonly Value[]): DeviceArray {
  const d = cuda.deviceArray([values.length], dtype);
  d.copyToDevice(hostArrayOf(dtype, values) as never);
  return d;
}
const print = (k: number, call: string, dtype: string, op: string, got: string[]) =>
  console.log(JSON.stringify({ k, call, dtype, op, rank: world.rank, got }));

/** The communicator of ranks 0…k-1: rank 0's id reaches the others by a broadcast over the world. */
async function subComm(k: number): Promise<NcclComm | undefined> {
  const id = world.rank === 0 ? await nccl.uniqueId() : "";
  const idBytes = cuda.toDevice(new Uint8Array(128).map((_, i) => id.charCodeAt(i) || 32));
  world.broadcast(idBytes, idBytes, 0);
  const shared = String.fromCharCode(...(idBytes.copyToHost() as Uint8Array)).trim();
  return world.rank < k ? nccl.init({ rank: world.rank, worldSize: k, id: shared }) : undefined;
}

for (let k = 1; k <= world.worldSize; k++) {
  const comm = await subComm(k);
  if (!comm) continue;
  for (const dtype of NCCL_DTYPES) {
    const send = upload(dtype, inputOf(dtype, comm.rank, N));
    const big = upload(dtype, inputOf(dtype, comm.rank, N * k));
    const recv = cuda.deviceArray([N], dtype), gathered = cuda.deviceArray([N * k], dtype);
    for (const op of REDUCE_OPS) {
      comm.allReduce(send, recv, op);
      print(k, "allReduce", dtype, op, values(dtype, recv));
      const root = k - 1;
      recv.copyToDevice(hostArrayOf(dtype, Array(N).fill(dtype === "int64" || dtype === "uint64" ? 0n : 0)));
      comm.reduce(send, recv, op, root);
      print(k, "reduce", dtype, op, values(dtype, recv));
      comm.reduceScatter(big, recv, op);
      print(k, "reduceScatter", dtype, op, values(dtype, recv));
    }
    comm.broadcast(send, recv, k - 1);
    print(k, "broadcast", dtype, "", values(dtype, recv));
    comm.allGather(send, gathered);
    print(k, "allGather", dtype, "", values(dtype, gathered));
    // a ring: each rank sends to the next and receives from the previous, grouped
    comm.group(() => {
      comm.send(send, (comm.rank + 1) % k);
      comm.recv(recv, (comm.rank + k - 1) % k);
    });
    print(k, "sendrecv", dtype, "", values(dtype, recv));
  }
  if (k === world.worldSize) {
    // mismatches: every rank must get the same LaunchError, and the communicator stays usable
    const tryCall = (what: string, fn: () => void) => {
      try {
        fn();
        console.log(JSON.stringify({ mismatch: what, rank: comm.rank, error: null }));
      } catch (e) {
        console.log(JSON.stringify({ mismatch: what, rank: comm.rank, error: `${(e as Error).name}: ${(e as Error).message}`, launchError: e instanceof LaunchError }));
      }
    };
    const n = comm.rank === 1 ? N + 1 : N;
    tryCall("size", () => comm.allReduce(cuda.deviceArray([n], "float32"), cuda.deviceArray([n], "float32")));
    const dtype = comm.rank === 2 ? "float64" : "float32";
    tryCall("dtype", () => comm.broadcast(cuda.deviceArray([N], dtype), cuda.deviceArray([N], dtype), 0));
    tryCall("unsupported", () => comm.allReduce(cuda.deviceArray([N], comm.rank === 0 ? "int16" : "int32"), cuda.deviceArray([N], comm.rank === 0 ? "int16" : "int32")));
    tryCall("p2p", () => comm.group(() => {
      if (comm.rank === 0) comm.send(cuda.deviceArray([N + 2], "int32"), 1);
      if (comm.rank === 1) comm.recv(cuda.deviceArray([N], "int32"), 0);
    }));
  }
  comm.destroy();
}
world.destroy();
