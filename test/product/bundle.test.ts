// Ahead-of-time bundles: `numbats build` compiles a module's kernels into a bundle, and a later process
// that loads it with cuda.loadBundle launches them without compiling (NUMBATS_CACHE_TRACE=1 names each
// kernel a bundle gives; nothing is compiled then, so nothing would be cached) and gets the results it
// would compile; a bundle of other source text, of another numbats version, or no bundle at all is
// refused with the reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FAKECUDA, missingTools } from "../helpers/tools.js";
import { elfSymbols } from "../helpers/elf.js";
import { readBundle } from "../../src/runtime/bundle.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const KERNELS = "test/fixtures/bundle/kernels.ts";

function node(args: readonly string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ["--import", "tsx", ...args], { cwd: root, env: { ...process.env, NUMBATS_TARGET: "sim", ...env }, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Results { blend?: number[]; axpy?: number[]; error?: string }

/** test/fixtures/bundle/run.ts with `bundle` (none: ""), its results and the kernels bundles gave it. */
function run(bundle: string, env: Record<string, string> = {}): { results: Results; bundled: string[]; stderr: string } {
  const r = node(["test/fixtures/bundle/run.ts", bundle], { NUMBATS_CACHE_TRACE: "1", ...env });
  assert.equal(r.status, 0, r.stderr);
  const bundled = r.stderr.split("\n").filter((l) => l.startsWith("numbats cache: bundled ")).map((l) => /'(\w+)'/.exec(l)![1]!);
  return { results: JSON.parse(r.stdout) as Results, bundled, stderr: r.stderr };
}

/** The kernels' results computed here in float64 (blend's, in float32, are within a few ulp). */
function reference(): Required<Omit<Results, "error">> {
  const blend = Array.from({ length: 128 }, (_, i) => { const a = Math.fround(i / 64 - 1); return Math.exp(a) + (a * a * 0.5 + 1) * 3; });
  const axpy = Array.from({ length: 128 }, (_, i) => 2.5 * Math.sin(i / 32) + 1);
  return { blend, axpy };
}

function assertNear(got: readonly number[] | undefined, want: readonly number[], tolerance: number): void {
  assert.ok(got, "no results");
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= tolerance * Math.max(1, Math.abs(want[i]!)), `[${i}] = ${g}, expected ${want[i]}`));
}

const dir = mkdtempSync(join(tmpdir(), "numbats-bundle-"));
const bundle = join(dir, "kernels.bundle");
test.after(() => rmSync(dir, { recursive: true, force: true }));

test("numbats build writes a bundle of the module's kernels: the simulator's code and PTX per --arch (with a cubin where nvJitLink is found)", () => {
  const r = node(["src/cli.ts", "build", KERNELS, "--arch", "sm_80,sm_90", "-o", bundle]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^axpy: void\(float64, array\(float64, 1d, C\), array\(float64, 1d, C\)\) \(cuda sm_80(?: \+ cubin)?, cuda sm_90(?: \+ cubin)?, sim\)$/m);
  assert.match(r.stdout, /^blend: void\(array\(float32, 1d, C\), array\(float32, 1d, C\)\) \(cuda sm_80(?: \+ cubin)?, cuda sm_90(?: \+ cubin)?, sim\)$/m);
  assert.match(r.stdout, /wrote .*kernels\.bundle: 2 kernel specialisations/);
  // each cubin (where nvJitLink made them) defines its kernel's entry
  for (const k of readBundle(bundle).kernels) {
    for (const a of k.artifacts.filter((x) => x.binary)) {
      const entry = elfSymbols(a.binary!).find((sym) => sym.name === k.name);
      assert.ok(entry?.defined && entry.type === "func", `${a.target}'s cubin defines ${k.name}`);
    }
  }
});

test("a process that loads the bundle launches its kernels without compiling them, with the compiled results", () => {
  const compiled = run("");
  assert.deepEqual(compiled.bundled, []);
  const bundled = run(bundle);
  assert.deepEqual(bundled.bundled.sort(), ["axpy", "blend"], bundled.stderr);
  assert.deepEqual(bundled.results, compiled.results); // bit for bit
  assertNear(bundled.results.blend, reference().blend, 4e-6);
  assertNear(bundled.results.axpy, reference().axpy, 1e-14);
});

test("--sig bundles the kernel for that signature", () => {
  const other = join(dir, "axpy.bundle");
  const r = node(["src/cli.ts", "build", KERNELS, "--kernel", "axpy", "--sig", "void(float64, float64[:], float64[:])", "-o", other]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^axpy: void\(float64, array\(float64, 1d, A\), array\(float64, 1d, A\)\) \(cuda sm_\d+(?: \+ cubin)?, sim\)$/m);
  assert.doesNotMatch(r.stdout, /blend/);
});

