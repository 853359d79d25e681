// The histogram from NVIDIA's "Introduction to CUDA Python with Numba" course
// (atomics lesson), first with global atomics:
//
//   @cuda.jit
//   def cuda_histogram(x, xmin, xmax, histogram_out):
//       nbins = histogram_out.shape[0]
//       bin_width = (xmax - xmin) / nbins
//       start = cuda.grid(1)
//       stride = cuda.gridsize(1)
//       for i in range(start, x.shape[0], stride):
//           bin_number = np.int32((x[i] - xmin) / bin_width)
//           if bin_number >= 0 and bin_number < histogram_out.shape[0]:
//               cuda.atomic.add(histogram_out, bin_number, 1)
//
// then the usual refinement: each block counts into a histogram in shared
// memory (cheap atomics, no global contention) and adds it to the global one
// once at the end.

import { cuda, float64, int32 } from "../src/index.js";
import { check, checkEqual, randomFloats, sizeArg } from "./lib/check.js";

const NBINS = 64;

const globalHistogram = cuda.jit((x: Float32Array, xmin: number, xmax: number, histogramOut: Int32Array) => {
  const nbins = histogramOut.length;
  const binWidth = (xmax - xmin) / nbins;
  for (let i = cuda.grid(1); i < x.length; i += cuda.gridsize(1)) {
    const bin = int32((x[i] - xmin) / binWidth);
    if (bin >= 0 && bin < nbins) cuda.atomic.add(histogramOut, bin, 1);
  }
});

const sharedHistogram = cuda.jit((x: Float32Array, xmin: number, xmax: number, histogramOut: Int32Array) => {
  const local = cuda.shared.array(NBINS, int32);
  const t = cuda.threadIdx.x;
  for (let b = t; b < NBINS; b += cuda.blockDim.x) local[b] = 0;
  cuda.syncthreads();
  const binWidth = (xmax - xmin) / NBINS;
  for (let i = cuda.grid(1); i < x.length; i += cuda.gridsize(1)) {
    const bin = int32((x[i] - xmin) / binWidth);
    if (bin >= 0 && bin < NBINS) cuda.atomic.add(local, bin, 1);
  }
  cuda.syncthreads();
  for (let b = t; b < NBINS; b += cuda.blockDim.x) cuda.atomic.add(histogramOut, b, local[b]);
}, { env: { NBINS } });

// values spill past both ends of [xmin, xmax): those must not be counted
const n = sizeArg(200_000);
const x = randomFloats(n, 9, -4.5, 4.5);
// -4.0 is an integer-valued JS number, which a launch would pass as int32:
// float64() pins the type, so the kernel computes in float64 like the host below
const xmin = float64(-4), xmax = float64(4);

// host: the same float64 arithmetic, truncated toward zero like int32()
const want = new Int32Array(NBINS);
const binWidth = (xmax - xmin) / NBINS;
for (const v of x) {
  const bin = Math.trunc((v - xmin) / binWidth);
  if (bin >= 0 && bin < NBINS) want[bin]!++;
}

const blocks = 64, threads = 128;
const viaGlobal = new Int32Array(NBINS);
globalHistogram.configure(blocks, threads)(x, xmin, xmax, viaGlobal);
check("xmin and xmax arrive as float64", globalHistogram.signatures[0] === "void(array(float32, 1d, C), float64, float64, array(int32, 1d, C))", globalHistogram.signatures[0]);
checkEqual(`cuda_histogram[${blocks}, ${threads}] with atomic.add on global memory: ${NBINS} bins of ${n} values`, viaGlobal, want);

const viaShared = new Int32Array(NBINS);
sharedHistogram.configure(blocks, threads)(x, xmin, xmax, viaShared);
checkEqual(`per-block histograms with atomic.add on shared memory, merged with global atomics`, viaShared, want);

const counted = want.reduce((a, b) => a + b, 0);
check("values outside [xmin, xmax) were left out", counted < n && counted > 0, `${counted} of ${n} counted`);

// atomics return the old value: a ticket counter hands out 0, 1, 2, … once each
const tickets = cuda.jit((counter: Int32Array, order: Int32Array) => {
  const i = cuda.grid(1);
  if (i < order.length) order[i] = cuda.atomic.add(counter, 0, 1);
});
const counter = new Int32Array(1), order = new Int32Array(1000);
tickets.configure(8, 128)(counter, order);
checkEqual("atomic.add returns the old value: 1000 threads draw tickets 0…999 once each", [...order].sort((a, b) => a - b), Array.from({ length: 1000 }, (_, i) => i));
