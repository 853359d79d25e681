// Time per collective between the ranks of `numbats run` (simulator or GPUs):
//   node --import tsx src/cli.ts run -n 4 bench/distributed.ts
// Rank 0 prints the median of each call over several repetitions (every rank takes part in each).
import { cuda, nccl, type DeviceArray } from "../src/index.js";

const comm = await nccl.initFromEnv();
const REPS = 20;

function time(what: string, fn: () => void): void {
  fn(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  if (comm.rank === 0) console.log(`${what.padEnd(40)} ${ms[REPS >> 1]!.toFixed(2)} ms`);
}

for (const n of [1, 1 << 20]) {
  const send = cuda.toDevice(new Float32Array(n).fill(comm.rank)), recv = cuda.deviceArrayLike(send);
  const gathered: DeviceArray = cuda.deviceArray([n * comm.worldSize], "float32");
  time(`allReduce ${n} float32 on ${comm.worldSize} ranks`, () => comm.allReduce(send, recv, "sum"));
  time(`allGather ${n} float32 on ${comm.worldSize} ranks`, () => comm.allGather(send, gathered));
  time(`send/recv ring ${n} float32 on ${comm.worldSize} ranks`, () => comm.group(() => {
    comm.send(send, (comm.rank + 1) % comm.worldSize);
    comm.recv(recv, (comm.rank + comm.worldSize - 1) % comm.worldSize);
  }));
}
comm.destroy();
