// The WGSL target on every kernel case (test/cases): for a lavapipe-like adapter (subgroups of 8,
// shader-f16) and a SwiftShader-like one (subgroups of 4, no f16), each case either compiles to WGSL
// that Dawn accepts (createShaderModule, no error in getCompilationInfo, and a compute pipeline) or is
// a CompileError of the subset that names the target. Dawn runs in a child process (dawn.node can
// crash a process), on the CPU adapters that VK_ICD_FILENAMES / LD_LIBRARY_PATH point at (see
// docs/webgpu.md); without them the Dawn half is skipped with the reason.

import { test } from "node:test";
import assert from "node:assert/strict";
import { API_CASES } from "../cases/api.js";
import { HALF_CASES } from "../cases/half.js";
import { COMPLEX_CASES } from "../cases/complex.js";
import { LANGUAGE_CASES } from "../cases/language.js";
import { LITERAL_CASES } from "../cases/literals.js";
import { RECORD_CASES } from "../cases/records.js";
import { argumentTypes, type KernelCase } from "../helpers/crosscheck.js";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { CompileError } from "../../src/errors.js";
import { emitWgsl, type WgslKernel, type WgslTarget } from "../../src/backends/webgpu/wgsl/index.js";
import { ADAPTERS, dawnSetup, validateWgsl } from "./wgsl-dawn.js";

const CASES: readonly KernelCase[] = [...LANGUAGE_CASES, ...LITERAL_CASES, ...API_CASES, ...RECORD_CASES, ...HALF_CASES, ...COMPLEX_CASES];

type Outcome = { readonly kernel: WgslKernel } | { readonly outside: string } | { readonly failed: string };

function compileCase(c: KernelCase, target: WgslTarget): Outcome {
  let ir;
  try {
    ir = compileToIR(c.kernel, argumentTypes(c, c.args()), { ...c.options, name: c.name, resolveDeviceFunction });
  } catch (e) {
    return { failed: `front end: ${(e as Error).message}` };
  }
  try {
    return { kernel: emitWgsl(ir, target) };
  } catch (e) {
    if (e instanceof CompileError && /on the webgpu target/.test(e.message)) return { outside: e.message.split("\n")[0]! };
    return { failed: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

for (const [adapter, target] of Object.entries(ADAPTERS)) {
  test(`every kernel case compiles to WGSL that Dawn accepts on ${adapter}, or is a subset error naming the target`, async (t) => {
    const outcomes = CASES.map((c) => ({ name: c.name, outcome: compileCase(c, target) }));
    const failed = outcomes.filter((o) => "failed" in o.outcome);
    assert.deepEqual(failed.map((o) => `${o.name}: ${(o.outcome as { failed: string }).failed}`), []);
    const compiled = outcomes.filter((o): o is { name: string; outcome: { kernel: WgslKernel } } => "kernel" in o.outcome);
    const outside = outcomes.filter((o) => "outside" in o.outcome);
    t.diagnostic(`${adapter}: ${compiled.length} of ${CASES.length} cases compile to WGSL; ${outside.length} are outside the subset`);
    for (const o of outside) t.diagnostic(`  outside: ${o.name.slice(0, 70)} — ${(o.outcome as { outside: string }).outside}`);
    const setup = dawnSetup(adapter);
    if (typeof setup === "string") { t.skip(setup); return; }
    const results = validateWgsl(setup, compiled.map((o) => o.outcome.kernel));
    const rejected = results.map((r, k) => ({ name: compiled[k]!.name, errors: r.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`) })).filter((r) => r.errors.length);
    for (const r of rejected) t.diagnostic(`  Dawn rejects: ${r.name.slice(0, 70)}: ${r.errors.join(" | ").slice(0, 400)}`);
    assert.deepEqual(rejected.map((r) => r.name), []);
  });
}
