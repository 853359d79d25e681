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
  "graph.ts",
  "link-cuda-cpp.ts",
  "cache-and-bundle.ts",
  // one rank here; test/launcher.test.ts runs them with numbats run -n 2 and -n 4
  "distributed-heat.ts",
  "distributed-histogram.ts",
];

const root = fileURLToPath(new URL("..", import.meta.url));
type Outcome = "ok" | "FAIL" | "skip";
const results: { name: string; outcome: Outcome; seconds: number; why?: string }[] = [];

/**
 * Why an example cannot run on the current target, where that is what it failed with: a target with a
 * smaller language or runtime than CUDA's (webgpu: no float64, no graphs, no on-disk cache…) refuses
 * what it lacks with an error that names "the <target> target".
 */
function outsideTarget(stderr: string): string | undefined {
  const target = process.env.NUMBATS_TARGET?.trim().toLowerCase();
  if (!target || target === "cuda" || target === "sim" || target === "auto") return undefined;
  return stderr.split("\n").find((l) => /\w*Error: /.test(l) && l.toLowerCase().includes(`the ${target} target`));
}

for (const name of EXAMPLES) {
  const file = fileURLToPath(new URL(name, import.meta.url));
  const start = performance.now();
  const child = spawnSync(process.execPath, ["--import", "tsx", file], { cwd: root, encoding: "utf8" });
  const seconds = (performance.now() - start) / 1000;
  const why = child.status === 0 ? undefined : outsideTarget(child.stderr);
  const outcome: Outcome = child.status === 0 ? "ok" : why ? "skip" : "FAIL";
  results.push({ name, outcome, seconds, why });
  console.log(`== ${name} (${seconds.toFixed(2)} s)`);
  process.stdout.write(child.stdout);
  // the target notice ("running kernels on the CPU simulator…") is expected; errors are not
  if (outcome === "skip") console.log(`cannot run on the ${process.env.NUMBATS_TARGET} target: ${why!.trim()}`);
  else if (outcome === "FAIL") process.stdout.write(child.stderr || `exited with ${child.status ?? child.signal}\n`);
}

console.log("\nsummary");
for (const r of results) console.log(`  ${r.outcome.padEnd(4)}  ${r.name.padEnd(22)} ${r.seconds.toFixed(2)} s${r.why ? `  (${r.why.trim()})` : ""}`);
const failed = results.filter((r) => r.outcome === "FAIL").length;
const skipped = results.filter((r) => r.outcome === "skip").length;
console.log(`${results.length - failed - skipped} of ${results.length} examples passed${skipped ? `, ${skipped} cannot run on this target` : ""}`);
process.exitCode = failed ? 1 : 0;
