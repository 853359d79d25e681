// Numba's random-number example (numba-cuda docs, "Random Number Generation":
// estimating π by sampling the unit square):
//
//   @cuda.jit
//   def compute_pi(rng_states, iterations, out):
//       thread_id = cuda.grid(1)
//       inside = 0
//       for i in range(iterations):
//           x = xoroshiro128p_uniform_float32(rng_states, thread_id)
//           y = xoroshiro128p_uniform_float32(rng_states, thread_id)
//           if x**2 + y**2 <= 1.0:
//               inside += 1
//       out[thread_id] = 4.0 * inside / iterations
//
//   threads_per_block = 64; blocks = 24
//   rng_states = create_xoroshiro128p_states(threads_per_block * blocks, seed=1)
//
// Each thread owns one xoroshiro128+ generator; the states live on the device.
// The draw functions are device functions that also run as plain JS on the
// host, which is how the host reference below replays every thread's draws.

import { cuda, float32 } from "../src/index.js";
import { check, checkEqual, sizeArg } from "./lib/check.js";

const computePi = cuda.jit((rngStates: BigUint64Array, iterations: number, out: Float32Array) => {
  const threadId = cuda.grid(1);
  let inside = 0;
  for (let i = 0; i < iterations; i++) {
    const x = cuda.random.xoroshiro128pUniformFloat32(rngStates, threadId);
    const y = cuda.random.xoroshiro128pUniformFloat32(rngStates, threadId);
    if (x * x + y * y <= 1.0) inside += 1;
  }
  out[threadId] = float32(4 * inside) / float32(iterations); // float32 throughout, so it runs on WebGPU too
});

const threadsPerBlock = 64, blocks = 24, threads = threadsPerBlock * blocks;
const iterations = sizeArg(128);
const rngStates = cuda.random.createXoroshiro128pStates(threads, 1);
const initial = rngStates.copyToHost() as BigUint64Array;
const out = new Float32Array(threads);
computePi.configure(blocks, threadsPerBlock)(rngStates, iterations, out);

// host replay: the same generators, the same draws, decided in float64. A draw
// whose x² + y² lies within 2⁻²² of 1 may land either side after float32
// rounding (and fused multiply-add), so those are allowed to differ.
const host = initial.slice();
let mismatched = 0, ambiguous = 0, inside = 0;
for (let t = 0; t < threads; t++) {
  let wantInside = 0, loose = 0;
  for (let i = 0; i < iterations; i++) {
    const x = cuda.random.xoroshiro128pUniformFloat32(host, t);
    const y = cuda.random.xoroshiro128pUniformFloat32(host, t);
    const r2 = x * x + y * y;
    if (r2 <= 1) wantInside++;
    if (Math.abs(r2 - 1) <= 2 ** -22) loose++;
  }
  const gotInside = Math.round((out[t]! * iterations) / 4);
  if (Math.abs(gotInside - wantInside) > loose) mismatched++;
  ambiguous += loose;
  inside += gotInside;
}
check(`compute_pi[${blocks}, ${threadsPerBlock}]: every thread's count matches a host replay of its ${iterations} draws`, mismatched === 0, `${mismatched} threads differ; ${ambiguous} draws within rounding of the circle`);
checkEqual("the generators advanced on the device exactly as on the host", rngStates.copyToHost() as BigUint64Array, host);

// the estimate: a binomial proportion, so within 4 standard deviations of π
const samples = threads * iterations;
const p = Math.PI / 4;
const estimate = out.reduce((a, b) => a + b, 0) / threads;
const sigma = 4 * Math.sqrt((p * (1 - p)) / samples);
check(`π ≈ ${estimate.toFixed(5)} from ${samples} samples, within 4σ = ${(4 * sigma).toFixed(5)}`, Math.abs(estimate - Math.PI) <= 4 * sigma && Math.abs(4 * inside / samples - estimate) < 1e-6);

// different seeds give independent streams
const other = cuda.random.createXoroshiro128pStates(threads, 2);
check("seed 2 gives other states than seed 1", (other.copyToHost() as BigUint64Array)[0] !== initial[0]);
rngStates.free();
other.free();
