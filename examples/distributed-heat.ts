// The heat equation of Numba's documentation (a rod of 1-d explicit finite differences: each point
// moves towards the mean of its neighbours, the ends held at 0, a hot spot in the middle), split over
// the ranks of a distributed run. Each rank owns a contiguous piece of the rod plus one halo cell on
// each side; after every step, neighbours swap their edge values with send/recv in a group, and the
// global residual (the largest change in the step) is an allReduce with "max".
//
//   npx numbats run -n 4 examples/distributed-heat.ts     (4 ranks, simulator or GPUs)
//   node --import tsx examples/distributed-heat.ts 1200   (1 rank)
//
// Rank 0 checks the result against the same problem solved in one piece: the same float32
// arithmetic in the same order for every point, so the two must agree bit for bit.

import { cuda, nccl, type DeviceArray } from "../src/index.js";
import { check, checkEqual, sizeArg } from "./lib/check.js";

const K = 0.25, STEPS = 300;

/** One explicit step on points 1…n of a piece with halos at 0 and n+1; residual[0] = max |change|. */
const heatStep = cuda.jit((data: Float32Array, next: Float32Array, k: number, residual: Float32Array) => {
  const i = cuda.grid(1) + 1;
  if (i < data.length - 1) {
    const t = data[i];
    const nt = t + k * (data[i - 1] - 2 * t + data[i + 1]);
    next[i] = nt;
    cuda.atomic.max(residual, 0, Math.abs(nt - t));
  }
});

const THREADS = 128;

/** Runs STEPS steps on a piece (halos included); `exchange` refreshes the halos of `next` after each. */
function solve(initial: Float32Array, exchange: (next: DeviceArray<"float32", 1>) => void, onResidual: (r: DeviceArray<"float32", 1>) => void): Float32Array {
  let data = cuda.toDevice(initial), next = cuda.toDevice(initial);
  const residual = cuda.deviceArray([1], "float32");
  const blocks = Math.ceil((initial.length - 2) / THREADS);
  for (let step = 0; step < STEPS; step++) {
    residual.copyToDevice(Float32Array.of(0));
    heatStep.configure(blocks, THREADS)(data, next, K, residual);
    exchange(next);
    onResidual(residual);
    [data, next] = [next, data];
  }
  return data.copyToHost();
}

const comm = await nccl.initFromEnv();
const { rank, worldSize } = comm;
const n = sizeArg(1200);
if (n % worldSize !== 0) throw new RangeError(`the rod's ${n} points must split evenly over ${worldSize} ranks`);
const piece = n / worldSize;

/** The whole rod at t = 0: cold, with one hot point in the middle. */
const rod = new Float32Array(n);
rod[n >> 1] = 10_000;

// this rank's piece and its halo cells: the neighbours' edge points, or 0 past the rod's ends (the walls held at T = 0)
const mine = Float32Array.from({ length: piece + 2 }, (_, j) => rod[rank * piece - 1 + j] ?? 0);

const globalResidual = cuda.deviceArray([1], "float32");
let lastResidual = 0;
const result = solve(mine, (next) => {
  comm.group(() => {
    if (rank > 0) {
      comm.send(next.slice([1, 2]) as DeviceArray<"float32", 1>, rank - 1);
      comm.recv(next.slice([0, 1]) as DeviceArray<"float32", 1>, rank - 1);
    }
    if (rank < worldSize - 1) {
      comm.send(next.slice([piece, piece + 1]) as DeviceArray<"float32", 1>, rank + 1);
      comm.recv(next.slice([piece + 1, piece + 2]) as DeviceArray<"float32", 1>, rank + 1);
    }
  });
}, (residual) => {
  comm.allReduce(residual, globalResidual, "max");
  lastResidual = globalResidual.copyToHost()[0]!;
});

// every rank's piece, in rank order, on every rank
const all = cuda.deviceArray([n], "float32");
comm.allGather(cuda.toDevice(result.subarray(1, piece + 1)), all);
if (rank === 0) {
  let referenceResidual = 0;
  const reference = solve(new Float32Array([0, ...rod, 0]), () => {}, (r) => { referenceResidual = r.copyToHost()[0]!; });
  checkEqual(`heat equation, ${n} points, ${STEPS} steps on ${worldSize} rank${worldSize > 1 ? "s" : ""} (halo exchange by send/recv) = one piece`, all.copyToHost(), reference.subarray(1, n + 1));
  check("the global residual (allReduce max) = the single piece's", lastResidual === referenceResidual, `${lastResidual}`);
  const heat = all.copyToHost().reduce((a, b) => a + b, 0);
  check("the heat is conserved while it has not reached the walls", Math.abs(heat - 10_000) < 0.05, `total ${heat.toFixed(3)}`);
}
comm.destroy();
