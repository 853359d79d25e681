// A kernel calling CUDA C++ device functions (Numba's `cuda.declare_device` with `link=[...]`):
//
//   smoothstep = cuda.declare_device("smoothstep", "float32(float32, float32, float32)")
//   @cuda.jit(link=["lib/smoothstep.cu"])
//   def shade(x, out): ...
//
// On the GPU, numbats compiles lib/smoothstep.cu with NVRTC (pip install nvidia-cuda-nvrtc) and links it
// into the kernel with the driver's linker; on the simulator each declared function runs its `sim`
// stand-in, written here to give the same float32 bits. See docs/linking.md.

import { cuda } from "../src/index.js";
import { check, checkEqual, randomFloats, sizeArg } from "./lib/check.js";

const f32 = Math.fround;

/** smoothstep.cu's smoothstep, step by step in float32 */
function smoothstepHost(edge0: number, edge1: number, x: number): number {
  const t = Math.min(Math.max(f32(f32(x - edge0) / f32(edge1 - edge0)), 0), 1);
  return f32(f32(t * t) * f32(3 - f32(2 * t)));
}

const smoothstep = cuda.declareDevice("smoothstep", "float32(float32, float32, float32)", { sim: smoothstepHost });
const scaleRow = cuda.declareDevice("scale_row", "void(float32[:], int32, float32)", {
  sim: (row: Float32Array, n: number, by: number) => { for (let i = 0; i < n; i++) row[i] = f32(row[i]! * by); },
});

const link = [new URL("./lib/smoothstep.cu", import.meta.url)];

const shade = cuda.jit((x: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < out.length) out[i] = smoothstep(-0.5, 0.5, x[i]);
}, { link });

// one thread per row of a 2-d array; the row is a view, passed as a pointer to its first element
const scaleRows = cuda.jit((m: Float32Array, cols: number) => {
  const r = cuda.grid(1);
  if (r * cols < m.length) scaleRow(m.subarray(r * cols, r * cols + cols), cols, r + 1);
}, { link });

const n = sizeArg(10_000);
const x = randomFloats(n, 7);
const out = new Float32Array(n);
try {
  shade.forall(n)(x, out);
} catch (e) {
  // on the GPU without NVRTC: say where it was looked for, and stop here
  if (cuda.isAvailable() && /NVRTC was not found/.test(String(e))) {
    console.log(`skipped on the GPU: ${String(e).split("\n")[0]} (pip install nvidia-cuda-nvrtc)`);
    process.exit(0);
  }
  throw e;
}
checkEqual(`smoothstep(-0.5, 0.5, x) from smoothstep.cu, ${n} elements`, out, x.map((v) => smoothstepHost(-0.5, 0.5, v)));
check("out is 0 below the lower edge and 1 above the upper", out.every((v, i) => (x[i]! <= -0.5 ? v === 0 : x[i]! >= 0.5 ? v === 1 : v > 0 && v < 1)));

const rows = 64, cols = 33;
const m = randomFloats(rows * cols, 3);
const want = m.map((v, k) => f32(v * (Math.floor(k / cols) + 1)));
scaleRows.forall(rows)(m, cols);
checkEqual(`scale_row on each of ${rows} rows through a pointer (row r scaled by r + 1)`, m, want);
