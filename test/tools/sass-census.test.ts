// tools/sass-census.mjs reads loops from sm_90 cubins without a disassembler, by what it takes to
// be the encoding of branches (its header): checked here on PTX whose loops are known, chains of
// dependent fma that ptxas can neither shorten nor unroll, so each loop's count is its chain plus
// a few instructions of loop control.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { missingTools } from "../helpers/tools.js";
import { census } from "../../tools/sass-census.mjs";

/** loop control beside a loop's chain: the counter's add, its compare, the branch, a move or two */
const CONTROL = 6;

const chain = (n: number) => "  fma.rn.f32 %f1, %f1, %f2, %f3;\n".repeat(n);

/** A loop of `body` run %r1 times on counter `r`, labelled `name`. */
const loop = (name: string, r: string, body: string) => `
  mov.u32 ${r}, 0;
${name}:
  .pragma "nounroll";
  setp.ge.u32 %p1, ${r}, %r1;
  @%p1 bra ${name}_end;
${body}  add.u32 ${r}, ${r}, 1;
  bra ${name};
${name}_end:`;

const kernel = (name: string, body: string) => `
.visible .entry ${name}(.param .u64 out, .param .u32 n) {
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .f32 %f<4>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  cvt.rn.f32.u32 %f1, %r2;
  add.f32 %f2, %f1, 0f3FC00000;
  add.f32 %f3, %f1, 0f3E800000;${body}
  st.global.f32 [%rd1], %f1;
  ret;
}`;

const PTX = `.version 8.0
.target sm_90
.address_size 64
${kernel("straight5", `\n${chain(5)}`)}
${kernel("straight25", `\n${chain(25)}`)}
${kernel("two_loops", loop("a", "%r3", chain(40)) + loop("b", "%r4", chain(24)))}
${kernel("nested", loop("outer", "%r3", chain(8) + loop("inner", "%r4", chain(16)).slice(1) + "\n"))}
`;

const within = (count: number, chainLength: number, what: string, control = CONTROL) =>
  assert.ok(count >= chainLength && count <= chainLength + control, `${what}: ${count} instructions for a chain of ${chainLength}`);

test("the census finds each loop of known PTX and counts its body", { skip: missingTools("ptxas") }, () => {
  const dir = mkdtempSync(join(tmpdir(), "numbats-census-"));
  try {
    writeFileSync(join(dir, "k.ptx"), PTX);
    execFileSync("ptxas", ["-O3", "-arch=sm_90", join(dir, "k.ptx"), "-o", join(dir, "k.cubin")]);
    const kernels = new Map(census(join(dir, "k.cubin")).map((k) => [k.kernel, k]));
    assert.deepEqual([...kernels.keys()].sort(), ["nested", "straight25", "straight5", "two_loops"]);

    const [five, twentyFive] = [kernels.get("straight5")!, kernels.get("straight25")!];
    assert.deepEqual([five.loops, twentyFive.loops], [[], []], "no loop in straight-line code (the closing branch to itself is none)");
    assert.equal(twentyFive.instructions - five.instructions, 20, "20 more fma, 20 more instructions");

    const two = kernels.get("two_loops")!.loops;
    assert.equal(two.length, 2, "two loops");
    within(two[0]!.instructions, 40, "first loop");
    within(two[1]!.instructions, 24, "second loop");
    assert.ok(two[0]!.end < two[1]!.start, "one after the other");

    const [inner, outer] = kernels.get("nested")!.loops;
    assert.ok(inner && outer, "two loops");
    within(inner.instructions, 16, "inner loop");
    assert.ok(outer.start <= inner.start && inner.end < outer.end, "the inner loop is inside the outer one");
    within(outer.instructions - inner.instructions, 8, "outer loop less the inner one (whose entry it holds)", 2 * CONTROL);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a file that is not a cubin is an error naming it", () => {
  const dir = mkdtempSync(join(tmpdir(), "numbats-census-"));
  try {
    writeFileSync(join(dir, "k.ptx"), ".version 8.0\n");
    assert.throws(() => census(join(dir, "k.ptx")), /k\.ptx: not a 64-bit little-endian ELF file \(a cubin\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
