// npm run fuzz [-- --seed S --count N --ptxas-every K --no-minimise]
// Generates N kernels from seed S on, runs each through the API on the
// simulator, as PTX on ptxsim and on the reference evaluator, prints every
// disagreement (seed, kernel, its launch, differing elements, and a minimised
// kernel) and exits 1 if any; last, how many kernels had each feature.

import { parseArgs } from "node:util";
import { hasPtxas } from "../helpers/ptxas.js";
import { check, describeLaunch, minimise } from "./differential.js";
import { FEATURES, generateKernel } from "./generate.js";

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    count: { type: "string", default: "1000" },
    "ptxas-every": { type: "string", default: "20" },
    "no-minimise": { type: "boolean", default: false },
  },
});
const first = Number(values.seed), count = Number(values.count), ptxasEvery = Number(values["ptxas-every"]);
const ptxas = ptxasEvery > 0 && hasPtxas();

let failures = 0, clean = 0, longestClean = 0, withReference = 0;
const featureCounts = new Map(FEATURES.map((f) => [f, 0]));
const started = Date.now();
for (let seed = first; seed < first + count; seed++) {
  const k = generateKernel(seed);
  for (const f of k.features) featureCounts.set(f, featureCounts.get(f)! + 1);
  const { disagreement: d, referenceCompared } = await check(k, { ptxas: ptxas && seed % ptxasEvery === 0 });
  if (referenceCompared) withReference++;
  if ((seed - first + 1) % 500 === 0) console.error(`fuzz: ${seed - first + 1} kernels, ${failures + (d ? 1 : 0)} disagreed`);
  if (!d) { clean++; longestClean = Math.max(longestClean, clean); continue; }
  failures++;
  clean = 0;
  console.log(`\n=== seed ${seed}: ${d.kind}\n${d.details}\n--- kernel\n${k.source}\n--- launch\n${describeLaunch(k)}`);
  for (const dev of k.devices) console.log(`--- device function\n${dev.source}`);
  if (!values["no-minimise"] && !d.kind.endsWith("error")) console.log(`--- minimised\n${await minimise(k, d.kind)}`);
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
console.log(`\nfuzz: ${count} kernels from seed ${first} in ${secs} s: ${failures} disagreed; longest clean run ${longestClean}; ${withReference} also against the reference`);
console.log(`fuzz: kernels with ${FEATURES.map((f) => `${f} ${featureCounts.get(f)}`).join(", ")}`);
process.exit(failures ? 1 : 0);
