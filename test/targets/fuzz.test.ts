// The seeded random-kernel differential test (test/fuzz): a fixed range of
// generated kernels, each run through the API on the simulator (several eager
// signatures, strided views, tuples and records among its arguments), as PTX
// on ptxsim and on the reference evaluator, must agree everywhere. Every 20th
// kernel's PTX also goes through ptxas (all of them would double the time).
// `npm run fuzz` runs as many as you like.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasPtxas } from "../helpers/ptxas.js";
import { checkKernel } from "../fuzz/differential.js";
import { generateKernel } from "../fuzz/generate.js";

const FIRST_SEED = 1, COUNT = 250, PTXAS_EVERY = 20;

test(`${COUNT} random kernels agree on the simulator, PTX (ptxsim) and the reference`, async () => {
  const ptxas = hasPtxas();
  const failures: string[] = [];
  for (let seed = FIRST_SEED; seed < FIRST_SEED + COUNT; seed++) {
    const k = generateKernel(seed);
    const d = await checkKernel(k, { ptxas: ptxas && seed % PTXAS_EVERY === 0 });
    if (d) failures.push(`seed ${seed}: ${d.kind}\n${d.details}\n${k.source}`);
  }
  assert.deepEqual(failures, [], `reproduce with: npm run fuzz -- --seed S --count 1\n${failures.join("\n\n")}`);
});
