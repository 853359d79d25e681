// The engines behind the public `nccl` API (src/distributed/nccl.ts), one per back end: on the GPU NCCL
// itself (src/backends/cuda/host/nccl-comm.ts, loaded on first use), on the simulator the ranks'
// processes exchanging data through the launcher's store (src/backends/sim/host/sim-comm.ts). Like
// src/backends/index.ts, a list of back ends: the public API reaches each engine through here.

import { currentTargetInfo } from "../runtime/select.js";

export { createSimCommunicator } from "./sim/host/sim-comm.js";

/** NCCL's engine, loaded on first use (it loads libnccl). */
export const ncclEngine = () => import("./cuda/host/nccl-comm.js");

/** Whether the ranks run on the simulator (and so communicate through the store). */
export const onSimulator = (): boolean => currentTargetInfo().target === "sim";
