// An N-body simulation step on an array of particle records (Numba's record arrays: a NumPy
// structured dtype passed to a kernel). Each particle is one C struct,
//
//   struct Body { float x, y, z; float vx, vy, vz; float m; int id; }   // 32 bytes
//
// and the kernel reads and writes fields (`bodies[i].vx`), copies whole records into a shared-memory
// tile (`tile[t] = bodies[j]`), and reads a record by value (`const q = tile[k]`). Each step:
// every body gathers the softened gravity of all others (tiled through shared memory, as in the
// CUDA N-body sample), then all velocities and positions advance by one leapfrog (kick-drift) step,
// into a second record array so no thread reads a body another has moved. The host checks the
// positions against its own float64 computation of the same steps.

import { cuda, float32, int32, type KernelArray1, type RecordArray, type RecordOf } from "../src/index.js";
import { check, checkWithin, randomFloats, sizeArg } from "./lib/check.js";

const Body = cuda.record({ x: float32, y: float32, z: float32, vx: float32, vy: float32, vz: float32, m: float32, id: int32 });
/** one body as TypeScript sees it: `{ x: number; …; id: number }` */
type Body = RecordOf<typeof Body>;

const TILE = 64; // threads per block, and bodies per shared-memory tile
const EPS2 = 1e-2; // softening: the force of two bodies at distance r is m / (r² + EPS2)^(3/2)
const DT = 1e-3;

const step = cuda.jit((bodies: KernelArray1<Body>, next: KernelArray1<Body>) => {
  const tile = cuda.shared.array(TILE, Body);
  const i = cuda.grid(1);
  const n = bodies.length;
  const me = bodies[Math.min(i, n - 1)];
  let ax = float32(0), ay = float32(0), az = float32(0);
  for (let base = 0; base < n; base += TILE) {
    const j = base + cuda.threadIdx.x;
    if (j < n) tile[cuda.threadIdx.x] = bodies[j];
    cuda.syncthreads();
    for (let k = 0; k < TILE && base + k < n; k++) {
      const q = tile[k];
      const dx = q.x - me.x, dy = q.y - me.y, dz = q.z - me.z;
      const r2 = dx * dx + dy * dy + dz * dz + float32(EPS2);
      const inv = float32(1) / (r2 * Math.sqrt(r2));
      ax += q.m * dx * inv; ay += q.m * dy * inv; az += q.m * dz * inv;
    }
    cuda.syncthreads();
  }
  if (i < n) {
    const vx = me.vx + ax * float32(DT), vy = me.vy + ay * float32(DT), vz = me.vz + az * float32(DT);
    next[i] = me; // id and m as they are
    next[i].vx = vx; next[i].vy = vy; next[i].vz = vz;
    next[i].x = me.x + vx * float32(DT); next[i].y = me.y + vy * float32(DT); next[i].z = me.z + vz * float32(DT);
  }
}, { env: { Body, TILE, EPS2, DT }, name: "nbodyStep" });

const n = sizeArg(1024);
const STEPS = 4;
const pos = randomFloats(3 * n, 11, -1, 1), vel = randomFloats(3 * n, 12, -0.1, 0.1), mass = randomFloats(n, 13, 0.5, 1.5);
const initial = cuda.recordArray(Body, Array.from({ length: n }, (_, i) => ({
  x: pos[3 * i]!, y: pos[3 * i + 1]!, z: pos[3 * i + 2]!, vx: vel[3 * i]!, vy: vel[3 * i + 1]!, vz: vel[3 * i + 2]!, m: mass[i]! / n, id: i,
})));

let a = cuda.toDevice(initial), b = cuda.deviceRecordArray(n, Body);
const blocks = Math.ceil(n / TILE);
for (let s = 0; s < STEPS; s++) {
  step.configure(blocks, TILE)(a, b);
  [a, b] = [b, a];
}
const result = a.copyToHost();
a.free();
b.free();

/** The same steps on the host in float64: x, y, z per body after STEPS steps. */
function hostSteps(start: RecordArray<Body>): Float64Array {
  const bodies = start.toObjects();
  for (let s = 0; s < STEPS; s++) {
    const acc = bodies.map((p) => {
      let ax = 0, ay = 0, az = 0;
      for (const q of bodies) {
        const dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        const r2 = dx * dx + dy * dy + dz * dz + Math.fround(EPS2);
        const inv = 1 / (r2 * Math.sqrt(r2));
        ax += q.m * dx * inv; ay += q.m * dy * inv; az += q.m * dz * inv;
      }
      return [ax, ay, az] as const;
    });
    bodies.forEach((p, i) => {
      p.vx += acc[i]![0] * DT; p.vy += acc[i]![1] * DT; p.vz += acc[i]![2] * DT;
      p.x += p.vx * DT; p.y += p.vy * DT; p.z += p.vz * DT;
    });
  }
  return Float64Array.from(bodies.flatMap((p) => [p.x, p.y, p.z]));
}

const want = hostSteps(initial);
const got = Float64Array.from(result.toObjects().flatMap((p) => [p.x, p.y, p.z]));
// positions within [-1, 1] are rounded to float32 on every step (half an ulp of 1, 2^-24, each) and
// the float32 forces' own error reaches them scaled by DT²: one ulp of 1 (2^-23) per step bounds both
checkWithin(`${n} bodies, ${STEPS} steps: positions match the float64 host computation`, got, want, want.map(() => 2 ** -23 * STEPS));
check("every record keeps its id and mass", result.toObjects().every((p, i) => p.id === i && p.m === initial.get(i).m));