test("a bundle of other source text, of another numbats version, or no bundle at all is refused with the reason", () => {
  const changed = run(bundle, { BUNDLE_VARIANT: "source" });
  assert.match(changed.results.error ?? "", /LaunchError: the bundle .*kernels\.bundle holds kernel 'blend' built from other source text than this kernel's: build the bundle again with npx numbats build/);
  const text = readFileSync(bundle, "utf8");
  const old = join(dir, "old.bundle");
  writeFileSync(old, text.replace(/"version":"[^"]*"/, '"version":"0.0.1"'));
  assert.match(run(old).results.error ?? "", /^Error: cuda\.loadBundle: .*old\.bundle was built by numbats 0\.0\.1, and this is numbats \S+: build it again with npx numbats build$/);
  const none = join(dir, "none.bundle");
  writeFileSync(none, "hello");
  assert.match(run(none).results.error ?? "", /^TypeError: cuda\.loadBundle: .*none\.bundle is not a numbats bundle \(it does not start with 'numbats-bundle 1'\); make one with npx numbats build$/);
});

test("on the emulated GPU the bundle's code for its compute capability is loaded without compiling (its PTX: the emulator loads no real cubin)", { skip: missingTools("gcc") }, () => {
  const env = { NUMBATS_TARGET: "cuda", NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${FAKECUDA}`.trim() };
  const bundled = run(bundle, env);
  assert.match(bundled.stderr, /bundled 'blend' .* for cuda sm_90/);
  assert.deepEqual(bundled.bundled.sort(), ["axpy", "blend"], bundled.stderr);
  assert.deepEqual(bundled.results, run("").results); // the simulator's, bit for bit
});

// a kernel linked with code compiled elsewhere (test/fixtures/bundle/linked.ts: scale_by.ptx, a `sim` stand-in)

const LINKED = "test/fixtures/bundle/linked.ts";
const linkedWant = Array.from({ length: 128 }, (_, i) => Math.fround(Math.fround(Math.fround(i / 64 - 1) * 2) + 1));

/** run-linked.ts with `bundle`: its results and the kernels bundles gave it. */
function runLinked(bundle: string, env: Record<string, string> = {}): { scaled: number[]; bundled: string[]; stderr: string } {
  const r = node(["test/fixtures/bundle/run-linked.ts", bundle], { NUMBATS_CACHE_TRACE: "1", ...env });
  assert.equal(r.status, 0, r.stderr);
  const bundled = r.stderr.split("\n").filter((l) => l.startsWith("numbats cache: bundled ")).map((l) => /'(\w+)'/.exec(l)![1]!);
  return { scaled: (JSON.parse(r.stdout) as { scaled: number[] }).scaled, bundled, stderr: r.stderr };
}

const linkedBundle = join(dir, "linked.bundle"), unlinkedBundle = join(dir, "linked-at-load.bundle");
const emulated = () => ({ NUMBATS_TARGET: "cuda", NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${FAKECUDA}`.trim() });

test("a kernel with link entries is bundled: per --arch the PTX linked by nvJitLink into a cubin where it is found, else the PTX, linked at load; a kernel linked with other bytes compiles", () => {
  const r = node(["src/cli.ts", "build", LINKED, "--arch", "sm_80,sm_90", "-o", linkedBundle]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^scaled: void\(array\(float32, 1d, C\), array\(float32, 1d, C\)\) \(cuda sm_80 (?:\+ linked cubin|\(linked at load\)), cuda sm_90 (?:\+ linked cubin|\(linked at load\)), sim\)$/m);
  // each linked cubin defines the kernel's entry and the function linked in
  for (const k of readBundle(linkedBundle).kernels) {
    for (const a of k.artifacts.filter((x) => x.binary)) {
      const symbols = elfSymbols(a.binary!);
      for (const name of ["scaled", "scale_by"]) assert.ok(symbols.some((s) => s.name === name && s.defined && s.type === "func"), `${a.target}'s cubin defines ${name}`);
    }
  }
  const without = node(["src/cli.ts", "build", LINKED, "--arch", "sm_90", "-o", unlinkedBundle], { NUMBATS_NVJITLINK_LIBRARY: join(dir, "no-such-library.so") });
  assert.equal(without.status, 0, without.stderr);
  assert.match(without.stdout, /^scaled: .* \(cuda sm_90 \(linked at load\), sim\)$/m);
  const sim = runLinked(linkedBundle);
  assert.deepEqual(sim.bundled, ["scaled"], sim.stderr);
  assert.deepEqual(sim.scaled, linkedWant);
  // linked with other bytes than the bundle was built with: compiled, not taken from the bundle
  const other = runLinked(linkedBundle, { LINK_VARIANT: "other" });
  assert.deepEqual(other.bundled, [], other.stderr);
  assert.deepEqual(other.scaled, linkedWant);
});

test("on the emulated GPU a bundled linked kernel loads without compiling, linked again at load where its cubin is not loadable or absent", { skip: missingTools("gcc") }, () => {
  for (const file of [linkedBundle, unlinkedBundle]) {
    const r = runLinked(file, emulated());
    assert.match(r.stderr, /bundled 'scaled' .* for cuda sm_90/, file);
    assert.deepEqual(r.scaled, linkedWant, file);
  }
});
