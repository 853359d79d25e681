// SASS instruction counts of our PTX vs nvcc's for the same kernels (ptx.md §4),
// read from ptxas -O3 -arch=sm_90 cubins with ../shared/notes/ptx-evidence/sass_sm90.py.
// Counts instructions per loop iteration — a code-quality check, not a timing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { matmulIR, polyIR } from "../ptx-ir.js";
import { hasPtxas } from "../helpers/ptxas.js";

const evidence = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "shared", "notes", "ptx-evidence");
const census = join(evidence, "sass_sm90.py");
const canRun = () => hasPtxas() && existsSync(census) && spawnSync("nvcc", ["--version"], { stdio: "ignore" }).status === 0
  && spawnSync("python3", ["--version"], { stdio: "ignore" }).status === 0;

/** instructions in each loop of each kernel, by kernel name */
function loopCounts(ptx: string, dir: string, name: string): Map<string, number[]> {
  const src = join(dir, `${name}.ptx`), bin = join(dir, `${name}.cubin`);
  writeFileSync(src, ptx);
  execFileSync("ptxas", ["-O3", "-arch=sm_90", src, "-o", bin]);
  const out = execFileSync("python3", [census, bin]).toString();
  const counts = new Map<string, number[]>();
  let kernel = "";
  for (const line of out.split("\n")) {
    const k = /^== (\S+):/.exec(line);
    if (k) { kernel = k[1]!; counts.set(kernel, []); }
    const l = /loop \[.*\] (\d+) instrs/.exec(line);
    if (l) counts.get(kernel)!.push(Number(l[1]));
  }
  return counts;
}

test("matmul and grid-stride loops are within 10% of nvcc's SASS per iteration", (t) => {
  if (!canRun()) return t.skip("ptxas, nvcc, python3 or ../shared/notes/ptx-evidence missing: SASS census not run");
  const dir = mkdtempSync(join(tmpdir(), "numbats-sass-"));
  try {
    const nvPtx = join(dir, "nv.ptx");
    execFileSync("nvcc", ["-ptx", "-O3", "-arch=sm_90", join(evidence, "matmul_nvcc.cu"), "-o", nvPtx]);
    const nv = loopCounts(execFileSync("cat", [nvPtx]).toString(), dir, "nv");
    const ours = new Map([
      ...loopCounts(emitPtx(matmulIR(), { computeCapability: [9, 0] }).text, dir, "mm"),
      ...loopCounts(emitPtx(polyIR(), { computeCapability: [9, 0] }).text, dir, "poly"),
    ]);
    for (const [mine, theirs] of [["matmul", "matmul_tiled"], ["poly_loop", "poly_loop"]]) {
      const a = ours.get(mine!)!, b = nv.get(theirs!)!;
      console.log(`# ${mine}: ours ${a.join("/")} vs nvcc ${b.join("/")} SASS instructions per loop iteration`);
      assert.equal(a.length, b.length, `${mine}: loop structure differs`);
      a.forEach((n, i) => assert.ok(n <= Math.ceil(b[i]! * 1.1), `${mine} loop ${i}: ${n} vs nvcc ${b[i]}`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
