// The bundler matrix: the packed package (test/helpers/packed.ts) in fresh apps, built by the real
// tools users build with (installed once in test/bundlers by `npm ci --prefix test/bundlers`), each
// cell printing exactly what the same program prints unbundled under tsx. The program
// (test/bundlers/app) has kernels with shared memory and barriers, a device function from another
// module, dtypes, env constants, Math.exp, a reduction and a ufunc. The cells' configurations are in
// test/bundlers/configs: a `*.plugin.config.mjs` adds numbats' plugin to the configuration beside
// it; the build scripts and Babel's configuration add it when MATRIX_PLUGIN=1.
//
// - No configuration: esbuild (ESM and CommonJS, numbats inside or external, source maps or not, and
//   --minify-syntax, which keeps names), tsup, ncc, an unminified Vite SSR build, `numbats run -n 2`
//   of a bundle. Every cell run by node also checks the simulator's worker threads took part.
// - With the plugin: minified esbuild, Rollup + terser, webpack and Rspack production, Vite SSR and library
//   builds, jest --coverage (numbats/babel), vitest with istanbul coverage.
// - Without the plugin, the same minified and instrumented builds (but Rollup's: webpack's terser
//   minifies as Rollup's does, and costs as much): a CompileError that says the source looks
//   minified or instrumented and names the plugin, never a different result.
//
// Cells run two at a time; the summary at the end gives each cell's time and the whole matrix's.
// MATRIX_KEEP=1 keeps the apps (and what was built in them) for a look afterwards.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import { checkAgainstHost, linkTools, TOOLS } from "../helpers/bundler-app.js";
import { ROOT, installPacked } from "../helpers/packed.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { BLOCKS, TPB, ramp } from "../bundlers/app/inputs.js";

const APP = join(ROOT, "test", "bundlers", "app");
const CONFIGS = join(ROOT, "test", "bundlers", "configs");
const MISSING_TOOLS = existsSync(TOOLS) ? undefined : "the build tools are not installed: npm ci --prefix test/bundlers";

/** The package's own dependencies, and what the apps' tsc and `numbats run` of a .ts file need. */
const LINKED = [...Object.keys((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies), "@types/node", "tsx", "typescript"];

// ---------------------------------------------------------------------------
// running commands

interface Outcome { readonly status: number | null; readonly stdout: string; readonly stderr: string; readonly what: string }

/** `node` means this Node.js; a tool's name alone means its command in test/bundlers. */
type Command = readonly string[];

/** Runs a command in `cwd` (killed after `seconds`), with the simulator as target and `env` added. */
function run(command: Command, cwd: string, env: NodeJS.ProcessEnv = {}, seconds = 180): Promise<Outcome> {
  const [program, ...args] = command;
  const file = program === "node" ? process.execPath : program!.includes("/") ? program! : join(TOOLS, ".bin", program!);
  const what = `${command.join(" ")} (in ${cwd})`;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NUMBATS_TARGET: "sim", ...env };
  delete childEnv.NODE_TEST_CONTEXT; // else a test runner inside (jest, vitest) reports to ours
  return new Promise((done) => {
    const child = spawn(file, args, { cwd, env: childEnv, timeout: seconds * 1000, killSignal: "SIGKILL" });
    let stdout = "", stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", (e) => done({ status: -1, stdout, stderr: `${stderr}${e.message}`, what }));
    child.on("close", (status, signal) => done({ status: signal ? -1 : status, stdout, stderr: signal ? `${stderr}\n[killed by ${signal} after ${seconds} s at most]` : stderr, what }));
  });
}

/** An uncaught error's first line as Node prints it: `TypeError [CODE]: …`, or `yt [CompileError]: …` for a minified class. */
const ERROR_LINE = /^(?:[\w$]+ \[[A-Z]\w*Error\]|[A-Z]\w*Error(?: \[\w+\])?): /gm;

