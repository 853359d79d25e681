// A CUDA graph: one iteration of a Jacobi solver for the 1-d Laplace equation (two sweeps, a → b and
// b → a, with the ends held fixed) captured once from a stream and launched many times, as one
// submission each, where launching the kernels one by one costs a launch each (Numba-CUDA has no
// graphs yet; in CUDA C++ this is cudaStreamBeginCapture / cudaGraphLaunch). Checked bit for bit
// against the same iteration on the host, and against the kernels launched one by one.

import { cuda, float32, LaunchError } from "../src/index.js";
import { check, checkEqual, randomFloats, sizeArg } from "./lib/check.js";

const sweep = cuda.jit((src: Float32Array, dst: Float32Array) => {
  const i = cuda.grid(1);
  if (i > 0 && i < src.length - 1) dst[i] = float32(0.5) * (src[i - 1] + src[i + 1]);
});

/** the same sweeps on the host, in float32 as the kernel rounds them */
function hostIterations(u: Float32Array, iterations: number): Float32Array {
  const a = u.slice(), b = u.slice();
  for (let k = 0; k < 2 * iterations; k++) {
    const [src, dst] = k % 2 === 0 ? [a, b] : [b, a];
    for (let i = 1; i < src.length - 1; i++) dst[i] = Math.fround(0.5 * Math.fround(src[i - 1]! + src[i + 1]!));
  }
  return a;
}

const n = sizeArg(4096);
const ITERATIONS = 100;
const start = randomFloats(n, 3);
start[0] = 1;
start[n - 1] = -1;

const s = cuda.stream();
const a = cuda.toDevice(start, s), b = cuda.toDevice(start, s);
const step = sweep.forall(n, s);
step(a, b); // a first launch compiles the kernel: compiling is no part of a graph
step(b, a);
a.copyToDevice(start, s);
b.copyToDevice(start, s);
s.synchronize();

// the iteration, recorded and not run
const iteration = s.capture(() => {
  step(a, b);
  step(b, a);
});

let t0 = performance.now();
for (let k = 0; k < ITERATIONS; k++) iteration.launch(s);
s.synchronize();
const graphMs = performance.now() - t0;
const reference = hostIterations(start, ITERATIONS);
checkEqual(`${ITERATIONS} launches of the captured iteration (${2 * ITERATIONS} sweeps) give the host's bits`, a.copyToHost(), reference);
iteration.free();

// the same sweeps launched one by one
a.copyToDevice(start, s);
b.copyToDevice(start, s);
t0 = performance.now();
for (let k = 0; k < ITERATIONS; k++) {
  step(a, b);
  step(b, a);
}
s.synchronize();
const oneByOneMs = performance.now() - t0;
checkEqual("the kernels launched one by one give the same bits", a.copyToHost(), reference);
let refused: unknown;
try {
  iteration.launch(s);
} catch (e) {
  refused = e;
}
check("a freed graph's launch is a LaunchError", refused instanceof LaunchError);
console.log(`${ITERATIONS} graph launches: ${graphMs.toFixed(1)} ms; the same ${2 * ITERATIONS} kernels one by one: ${oneByOneMs.toFixed(1)} ms`);
a.free();
b.free();
