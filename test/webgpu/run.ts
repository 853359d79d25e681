// `npm run test:webgpu`: the webgpu target end to end on each CPU WebGPU adapter (test/helpers/webgpu.ts:
// lavapipe, SwiftShader), in child processes with NUMBATS_TARGET=webgpu:
//   1. the webgpu suite (test/webgpu/*.test.ts): every kernel case against its host reference and the
//      simulator, or refused with a CompileError naming the target;
//   2. every example (examples/run-all.ts): those outside the subset say why and count as skipped.
// Exits 0 with a notice where no adapter can be found.

import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuAdapters } from "../helpers/webgpu.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const found = cpuAdapters();
if ("reason" in found) {
  console.log(`# test:webgpu skipped: ${found.reason}`);
  process.exit(0);
}

const suite = readdirSync(join(root, "test", "webgpu")).filter((f) => f.endsWith(".test.ts")).sort().map((f) => `test/webgpu/${f}`);
const STEPS = [
  { name: "webgpu suite", args: ["--import", "tsx", "--test", "--test-concurrency=1", ...suite] },
  { name: "examples", args: ["--import", "tsx", "examples/run-all.ts"] },
] as const;

const results: { name: string; ok: boolean; seconds: number }[] = [];
for (const adapter of found.adapters) {
  const env = { ...process.env, ...adapter.env, NUMBATS_TARGET: "webgpu", NUMBATS_WEBGPU_ADAPTER: adapter.name };
  for (const step of STEPS) {
    const name = `${step.name} on ${adapter.name}`;
    console.log(`\n== ${name}`);
    const start = performance.now();
    const r = spawnSync(process.execPath, step.args, { cwd: root, env, stdio: "inherit" });
    results.push({ name, ok: r.status === 0, seconds: (performance.now() - start) / 1000 });
  }
}

console.log("\ntest:webgpu summary");
for (const r of results) console.log(`  ${r.ok ? "ok  " : "FAIL"}  ${r.name.padEnd(30)} ${r.seconds.toFixed(1)} s`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