/**
 * A run's output from its last uncaught error on (Node prints the error's source line before it: in
 * a minified bundle, the whole program), at most 60 lines, each cut short.
 */
function tail(text: string): string {
  const error = [...text.matchAll(ERROR_LINE)].at(-1)?.index ?? 0;
  return text.slice(error).split("\n").slice(-60).map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l)).join("\n");
}

const show = (r: Outcome): string => `${r.what} exited ${r.status}:\n${tail(r.stdout)}\n${tail(r.stderr)}`;

async function ok(command: Command, cwd: string, env?: NodeJS.ProcessEnv, seconds?: number): Promise<Outcome> {
  const r = await run(command, cwd, env, seconds);
  assert.equal(r.status, 0, show(r));
  return r;
}

// ---------------------------------------------------------------------------
// the apps: each cell's own folder under one temporary folder, whose node_modules holds the unpacked
// package, its dependencies and the tools (links to test/bundlers/node_modules)

let dir: string;
let pkgExports: Record<string, unknown> = {};

/** A fresh copy of the program named `name`, with `configs` (files of test/bundlers/configs) beside it. */
function makeApp(name: string, configs: readonly string[] = [], type: "module" | "commonjs" = "module"): string {
  const at = join(dir, name);
  cpSync(APP, at, { recursive: true });
  for (const c of configs) cpSync(join(CONFIGS, c), join(at, c));
  writeFileSync(join(at, "package.json"), JSON.stringify({ name, private: true, type }, null, 2));
  return at;
}

// ---------------------------------------------------------------------------
// the reference: the program unbundled under tsx (and compiled by tsc), checked against the host

let reference: string[] = [];
let referenceRanks: string[] = [];

/** The program's results in a cell's stdout: the lines before cuda.detect()'s report. */
const resultLines = (stdout: string): string[] => stdout.split("--- detect\n")[0]!.split("\n").filter(Boolean);

/** `numbats run`'s lines, each prefixed with its rank, in rank order. */
const rankLines = (stdout: string): string[] => stdout.split("\n").filter(Boolean).sort();

// ---------------------------------------------------------------------------
// what a cell checks

/**
 * The simulator's worker threads ran blocks of the program's large launches (NUMBATS_SIM_WORKERS=2:
 * the calling thread and one worker): cuda.detect()'s report after the results has a line
 * "Simulator worker threads: 1 running of up to 1 (…), 12 block chunks run on them so far", or says
 * why launches run on the calling thread alone.
 */
function assertWorkersRan(stdout: string): void {
  const report = stdout.split("--- detect\n")[1] ?? "";
  const line = /^Simulator worker threads: .*$/m.exec(report)?.[0];
  assert.ok(line, `cuda.detect() printed no line on the simulator's worker threads:\n${report}`);
  const ran = /^Simulator worker threads: (\d+) running of up to \d+\b.*\b(\d+) block chunks? run on them/.exec(line);
  assert.ok(ran, `the simulator's worker threads did not run: ${line}`);
  assert.ok(Number(ran[1]) >= 1 && Number(ran[2]) > 0, `expected a worker thread to run chunks besides the calling thread: ${line}`);
}

/** A build without the plugin: the program stops with the advice to add it, after printing only correct results. */
function assertAdvice(r: Outcome, plugin: RegExp, printed: readonly string[]): void {
  assert.notEqual(r.status, 0, `expected a CompileError, the program ran:\n${show(r)}`);
  const said = `${r.stdout}${r.stderr}`;
  assert.match(said, /CompileError/, show(r));
  assert.match(said, /\b(minified|instrumented)\b/, show(r));
  assert.match(said, plugin, show(r));
  assert.deepEqual(printed, reference.slice(0, printed.length), "a result printed before the error differs from the unbundled program's");
}

