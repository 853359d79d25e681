// numbats/babel as jest runs it: @babel/core with preset-typescript, numbats/babel and then
// babel-plugin-istanbul (babel-jest appends it for --coverage). The records hold the original text,
// as numbats/plugin records it, while the kernels' bodies are instrumented; the instrumented program
// prints what the program prints, and without numbats/babel it does not run.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { transformSync, type PluginItem } from "@babel/core";
import numbatsBabel from "../../src/plugin/babel.js";
import { findKernels } from "../../src/plugin/record.js";
import { runAll } from "./app/kernels.js";

process.env.NUMBATS_TARGET ??= "sim";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const APP = join(ROOT, "test", "plugin", "app");
const MODULES = ["device", "kernels", "main"] as const;
const out = mkdtempSync(join(tmpdir(), "numbats-babel-"));
after(() => rmSync(out, { recursive: true, force: true }));

/** babel-plugin-istanbul as babel-jest configures it, for files under test/ too (its default excludes them). */
const istanbul: PluginItem = [createRequire(import.meta.url).resolve("babel-plugin-istanbul"), { cwd: ROOT, include: ["test/plugin/app/**"], exclude: [] }];

function transform(name: string, withNumbats: boolean): string {
  const filename = join(APP, `${name}.ts`);
  const plugins: PluginItem[] = withNumbats ? [numbatsBabel, istanbul] : [istanbul];
  const r = transformSync(readFileSync(filename, "utf8"), { filename, cwd: ROOT, babelrc: false, configFile: false, presets: ["@babel/preset-typescript"], plugins });
  // numbats' source and the sibling modules, by path, as the program in `out` imports them
  return r!.code!.replace(/"\.\.\/\.\.\/\.\.\/src\/index\.js"/g, JSON.stringify(join(ROOT, "src", "index.ts"))).replace(/"\.\/(\w+)\.js"/g, '"./$1.mjs"');
}

/** Writes the instrumented program to `dir` and runs it; its stdout and the coverage counters it hit. */
function runInstrumented(dir: string, withNumbats: boolean) {
  for (const m of MODULES) writeFileSync(join(dir, `${m}.mjs`), transform(m, withNumbats));
  writeFileSync(join(dir, "run.mjs"), `import "./main.mjs";\nconst c = Object.values(globalThis.__coverage__);\nconsole.error("covered statements:", c.reduce((n, f) => n + Object.values(f.s).filter((k) => k > 0).length, 0));\n`);
  return spawnSync(process.execPath, ["--import", "tsx", join(dir, "run.mjs")], { cwd: ROOT, encoding: "utf8", env: process.env });
}

test("numbats/babel before istanbul: each record is the original text, as numbats/plugin records it; the kernel bodies are instrumented", () => {
  const code = transform("kernels", true);
  const original = readFileSync(join(APP, "kernels.ts"), "utf8");
  const expected = findKernels(original, join(APP, "kernels.ts"), ROOT).sites.map((s) => s.record);
  assert.equal(expected.length, 5);
  for (const record of expected) {
    const source = JSON.parse(/source: ("(?:[^"\\]|\\.)*")/.exec(record)![1]!) as string;
    assert.ok(code.includes(JSON.stringify(source)), `the record of ${/name: "(\w+)"/.exec(record)![1]} is the original text`);
  }
  assert.match(code, /const s = \(cov_\w+\(\)\.s\[\d+\]\+\+, cuda\.shared\.array/, "istanbul counted the kernel's statements");
  assert.match(code, /name: "blockSums",\s*file: "test\/plugin\/app\/kernels\.ts",\s*line: 9,\s*column: 34/);
});

test("the instrumented program with numbats/babel prints what the program prints", () => {
  const dir = mkdtempSync(join(out, "with-"));
  const r = runInstrumented(dir, true);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), runAll());
  assert.match(r.stderr, /covered statements: [1-9]\d*/);
});

test("the instrumented program without numbats/babel does not run its kernels", () => {
  const dir = mkdtempSync(join(out, "without-"));
  const r = runInstrumented(dir, false);
  assert.notEqual(r.status, 0, `instrumented kernels ran without numbats/babel:\n${r.stdout}`);
  assert.match(r.stderr, /CompileError: .*instrumented by a coverage tool.*numbats\/babel/s);
});

test("require('numbats/babel') and require('numbats/plugin') give the plugins (the built package's CommonJS entries)", (t) => {
  const dist = join(ROOT, "dist", "src", "plugin");
  if (!existsSync(join(dist, "babel.cjs"))) { t.skip("dist/ has no plugin entries: run npm run build"); return; }
  const require = createRequire(import.meta.url);
  assert.equal(typeof require(join(dist, "babel.cjs")), "function");
  const plugin = require(join(dist, "index.cjs")) as Record<string, unknown>;
  for (const k of ["esbuild", "webpack", "vite", "rollup", "rspack"]) assert.equal(typeof plugin[k], "function", k);
});
