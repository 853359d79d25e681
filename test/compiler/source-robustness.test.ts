// Any source text: mutants of every kernel of the tests and examples (test/fuzz/mutate.ts: statements
// deleted, duplicated or swapped; names, properties, operators and literals replaced, NaN, ±Infinity,
// -0, 2**53+1, 1e309, a 70-digit bigint, a string among them; statements and expressions wrapped in
// try, with, labels, closures, classes, generators, getters, spread, optional chaining, template
// literals) must each compile, or fail with a CompileError or TypingError placed inside their text;
// never another exception, a stack overflow or a compile that does not end. Those that compile run on
// the simulator and as PTX on ptxsim, which must agree (test/fuzz/source-check.ts says what counts as
// agreement). A fixed range of seeds here; NUMBATS_FUZZ_SOURCE_CASES=N (and _SEED=S) for more, or
// `npm run fuzz:source` (docs/testing.md).

import assert from "node:assert/strict";
import { test } from "node:test";
import { formatFailure, formatSummary, runBatch } from "../fuzz/source-batch.js";

const FIRST = Number(process.env.NUMBATS_FUZZ_SOURCE_SEED ?? 1);
const COUNT = Number(process.env.NUMBATS_FUZZ_SOURCE_CASES ?? 5000);

test(`${COUNT} mutated kernels (seeds ${FIRST}…): a compile or a CompileError/TypingError inside the text, never a crash; compiled ones agree on the simulator and ptxsim`, async (t) => {
  const summary = await runBatch({ first: FIRST, count: COUNT, timeLimitMs: 30_000 });
  t.diagnostic(formatSummary(summary, FIRST));
  assert.ok(summary.corpus >= 200, `only ${summary.corpus} kernels compile as they are (of ${summary.harvested} found)`);
  assert.equal(summary.cases, COUNT);
  assert.deepEqual(summary.failures.map((f) => `seed ${f.case.seed}: ${f.what}`), [], summary.failures.map(formatFailure).join("\n\n"));
});