/** The package holds `entry` ("./plugin", "./babel"): else the cell fails saying so. */
function assertShipped(entry: string): void {
  assert.ok(entry in pkgExports, `the package has no ${entry.slice(2)} entry ("numbats/${entry.slice(2)}" is not in package.json's exports): the cell needs it`);
}

// ---------------------------------------------------------------------------
// the cells

interface Cell {
  readonly name: string;
  /** files of test/bundlers/configs the app gets */
  readonly configs?: readonly string[];
  /** the package entries the cell needs ("./plugin") */
  readonly needs?: readonly string[];
  /** the build's commands, in order */
  readonly build: readonly Command[];
  /** runs what was built; prints the results on stdout, or (test runners) appends them to the file MATRIX_OUT */
  readonly run: Command;
  readonly plugin?: boolean;
  /** "reference": prints the reference; else the plugin's advice, matching this */
  readonly expect: "reference" | RegExp;
  /** results in MATRIX_OUT (jest, vitest), not on stdout */
  readonly toFile?: boolean;
}

const NODE_RUN = { MATRIX_DETECT: "1", NUMBATS_SIM_WORKERS: "2" };
const PLUGIN = /numbats\/plugin/;
const BABEL = /numbats\/babel/;
const JEST: Command = ["node", "--experimental-vm-modules", join(TOOLS, "jest", "bin", "jest.js")];
const VITEST: Command = ["vitest", "run"];

const esbuildCli = (...flags: string[]): Command => esbuild("main.ts", ...flags);
const esbuild = (entry: string, ...flags: string[]): Command => ["esbuild", entry, "--bundle", "--platform=node", "--log-level=warning", ...flags];

