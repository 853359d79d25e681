// STUB for branch `distsim` only: the NCCL bindings come from branch `distnative`, whose file replaces
// this one at merge. It exists so that src/distributed/nccl.ts compiles here.
import type { Communicator } from "../../distributed/communicator.js";

export function createNcclCommunicator(_opts: { rank: number; worldSize: number; id: Uint8Array }): Communicator {
  throw new Error("NCCL bindings are not part of this build");
}

export function ncclUniqueId(): Uint8Array {
  throw new Error("NCCL bindings are not part of this build");
}
