// numbats/plugin end to end: the program in test/plugin/app/ (shared memory and barriers, Math.exp,
// a device function from another module, an env function, a reduction and a ufunc) bundled and
// minified by esbuild through `numbats.esbuild()` prints what it prints unbundled; without the plugin
// the minified bundle does not run. numbats itself stays external (its source, loaded through tsx).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { TraceMap, originalPositionFor } from "@jridgewell/trace-mapping";
import numbats from "../../src/plugin/index.js";
import { blockSums, runAll, squares, total, wave } from "./app/kernels.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const APP = join(ROOT, "test", "plugin", "app");
const out = mkdtempSync(join(tmpdir(), "numbats-plugin-"));
after(() => rmSync(out, { recursive: true, force: true }));

/**
 * numbats' own source stays outside the bundle, imported by its path and run under tsx. (A CommonJS
 * bundle would require() it, which tsx answers by compiling numbats' source to CommonJS, a text its
 * math library is not compiled from; the bundler matrix runs CommonJS bundles on the built package.)
 */
const numbatsExternal: Plugin = {
  name: "numbats-external",
  setup(b) {
    b.onResolve({ filter: /src\/index\.js$/ }, () => ({ path: join(ROOT, "src", "index.ts"), external: true }));
  },
};

async function bundle(name: string, plugins: Plugin[]): Promise<string> {
  const outfile = join(out, `${name}.mjs`);
  await build({
    entryPoints: [join(APP, "main.ts")], bundle: true, minify: true, format: "esm", platform: "node", outfile,
    sourcemap: true, absWorkingDir: ROOT, plugins: [...plugins, numbatsExternal], logLevel: "silent",
  });
  return outfile;
}

const runBundle = (file: string) => spawnSync(process.execPath, ["--import", "tsx", file], { cwd: ROOT, encoding: "utf8", env: process.env });

const reference = runAll();

test("the program's kernels assemble with ptxas", () => {
  if (!hasPtxas()) return;
  for (const ptx of [blockSums.inspectAsm(), squares.inspectAsm(), total.kernels[0]!.inspectAsm(), wave.kernels[0]!.inspectAsm()]) ptxasCheck(ptx, "sm_80");
});

test("esbuild --minify with numbats.esbuild(): the bundle prints what the program prints", async () => {
  const file = await bundle("with-plugin", [numbats.esbuild()]);
  const code = readFileSync(file, "utf8");
  assert.equal(code.split("cuda.shared.array(TPB, float32)").length, 2, "the kernels' code is minified, their records hold the original text");
  const r = runBundle(file);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), reference);
  // the bundle's source map leads from the minified kernel to its line in the original file
  const map = new TraceMap(readFileSync(`${file}.map`, "utf8"));
  const lines = code.split("\n");
  const exp = /Math\.exp\(\w+\[/;
  const line = lines.findIndex((l) => exp.test(l));
  const pos = originalPositionFor(map, { line: line + 1, column: lines[line]!.search(exp) });
  assert.deepEqual([pos.source?.replace(/^.*\/test\//, "test/"), pos.line], ["test/plugin/app/kernels.ts", 13]);
});

test("esbuild --minify without the plugin: the minified kernels do not run", async () => {
  const file = await bundle("without-plugin", []);
  const r = runBundle(file);
  assert.notEqual(r.status, 0, `a minified bundle ran without the plugin:\n${r.stdout}`);
  assert.match(r.stderr, /CompileError: .*looks minified.*numbats\.esbuild\(\)/s);
});

/** Bundles the program `entry` (test/plugin/app) through numbats.esbuild(), minified and not; each run must print `expected`. */
async function printsWithPlugin(entry: string, expected: string): Promise<void> {
  for (const minify of [true, false]) {
    const outfile = join(out, `${entry.replace(/\.ts$/, "")}-${minify}.mjs`);
    await build({
      entryPoints: [join(APP, entry)], bundle: true, minify, format: "esm", platform: "node", outfile,
      absWorkingDir: ROOT, plugins: [numbats.esbuild(), numbatsExternal], logLevel: "silent",
    });
    const r = runBundle(outfile);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), expected, `minify: ${minify}`);
  }
}

test("cuda, a dtype and a device function imported under other names: with the plugin they mean what they are, minified or not", async () => {
  await printsWithPlugin("aliased.ts", [1, 2, 3, 4.5].map((x) => Math.fround(Math.fround(x * 2 + 1) / 3)).join(" "));
});

test("a kernel and a device function written in one module and passed to cuda.jit in another: recorded where declared, minified or not", async () => {
  await printsWithPlugin("elsewhere.ts", [1, 2, 3, 5].map((x) => Math.fround(x / 2 + 0.25)).join(" "));
});
