// Every kernel case (test/cases/*.ts) on the webgpu target, against its host reference and the
// simulator (test/helpers/webgpu-crosscheck.ts). Run by `npm run test:webgpu` once per CPU adapter,
// with NUMBATS_TARGET=webgpu; a case outside the target's subset must be refused with a CompileError
// that names the target, and the run lists those cases with the reason.

import { test, after } from "node:test";
import { API_CASES } from "../cases/api.js";
import { COMPLEX_CASES } from "../cases/complex.js";
import { HALF_CASES } from "../cases/half.js";
import { LANGUAGE_CASES } from "../cases/language.js";
import { LITERAL_CASES } from "../cases/literals.js";
import { RECORD_CASES } from "../cases/records.js";
import { runWebGpuCase, type WebGpuCaseResult } from "../helpers/webgpu-crosscheck.js";

const adapter = process.env.NUMBATS_WEBGPU_ADAPTER ?? "the current adapter";
const skip = process.env.NUMBATS_TARGET === "webgpu" ? false : "run by `npm run test:webgpu` (NUMBATS_TARGET=webgpu on a WebGPU adapter)";
const results = new Map<string, WebGpuCaseResult>();

for (const c of [...LANGUAGE_CASES, ...LITERAL_CASES, ...API_CASES, ...RECORD_CASES, ...HALF_CASES, ...COMPLEX_CASES]) {
  test(`webgpu (${adapter}): ${c.name}`, { skip }, async () => {
    results.set(c.name, await runWebGpuCase(c));
  });
}

after(() => {
  if (skip) return;
  const ran = [...results].filter(([, r]) => r.ran);
  const refused = [...results].filter(([, r]) => !r.ran);
  console.log(`# webgpu (${adapter}): ${ran.length} cases ran and matched the simulator, ${refused.length} are outside the subset`);
  const worst = Math.max(0, ...ran.map(([, r]) => (r.ran ? r.maxUlps : 0)));
  console.log(`# largest float32 distance from the simulator: ${worst} ulp`);
  for (const [name, r] of refused) if (!r.ran) console.log(`#   outside: ${name.slice(0, 70)} — ${r.why}`);
});