const CELLS: readonly Cell[] = [
  { name: "esbuild ESM, numbats inside", build: [esbuildCli("--format=esm", "--outfile=out/main.mjs")], run: ["node", "out/main.mjs"], expect: "reference" },
  { name: "esbuild CommonJS, numbats inside", build: [esbuildCli("--format=cjs", "--outfile=out/main.cjs")], run: ["node", "out/main.cjs"], expect: "reference" },
  { name: "esbuild ESM, numbats external", build: [esbuildCli("--format=esm", "--external:numbats", "--outfile=out/main.mjs")], run: ["node", "out/main.mjs"], expect: "reference" },
  { name: "esbuild CommonJS with source maps, numbats external", build: [esbuildCli("--format=cjs", "--external:numbats", "--sourcemap", "--outfile=out/main.cjs")], run: ["node", "--enable-source-maps", "out/main.cjs"], expect: "reference" },
  { name: "esbuild CommonJS with source maps, numbats inside", build: [esbuildCli("--format=cjs", "--sourcemap", "--outfile=out/main.cjs")], run: ["node", "--enable-source-maps", "out/main.cjs"], expect: "reference" },
  { name: "esbuild --minify-syntax (names kept), no plugin", build: [esbuildCli("--format=esm", "--minify-syntax", "--outfile=out/main.mjs")], run: ["node", "out/main.mjs"], expect: "reference" },
  { name: "tsup ESM", build: [["tsup", "main.ts", "--format", "esm", "--out-dir", "out", "--silent"]], run: ["node", "out/main.js"], expect: "reference" },
  { name: "tsup CommonJS", build: [["tsup", "main.ts", "--format", "cjs", "--out-dir", "out", "--silent"]], run: ["node", "out/main.cjs"], expect: "reference" },
  { name: "ncc", build: [["ncc", "build", "main.ts", "-o", "out", "--quiet"]], run: ["node", "out/index.js"], expect: "reference" },
  { name: "Vite SSR build, unminified, no plugin", configs: ["vite.ssr.config.mjs"], build: [["vite", "build", "--config", "vite.ssr.config.mjs", "--minify", "false"]], run: ["node", "out/main.js"], expect: "reference" },

  { name: "esbuild --minify with the plugin", configs: ["esbuild.build.mjs"], plugin: true, build: [["node", "esbuild.build.mjs"]], run: ["node", "out/main.mjs"], expect: "reference" },
  { name: "Rollup + terser with the plugin", configs: ["rollup.config.mjs", "rollup.plugin.config.mjs"], plugin: true, build: [["rollup", "-c", "rollup.plugin.config.mjs", "--silent"]], run: ["node", "out/main.mjs"], expect: "reference" },
  { name: "webpack production with the plugin", configs: ["webpack.build.mjs"], plugin: true, build: [["node", "webpack.build.mjs"]], run: ["node", "out/main.cjs"], expect: "reference" },
  { name: "Rspack production with the plugin", configs: ["rspack.build.mjs"], plugin: true, build: [["node", "rspack.build.mjs"]], run: ["node", "out/main.cjs"], expect: "reference" },
  { name: "Vite SSR build, minified, with the plugin", configs: ["vite.ssr.config.mjs", "vite.ssr.plugin.config.mjs"], plugin: true, build: [["vite", "build", "--config", "vite.ssr.plugin.config.mjs"]], run: ["node", "out/main.js"], expect: "reference" },
  { name: "Vite library build, minified, with the plugin", configs: ["vite.lib.config.mjs"], plugin: true, build: [["vite", "build", "--config", "vite.lib.config.mjs"]], run: ["node", "out/main.js"], expect: "reference" },
  { name: "jest --coverage with numbats/babel", configs: ["jest.config.mjs", "babel.config.cjs", "jest.test.ts"], needs: ["./babel"], plugin: true, build: [], run: JEST, toFile: true, expect: "reference" },
  { name: "vitest, istanbul coverage, with the plugin", configs: ["vitest.config.mjs", "vitest.plugin.config.mjs", "vitest.test.ts"], plugin: true, build: [], run: [...VITEST, "--config", "vitest.plugin.config.mjs"], toFile: true, expect: "reference" },

  { name: "esbuild --minify, no plugin", build: [esbuildCli("--format=esm", "--minify", "--outfile=out/main.mjs")], run: ["node", "out/main.mjs"], expect: PLUGIN },
  { name: "webpack production, no plugin", configs: ["webpack.build.mjs"], build: [["node", "webpack.build.mjs"]], run: ["node", "out/main.cjs"], expect: PLUGIN },
  { name: "Rspack production, no plugin", configs: ["rspack.build.mjs"], build: [["node", "rspack.build.mjs"]], run: ["node", "out/main.cjs"], expect: PLUGIN },
  { name: "Vite SSR build, minified, no plugin", configs: ["vite.ssr.config.mjs"], build: [["vite", "build", "--config", "vite.ssr.config.mjs"]], run: ["node", "out/main.js"], expect: PLUGIN },
  { name: "jest --coverage, no plugin", configs: ["jest.config.mjs", "babel.config.cjs", "jest.test.ts"], build: [], run: JEST, toFile: true, expect: BABEL },
  { name: "vitest, istanbul coverage, no plugin", configs: ["vitest.config.mjs", "vitest.test.ts"], build: [], run: VITEST, toFile: true, expect: PLUGIN },
];

/** Each cell's time and outcome, for the summary. */
const summary: string[] = [];
let matrixStart = 0;

async function runCell(cell: Cell, at: string): Promise<void> {
  if (cell.plugin) for (const entry of cell.needs ?? ["./plugin"]) assertShipped(entry);
  const env = cell.plugin ? { MATRIX_PLUGIN: "1" } : {};
  for (const step of cell.build) await ok(step, at, env);
  const out = join(at, "results.txt");
  writeFileSync(out, "");
  const r = await run(cell.run, at, { ...env, ...NODE_RUN, MATRIX_OUT: out });
  const printed = cell.toFile ? readFileSync(out, "utf8").split("\n").filter(Boolean) : resultLines(r.stdout);
  if (cell.expect !== "reference") return assertAdvice(r, cell.expect, printed);
  assert.equal(r.status, 0, show(r));
  assert.deepEqual(printed, reference, `${cell.name}: the results differ from the unbundled program's`);
  if (cell.toFile) return;
  assert.equal(r.stderr, "", `${cell.name}: the program wrote to stderr`);
  assertWorkersRan(r.stdout);
}

