// Every example's kernels, as the examples launch them: each example runs (small size) with its
// launches recorded; every recorded kernel's PTX must pass ptxas (sm_80, sm_90) and, from the same
// inputs, give on ptxsim the bytes the simulator gives (test/helpers/example-launches.ts).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { hasPtxas } from "../helpers/ptxas.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const harness = fileURLToPath(new URL("../helpers/example-launches.ts", import.meta.url));

/** example → a size small enough for ptxsim to interpret every launch */
const EXAMPLES: Record<string, number> = {
  "increment-by-one.ts": 3000, "vector-add.ts": 3000, "matmul-naive.ts": 40, "matmul-tiled.ts": 40, "normalize.ts": 5000,
  "sum-reduce.ts": 5000, "histogram.ts": 5000, "monte-carlo-pi.ts": 4, "mandelbrot.ts": 8, "julia.ts": 8,
  "nbody-records.ts": 100, "phasors.ts": 256, "graph.ts": 256,
  "distributed-heat.ts": 120, "distributed-histogram.ts": 2000,
};

interface Report { kernel: string; launch: string; ptxas: string; ptxsim: string }

for (const [example, size] of Object.entries(EXAMPLES)) {
  test(`examples/${example}: its kernels pass ptxas and agree with the simulator on ptxsim`, () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", harness, `examples/${example}`, String(size)], { cwd: root, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const { exampleExitCode, reports } = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { exampleExitCode: number; reports: Report[] };
    assert.equal(exampleExitCode, 0, `the example's own checks failed:\n${r.stdout}`);
    assert.ok(reports.length > 0, "the example launched no kernel");
    for (const rep of reports) {
      const what = `${rep.kernel} (${rep.launch})`;
      assert.equal(rep.ptxas, hasPtxas() ? "ok" : "skipped", `${what}: ptxas`);
      assert.equal(rep.ptxsim, "ok", `${what}: ptxsim`);
    }
  });
}
