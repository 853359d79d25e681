// SASS instruction counts of our PTX vs nvcc's for the same kernels (ptx.md §4), per loop of
// ptxas -O3 -arch=sm_90 cubins, counted by tools/sass-census.mjs (no disassembler needed).
// Counts instructions per loop iteration — a code-quality check, not a timing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { matmulIR, polyIR } from "../ptx-ir.js";
import { missingTools } from "../helpers/tools.js";
import { census } from "../../tools/sass-census.mjs";

const reference = fileURLToPath(new URL("../fixtures/sass/nvcc-reference.cu", import.meta.url));

/** instructions in each loop of each kernel of a cubin, by kernel name */
function loopCounts(cubin: string): Map<string, number[]> {
  return new Map(census(cubin).map((k) => [k.kernel, k.loops.map((l) => l.instructions)]));
}

/** our PTX, assembled as the driver would at -O3 for sm_90 */
function ourCubin(ptx: string, dir: string, name: string): string {
  const src = join(dir, `${name}.ptx`), bin = join(dir, `${name}.cubin`);
  writeFileSync(src, ptx);
  execFileSync("ptxas", ["-O3", "-arch=sm_90", src, "-o", bin]);
  return bin;
}

test("matmul and grid-stride loops are within 10% of nvcc's SASS per iteration", { skip: missingTools("ptxas", "nvcc") }, () => {
  const dir = mkdtempSync(join(tmpdir(), "numbats-sass-"));
  try {
    const nvCubin = join(dir, "nv.cubin");
    execFileSync("nvcc", ["-cubin", "-O3", "-arch=sm_90", reference, "-o", nvCubin]);
    const nv = loopCounts(nvCubin);
    const ours = new Map([
      ...loopCounts(ourCubin(emitPtx(matmulIR(), { computeCapability: [9, 0] }).text, dir, "mm")),
      ...loopCounts(ourCubin(emitPtx(polyIR(), { computeCapability: [9, 0] }).text, dir, "poly")),
    ]);
    for (const [mine, theirs] of [["matmul", "matmul_tiled"], ["poly_loop", "poly_loop"]] as const) {
      const a = ours.get(mine)!, b = nv.get(theirs)!;
      console.log(`# ${mine}: ours ${a.join("/")} vs nvcc ${b.join("/")} SASS instructions per loop iteration`);
      assert.ok(b.length > 0, `${theirs}: nvcc's kernel has a loop`);
      assert.equal(a.length, b.length, `${mine}: loop structure differs`);
      a.forEach((n, i) => assert.ok(n <= Math.ceil(b[i]! * 1.1), `${mine} loop ${i}: ${n} vs nvcc ${b[i]}`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
