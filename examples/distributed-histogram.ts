// Data-parallel: each rank makes its own share of the samples, counts them into a partial histogram
// on its device, and an allReduce sums the partial histograms, so every rank ends up with the
// histogram of all the samples. Checked against the host's count of everything.
//
//   npx numbats run -n 4 examples/distributed-histogram.ts
//   node --import tsx examples/distributed-histogram.ts 100000   (1 rank)

import { cuda, float64, int32, nccl } from "../src/index.js";
import { checkEqual, randomFloats, sizeArg } from "./lib/check.js";

const NBINS = 32;

const histogram = cuda.jit((x: Float32Array, xmin: number, xmax: number, counts: Int32Array) => {
  const binWidth = (xmax - xmin) / counts.length;
  for (let i = cuda.grid(1); i < x.length; i += cuda.gridsize(1)) {
    const bin = int32((x[i] - xmin) / binWidth);
    if (bin >= 0 && bin < counts.length) cuda.atomic.add(counts, bin, 1);
  }
});

const comm = await nccl.initFromEnv();
const perRank = sizeArg(50_000);
const xmin = float64(-3), xmax = float64(3);
/** rank r's samples: the same seeded stream wherever they are made */
const samplesOf = (r: number) => randomFloats(perRank, 1000 + r, -3.5, 3.5);

const partial = cuda.deviceArray([NBINS], "int32");
partial.copyToDevice(new Int32Array(NBINS));
histogram.configure(32, 128)(cuda.toDevice(samplesOf(comm.rank)), xmin, xmax, partial);
const total = cuda.deviceArray([NBINS], "int32");
comm.allReduce(partial, total, "sum");

// the host counts every rank's samples with the same float64 arithmetic
const want = new Int32Array(NBINS);
const binWidth = (xmax - xmin) / NBINS;
for (let r = 0; r < comm.worldSize; r++) {
  for (const v of samplesOf(r)) {
    const bin = Math.trunc((v - xmin) / binWidth);
    if (bin >= 0 && bin < NBINS) want[bin]!++;
  }
}
checkEqual(`rank ${comm.rank}: allReduce of ${comm.worldSize} partial histograms (${perRank} samples each) = the host's histogram of all`, total.copyToHost(), want);
comm.destroy();
