// The simulator as a sanitizer (docs/sanitizer.md), as NVIDIA's compute-sanitizer is for CUDA C++:
// a block sum whose tree reduction lacks a barrier per level. On a GPU it may even give the right
// answer, today; racecheck shows the race with both source lines, then the fixed kernel runs clean.
//
//   NUMBATS_SANITIZE=racecheck node --import tsx examples/sanitizer.ts
//   npx numbats sanitize -- node --import tsx examples/sanitizer.ts
//
// The example turns racecheck on for itself, so it runs the same with or without a GPU (the sanitizer
// runs every launch on the simulator and says so once when a GPU is there). With --race-only it launches
// the racy kernel alone and lets the SanitizerError end the program (what `npx numbats sanitize` shows).

import { cuda, float32, SanitizerError } from "../src/index.js";
import { check } from "./lib/check.js";

// read at the first launch
process.env.NUMBATS_SANITIZE ||= "racecheck";

const TPB = 128;

const sumWithoutBarrier = cuda.jit((a: Float32Array, sums: Float32Array) => {
  const s = cuda.shared.array(TPB, float32);
  const t = cuda.threadIdx.x;
  const i = cuda.grid(1);
  s[t] = i < a.length ? a[i] : 0;
  cuda.syncthreads();
  for (let stride = TPB >> 1; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride]; // reads s[t + stride] while another thread may still write it
  }
  if (t === 0) sums[cuda.blockIdx.x] = s[0];
}, { name: "sumWithoutBarrier", env: { TPB } });

const blockSums = cuda.jit((a: Float32Array, sums: Float32Array) => {
  const s = cuda.shared.array(TPB, float32);
  const t = cuda.threadIdx.x;
  const i = cuda.grid(1);
  s[t] = i < a.length ? a[i] : 0;
  cuda.syncthreads();
  for (let stride = TPB >> 1; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    cuda.syncthreads(); // the fix: every level waits for the one before
  }
  if (t === 0) sums[cuda.blockIdx.x] = s[0];
}, { name: "blockSums", env: { TPB } });

const n = 40 * TPB;
const blocks = Math.ceil(n / TPB);
const a = Float32Array.from({ length: n }, (_, i) => (i * 7) % 10);
const sums = new Float32Array(blocks);

if (process.argv.includes("--race-only")) {
  sumWithoutBarrier.configure(blocks, TPB)(a, sums);
} else {
  try {
    sumWithoutBarrier.configure(blocks, TPB)(a, sums);
    check("racecheck finds the missing barrier", false, "the launch gave no finding");
  } catch (e) {
    if (!(e instanceof SanitizerError)) throw e;
    console.log(`${e.name}: ${e.message}\n`);
    const race = e.findings.find((f) => f.tool === "racecheck");
    check("racecheck finds the missing barrier, on the shared array s", race?.array === "s", JSON.stringify(race));
    check("the host array is left as it was", sums.every((v) => v === 0));
  }

  blockSums.configure(blocks, TPB)(a, sums);
  console.log("fixed: no findings");
  const want = Array.from({ length: blocks }, (_, b) => a.slice(b * TPB, (b + 1) * TPB).reduce((p, q) => p + q, 0));
  check(`the fixed kernel's ${blocks} block sums equal the host's`, sums.every((v, b) => v === want[b]));
}