// ---------------------------------------------------------------------------

before(async () => {
  if (MISSING_TOOLS) return;
  matrixStart = performance.now();
  dir = mkdtempSync(join(tmpdir(), "numbats-bundlers-"));
  const pkgDir = installPacked(dir, LINKED);
  linkTools(join(dir, "node_modules"));
  pkgExports = (JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { exports: Record<string, unknown> }).exports;

  const ref = makeApp("reference");
  const ptx = join(dir, "ptx");
  mkdirSync(ptx);
  const tsx = join(ROOT, "node_modules", ".bin", "tsx");
  reference = resultLines((await ok([tsx, "main.ts"], ref, { PTX_OUT: ptx })).stdout);
  referenceRanks = rankLines((await ok(["node", join(pkgDir, "dist", "src", "cli.js"), "run", "-n", "2", "ranks.ts"], ref, {}, 120)).stdout);
});

after(() => {
  if (MISSING_TOOLS) return;
  if (process.env.MATRIX_KEEP) console.log(`the apps are kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  console.log(`bundler matrix: ${((performance.now() - matrixStart) / 1000).toFixed(1)} s in all, two cells at a time\n${summary.join("\n")}`);
});

test("the reference: the program unbundled under tsx prints the host's results; tsc then node prints the same; each kernel assembles with ptxas", { skip: MISSING_TOOLS }, async () => {
  checkAgainstHost(reference);
  const ref = join(dir, "reference");
  await ok([join(ROOT, "node_modules", ".bin", "tsc"), "-p", "."], ref);
  assert.deepEqual(resultLines((await ok(["node", "build/main.js"], ref)).stdout), reference);
  const ptx = readdirSync(join(dir, "ptx"));
  assert.ok(ptx.length >= 6, `PTX of ${ptx.join(", ")}`);
  if (!hasPtxas()) return;
  for (const k of ptx) ptxasCheck(readFileSync(join(dir, "ptx", k), "utf8"), "sm_80");
});

test("numbats run -n 2 of the unbundled program: each rank prints the sum over both ranks", { skip: MISSING_TOOLS }, () => {
  const a = ramp();
  const sums = Array.from({ length: BLOCKS + 1 }, (_, b) => 3 * a.subarray(b * TPB, (b + 1) * TPB).reduce((s, x) => s + x, 0));
  assert.deepEqual(referenceRanks, [0, 1].map((rank) => `[${rank}] ${JSON.stringify({ rank, of: 2, partial: sums })}`));
});

describe("the bundler matrix", { concurrency: 2, skip: MISSING_TOOLS }, () => {
  for (const cell of CELLS) {
    test(cell.name, async (t) => {
      const start = performance.now();
      let outcome = "failed";
      try {
        await runCell(cell, makeApp(cell.name.replace(/\W+/g, "-").toLowerCase(), cell.configs));
        outcome = "ok";
      } finally {
        summary.push(`  ${outcome.padEnd(6)} ${((performance.now() - start) / 1000).toFixed(1).padStart(5)} s  ${cell.name}`);
      }
    });
  }

  test("numbats run -n 2 of an esbuild ESM bundle", async () => {
    const at = makeApp("ranks-bundle");
    await ok(esbuild("ranks.ts", "--format=esm", "--outfile=out/ranks.mjs"), at);
    const r = await ok(["node", join(dir, "node_modules", "numbats", "dist", "src", "cli.js"), "run", "-n", "2", "out/ranks.mjs"], at, {}, 60);
    assert.deepEqual(rankLines(r.stdout), referenceRanks);
  });
});
