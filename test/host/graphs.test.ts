// Graphs on the simulator (stream.capture, docs/graphs.md): the cases of test/cases/graphs.ts against
// host references, and the sanitizer checking replayed launches as the launches they are.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, SanitizerError } from "../../src/index.js";
import { setSimChecks, simChecks } from "../../src/backends/sim/runtime/sanitize.js";
import { graphCases } from "../cases/graphs.js";

process.env.NUMBATS_TARGET = "sim";

for (const c of graphCases()) test(`sim: ${c.name}`, () => c.run());

const racy = cuda.jit((total: Float32Array) => {
  total[0] = cuda.threadIdx.x; // every thread writes one element: a race
});

const overrun = cuda.jit((y: Float32Array) => {
  const i = cuda.grid(1);
  y[i] = 1; // no bounds check: the last block writes past the end
});

/** The kinds of finding `launch` reports with every sanitizer tool on. */
function replayFindings(launch: () => void): string[] {
  const before = simChecks();
  setSimChecks({ tools: "all" });
  try {
    launch();
    return [];
  } catch (e) {
    if (!(e instanceof SanitizerError)) throw e;
    return e.findings.map((f) => `${f.tool} ${f.kind}`).sort();
  } finally {
    setSimChecks(before);
  }
}

test("sim: the sanitizer sees a replayed launch: a race and an out-of-bounds write, at each launch of the graph", () => {
  const s = cuda.stream();
  const total = cuda.toDevice(new Float32Array(1));
  const y = cuda.toDevice(new Float32Array(40));
  const races = s.capture(() => racy.configure(1, 32, s)(total));
  const overruns = s.capture(() => overrun.configure(2, 32, s)(y));
  for (let k = 0; k < 2; k++) {
    assert.deepEqual(replayFindings(() => races.launch(s)), ["racecheck write-after-write"]);
    assert.deepEqual(replayFindings(() => overruns.launch(s)), ["memcheck out-of-bounds"]);
  }
  races.free(), overruns.free();
  total.free(), y.free();
});
