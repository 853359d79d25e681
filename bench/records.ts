// Records on the simulator: one field update (`a[i].x += a[i].v * dt`) over 2^18 records of
// { x: float32, v: float32, id: int32 }, passed four ways: a DeviceRecordArray, the same fields as two
// separate DeviceArrays (structure of arrays), a host RecordArray (used in place), and plain objects
// (packed for each launch, x copied back into every object). Median ms per launch (7 runs; 3 for
// objects), after one warm-up launch. Needs `npm run build` first (it measures dist/, as the other benchmarks).
//
//   NUMBATS_TARGET=sim node --import tsx bench/records.ts

import { cuda, float32, int32, type KernelArray1, type RecordOf } from "../dist/src/index.js";

const P = cuda.record({ x: float32, v: float32, id: int32 });
type P = RecordOf<typeof P>;
const n = 1 << 18;
const records = cuda.jit((a: KernelArray1<P>, dt: number) => { const i = cuda.grid(1); if (i < a.length) a[i].x += a[i].v * dt; });
const fields = cuda.jit((x: Float32Array, v: Float32Array, dt: number) => { const i = cuda.grid(1); if (i < x.length) x[i] += v[i] * dt; });

const objects = Array.from({ length: n }, (_, i) => ({ x: i, v: 1, id: i }));
const host = cuda.recordArray(P, objects);
const device = cuda.toDevice(host);
const dx = cuda.toDevice(new Float32Array(n)), dv = cuda.toDevice(new Float32Array(n).fill(1));

function median(launch: () => void, reps: number): number {
  launch();
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const start = performance.now();
    launch();
    cuda.synchronize();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[reps >> 1]!;
}

const grid = Math.ceil(n / 256), dt = float32(0.5);
const rows: [string, number][] = [
  ["DeviceRecordArray", median(() => records.configure(grid, 256)(device, dt), 7)],
  ["two DeviceArrays (structure of arrays)", median(() => fields.configure(grid, 256)(dx, dv, dt), 7)],
  ["host RecordArray", median(() => records.configure(grid, 256)(host, dt), 7)],
  ["plain objects", median(() => records.configure(grid, 256)(objects, dt), 3)],
];
console.log("| argument | ms per launch |\n|---|---|");
for (const [what, ms] of rows) console.log(`| ${what} | ${ms.toFixed(1)} |`);
