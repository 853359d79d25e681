// npm run fuzz:source [-- --seed S --count N --time-limit MS]
// Mutates kernels of the tests and examples (one case per seed, from seed S on), compiles each
// mutant, runs those that compile on the simulator and on ptxsim, prints every failure in full
// (the seed to run it again, the mutations, the mutated text and what was thrown) and the counts,
// and exits 1 if any case failed.

import { parseArgs } from "node:util";
import { formatFailure, formatSummary, runBatch } from "./source-batch.js";

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    count: { type: "string", default: "2000" },
    "time-limit": { type: "string", default: "20000" },
  },
});
const first = Number(values.seed);
const summary = await runBatch({
  first, count: Number(values.count), timeLimitMs: Number(values["time-limit"]),
  onFailure: (f) => console.log(`\n${formatFailure(f)}`),
  onProgress: (n) => console.error(`fuzz:source: ${n} cases`),
});
console.log(`\n${formatSummary(summary, first)}`);
process.exit(summary.failures.length ? 1 : 0);
