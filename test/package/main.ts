// Runs each kernel once and prints the results as one JSON line; with
// PTX_OUT=dir, also writes each kernel's PTX for sm_80 there.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cuda } from "numbats";
import { BLOCKS, ONES, ROWS, matrix, ramp, samples, table } from "./inputs.js";
import { lookup, reverseBlocks, rowEnds, total } from "./kernels.js";

const sum = new Float64Array(1);
total.configure(1, 32)(new Float32Array(ONES).fill(1), sum);

const ends = new Float32Array(ROWS);
rowEnds.configure(1, 32)(matrix(), ends);

const reversed = new Float32Array(BLOCKS * 1000);
reverseBlocks.configure(BLOCKS, 1000)(ramp(), reversed);

const xs = samples();
const found = new Int32Array(xs.length);
lookup.configure(Math.ceil(xs.length / 128), 128)(xs, table(), found);
cuda.synchronize();

console.log(JSON.stringify({ sum: sum[0], ends: [...ends], reversed: [...reversed], found: [...found] }));

const ptxDir = process.env.PTX_OUT;
if (ptxDir) {
  const kernels = { total, rowEnds, reverseBlocks, lookup };
  for (const [name, k] of Object.entries(kernels)) writeFileSync(join(ptxDir, `${name}.ptx`), k.inspectAsm(undefined, { computeCapability: [8, 0] }));
}
