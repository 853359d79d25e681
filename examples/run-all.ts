// Runs every example as its own process (`npm run examples`), prints each
// one's checks and wall time, then a summary; exits non-zero if any failed.
// Each example also runs alone and takes its own size: `node --import tsx examples/matmul-tiled.ts 512`.

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const EXAMPLES = [
  "increment-by-one.ts",
  "vector-add.ts",
  "matmul-naive.ts",
  "matmul-tiled.ts",
  "normalize.ts",
  "sum-reduce.ts",
  "histogram.ts",
  "monte-carlo-pi.ts",
  "mandelbrot.ts",
  "nbody-records.ts",
  "julia.ts",
  "phasors.ts",
  "sanitizer.ts",
  // one rank here; test/launcher.test.ts runs them with numbats run -n 2 and -n 4
  "distributed-heat.ts",
  "distributed-histogram.ts",
];

const root = fileURLToPath(new URL("..", import.meta.url));
const results: { name: string; ok: boolean; seconds: number }[] = [];

for (const name of EXAMPLES) {
  const file = fileURLToPath(new URL(name, import.meta.url));
  const start = performance.now();
  const child = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
  const seconds = (performance.now() - start) / 1000;
  const ok = child.status === 0;
  results.push({ name, ok, seconds });
  console.log(`== ${name} (${seconds.toFixed(2)} s)`);
  process.stdout.write(child.stdout);
  // the target notice ("running kernels on the CPU simulator…") is expected; errors are not
  if (!ok) process.stdout.write(child.stderr || `exited with ${child.status ?? child.signal}\n`);
}

console.log("\nsummary");
for (const r of results) console.log(`  ${r.ok ? "ok  " : "FAIL"}  ${r.name.padEnd(22)} ${r.seconds.toFixed(2)} s`);
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} of ${results.length} examples passed`);
process.exitCode = failed ? 1 : 0;
