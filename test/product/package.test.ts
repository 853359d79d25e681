// The package as users install it (test/helpers/packed.ts), and one program of kernels
// (test/package/) run from an ES-module app and a CommonJS app every way such
// apps load it: tsc then node, tsx, esbuild bundles with and without source
// maps. Every run must print the results the host computes here.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { BLOCKS, ONES, ROWS, TABLE, matrix, ramp, samples, table } from "../package/inputs.js";
import { extractUnits } from "../helpers/doc-blocks.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { ROOT, installPacked } from "../helpers/packed.js";

const PROGRAM = join(ROOT, "test", "package");
const BIN = join(ROOT, "node_modules", ".bin");
/** what the unpacked package needs at run time and the apps' tsc at compile time */
const LINKED = ["acorn", "koffi", "@types/node"];

let dir: string;
let pkgDir: string;
const app = { esm: "", cjs: "" };

function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, what: `${[cmd, ...args].join(" ")} (in ${cwd})` };
}

/** Runs and requires exit status 0; returns stdout. */
function ok(cmd: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): string {
  const r = run(cmd, args, cwd, env);
  assert.equal(r.status, 0, `${r.what} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

function makeApp(name: string, type: "module" | "commonjs"): string {
  const at = join(dir, name);
  cpSync(PROGRAM, at, { recursive: true });
  writeFileSync(join(at, "package.json"), JSON.stringify({ name, private: true, type }, null, 2));
  return at;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), "numbats-package-"));
  // both apps live under `dir`: its node_modules serves them
  pkgDir = installPacked(dir, LINKED);
  app.esm = makeApp("esm-app", "module");
  app.cjs = makeApp("cjs-app", "commonjs");
});

after(() => rmSync(dir, { recursive: true, force: true }));

// ---------------------------------------------------------------------------
// the results the program must print, computed on the host

const f32 = Math.fround;

function expected(): unknown {
  const m = matrix();
  const ends = Array.from({ length: ROWS }, (_, r) => f32(m[r * 1000]! + m[r * 1000 + 999]!));
  const a = ramp();
  const reversed = Array.from({ length: BLOCKS * 1000 }, (_, i) => a[i - (i % 1000) + 999 - (i % 1000)]!);
  const t = table();
  // the fraction of a float32 is exact; float32 × int32 is a float32 product (C++ promotion)
  const found = Array.from(samples(), (x) => t[Math.floor(f32((x - Math.floor(x)) * TABLE))]!);
  return { sum: ONES, ends, reversed, found };
}

const EXPECTED = expected();

/** The program's one JSON line, compared with the host's results. */
function checkOutput(stdout: string, what: string): void {
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 1, `${what}: expected one line of results, got:\n${stdout.slice(0, 2000)}`);
  assert.deepEqual(JSON.parse(lines[0]!), EXPECTED, what);
}

// ---------------------------------------------------------------------------

test("the tarball holds the built package, its license and docs, and no TypeScript sources", () => {
  const files = execFileSync("find", [".", "-type", "f"], { cwd: pkgDir, encoding: "utf8" }).split("\n").filter(Boolean);
  for (const f of ["./LICENSE", "./README.md", "./package.json", "./dist/src/index.js", "./dist/src/index.d.ts", "./dist/src/cli.js"]) {
    assert.ok(files.includes(f), `${f} is not in the package`);
  }
  assert.match(readFileSync(join(pkgDir, "LICENSE"), "utf8"), /^MIT License\n\nCopyright \(c\) 2026 the numbats contributors\n/);
  assert.deepEqual(files.filter((f) => /\.ts$/.test(f) && !f.endsWith(".d.ts")), []);
});

test("every source map in the package embeds the sources it names", () => {
  const maps = readdirSync(join(pkgDir, "dist", "src"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js.map"));
  assert.ok(maps.length > 20, `only ${maps.length} source maps`);
  for (const f of maps) {
    const map = JSON.parse(readFileSync(join(pkgDir, "dist", "src", f), "utf8")) as { sources: string[]; sourcesContent?: (string | null)[] };
    assert.equal(map.sourcesContent?.length, map.sources.length, `${f}: no sourcesContent`);
    assert.ok(map.sourcesContent!.every((s) => typeof s === "string" && s.length > 0), `${f}: a source is missing`);
  }
});

test("a stack trace through the package under --enable-source-maps names its TypeScript lines", () => {
  const program = `import { cuda } from "numbats";
    const k = cuda.jit((a) => { a[0] = 1; });
    try { k.configure(0, 1)(new Float32Array(1)); } catch (e) { console.log(e.stack); }`;
  const stack = ok(process.execPath, ["--enable-source-maps", "--input-type=module", "--eval", program], app.esm, { NUMBATS_TARGET: "sim" });
  const top = /node_modules\/numbats\/(src\/\S+?\.ts):(\d+):\d+/.exec(stack);
  assert.ok(top, `no frame in the package's TypeScript sources:\n${stack}`);
  // the file is not shipped: its text is in the map of the .js beside it, and the frame's line there throws
  const map = JSON.parse(readFileSync(join(pkgDir, "dist", top[1]!.replace(/\.ts$/, ".js.map")), "utf8")) as { sourcesContent: string[] };
  const line = map.sourcesContent[0]!.split("\n")[Number(top[2]) - 1]!;
  assert.match(line, /\bthrow new LaunchError\(/, `${top[0]}`);
});

test("a launch error names an arrow-function kernel after its binding, with where it was made and launched: plain JavaScript, and TypeScript under tsx", () => {
  const program = [
    `import { cuda } from "numbats";`,
    `const add = cuda.jit((a) => { a[0] += 1; });`,
    `try { add.configure(1, 2048)(new Float32Array(1)); } catch (e) { console.log(e.message.split("\\n").at(-1)); }`,
  ].join("\n");
  writeFileSync(join(app.esm, "named.mjs"), program);
  writeFileSync(join(app.esm, "named.ts"), program.replace("(a)", "(a: Float32Array)"));
  const where = (file: string) => `  kernel 'add' (made at ${file}:2), launched at ${file}:3\n`;
  assert.equal(ok(process.execPath, ["named.mjs"], app.esm, { NUMBATS_TARGET: "sim" }), where("named.mjs"));
  assert.equal(ok(join(BIN, "tsx"), ["named.ts"], app.esm, { NUMBATS_TARGET: "sim" }), where("named.ts"));
});

test("ES-module app: tsc --strict then node", () => {
  ok(join(BIN, "tsc"), ["-p", "."], app.esm);
  checkOutput(ok(process.execPath, ["build/main.js"], app.esm), "tsc + node");
});

test("ES-module app: tsx (and each kernel's PTX assembles with ptxas)", () => {
  const ptxDir = join(dir, "ptx");
  mkdirSync(ptxDir);
  checkOutput(ok(join(BIN, "tsx"), ["main.ts"], app.esm, { PTX_OUT: ptxDir }), "tsx");
  const kernels = readdirSync(ptxDir);
  assert.deepEqual(kernels.sort(), ["lookup.ptx", "reverseBlocks.ptx", "rowEnds.ptx", "total.ptx"]);
  if (!hasPtxas()) return;
  for (const k of kernels) ptxasCheck(readFileSync(join(ptxDir, k), "utf8"), "sm_80");
});

test("ES-module app: an esbuild bundle, without and with source maps", () => {
  ok(join(BIN, "esbuild"), ["main.ts", "--bundle", "--platform=node", "--format=esm", "--outfile=bundle.mjs", "--log-level=warning"], app.esm);
  checkOutput(ok(process.execPath, ["bundle.mjs"], app.esm), "esbuild bundle");
  ok(join(BIN, "esbuild"), ["main.ts", "--bundle", "--platform=node", "--format=esm", "--sourcemap", "--outfile=mapped.mjs", "--log-level=warning"], app.esm);
  checkOutput(ok(process.execPath, ["--enable-source-maps", "mapped.mjs"], app.esm), "esbuild bundle with source maps");
});

test("CommonJS app: tsc --strict then node (require() of the package)", () => {
  ok(join(BIN, "tsc"), ["-p", "."], app.cjs);
  assert.match(readFileSync(join(app.cjs, "build", "kernels.js"), "utf8"), /require\("numbats"\)/, "tsc emitted CommonJS");
  checkOutput(ok(process.execPath, ["build/main.js"], app.cjs), "CommonJS tsc + node");
});

test("CommonJS app: tsx", () => {
  checkOutput(ok(join(BIN, "tsx"), ["main.ts"], app.cjs), "CommonJS tsx");
});

test("CommonJS app: require() and import() give the one instance of the package, without warnings", () => {
  const program = `const n = require("numbats");
    import("numbats").then((m) => console.log(typeof n.cuda.jit, m.cuda === n.cuda, m.Kernel === n.Kernel));`;
  const r = run(process.execPath, ["--eval", program], app.cjs);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "function true true\n");
  assert.equal(r.stderr, "", "require() of the package prints nothing");
});

test("tsc --strict rejects a mistyped launch: a Float64Array for a Float32Array, a missing argument", () => {
  const r = run(join(BIN, "tsc"), ["--noEmit", "--strict", "--module", "nodenext", "--target", "es2022", "--types", "node", "bad-launch.ts"], app.esm);
  const errors = r.stdout.split("\n").filter((l) => /error TS\d+/.test(l)).map((l) => /^bad-launch\.ts\((\d+),\d+\): error (TS\d+)/.exec(l)?.slice(1).join(" ") ?? l);
  assert.deepEqual(errors, ["5 TS2345", "6 TS2554"], r.stdout);
  assert.notEqual(r.status, 0);
});

/** TypeScript 5.9 (the repository's) and 7 (installed apart in test/ts7 by .ci/run), each as `node <script>`. */
const COMPILERS = [
  { name: "TypeScript 5.9", script: join(ROOT, "node_modules", "typescript", "bin", "tsc") },
  { name: "TypeScript 7", script: join(ROOT, "test", "ts7", "node_modules", "typescript", "bin", "tsc") },
];

for (const compiler of COMPILERS) {
  test(`a tsc --init project (${compiler.name}): the README's kernels type-check after the one tsconfig line the README shows`, (t) => {
    if (!existsSync(compiler.script)) return t.skip(`${compiler.name} is not installed: npm ci --prefix test/ts7`);
    const at = mkdtempSync(join(dir, "tsc-init-"));
    writeFileSync(join(at, "package.json"), JSON.stringify({ name: "init-app", private: true, type: "module" }));
    ok(process.execPath, [compiler.script, "--init"], at);
    const units = extractUnits("README.md", readFileSync(join(ROOT, "README.md"), "utf8"));
    units.forEach((unit, k) => writeFileSync(join(at, `readme${k}.ts`), unit.map((s) => s.code).join("\n")));
    const errors = () => {
      const r = run(process.execPath, [compiler.script, "-p", ".", "--noEmit", "--pretty", "false"], at);
      return r.stdout.split("\n").filter((l) => / error TS\d+:/.test(l));
    };
    // as generated: only noUncheckedIndexedAccess's `number | undefined` stands in the way
    const before = errors();
    assert.ok(before.length > 0, "tsc --init's defaults reject a[i] in kernels (else the README's advice is stale)");
    for (const e of before) assert.match(e, /undefined/, `an error other than noUncheckedIndexedAccess's:\n${before.join("\n")}`);
    // the README's line, applied as a user would
    const line = /```json\n(.*"noUncheckedIndexedAccess".*)\n```/.exec(readFileSync(join(ROOT, "README.md"), "utf8"))?.[1];
    assert.ok(line, "the README shows the tsconfig line");
    const config = readFileSync(join(at, "tsconfig.json"), "utf8");
    assert.match(config, /^\s*"noUncheckedIndexedAccess": true,$/m);
    writeFileSync(join(at, "tsconfig.json"), config.replace(/"noUncheckedIndexedAccess": true,/, line.trim()));
    assert.deepEqual(errors(), []);
  });
}

// ---------------------------------------------------------------------------
// numbats inside a bundle: its own files (worker threads, the math library), programs in test/fixtures/bundled

const BUNDLED = join(ROOT, "test", "fixtures", "bundled");

/** Bundles `program` (test/fixtures/bundled) with numbats inside into `app.esm`; returns the bundle's name. esbuild must say nothing. */
function bundle(program: string, format: "esm" | "cjs", ...flags: string[]): string {
  cpSync(join(BUNDLED, program), join(app.esm, program));
  const out = `${program.replace(/\.mjs$/, "")}.${flags.length ? "min." : ""}bundle.${format === "esm" ? "mjs" : "cjs"}`;
  const r = run(join(BIN, "esbuild"), [program, "--bundle", "--platform=node", `--format=${format}`, ...flags, `--outfile=${out}`, "--log-level=warning"], app.esm);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, "", `esbuild warns of nothing in numbats (import.meta is empty in CommonJS):\n${r.stderr}`);
  return out;
}

/** `cuda.detect()`'s line on the simulator's worker threads. */
const workersLine = (stdout: string) => /^Simulator worker threads: (.*)$/m.exec(stdout)?.[1];

test("esbuild bundles to CommonJS and ESM, numbats inside: no warning, and the simulator's worker threads run inside the bundle", () => {
  const want = ok(process.execPath, [join(BUNDLED, "workers.mjs")], app.esm, { NUMBATS_TARGET: "sim", NUMBATS_SIM_WORKERS: "1" }).split("\n")[0];
  assert.equal(want, JSON.stringify([1, 1999, 2 * ((2 ** 20 - 1) % 1000) + 1]));
  for (const format of ["cjs", "esm"] as const) {
    const r = run(process.execPath, [bundle("workers.mjs", format)], app.esm, { NUMBATS_TARGET: "sim", NUMBATS_SIM_WORKERS: "2" });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, "", `${format}: nothing on stderr`);
    assert.equal(r.stdout.split("\n")[0], want, format);
    const line = workersLine(r.stdout);
    const m = /^1 running of up to 1 \(.*\), (\d+) block chunks run on them so far$/.exec(line ?? "");
    assert.ok(m && Number(m[1]) > 0, `${format}: the worker ran blocks: ${line}`);
  }
});

test("an esbuild --minify bundle of numbats: Math.exp/sin/pow/tanh/atan2 and cuda.random in a kernel give the unbundled results (and the kernel assembles with ptxas)", () => {
  const ptxDir = mkdtempSync(join(dir, "ptx-"));
  const want = ok(process.execPath, [join(BUNDLED, "math.mjs")], app.esm, { NUMBATS_TARGET: "sim", PTX_OUT: ptxDir });
  assert.match(want, /^\[(-?\d[\d.e+-]*,){3}-?\d+\]\n$/, "finite results");
  for (const format of ["esm", "cjs"] as const) {
    assert.equal(ok(process.execPath, [bundle("math.mjs", format, "--minify")], app.esm, { NUMBATS_TARGET: "sim" }), want, format);
  }
  if (hasPtxas()) ptxasCheck(readFileSync(join(ptxDir, "math.ptx"), "utf8"), "sm_80");
});

/** `numbats run -n 2` of the package's CLI on `program` in `cwd`. */
const runRanks = (program: string, cwd: string, cli = join(pkgDir, "dist", "src", "cli.js")) =>
  run(process.execPath, [cli, "run", "-n", "2", program], cwd, { NUMBATS_TARGET: "sim", NUMBATS_DIST_TIMEOUT: "120" });

test("numbats run -n 2 on esbuild ESM and CommonJS bundles of a program with an allReduce", () => {
  for (const format of ["esm", "cjs"] as const) {
    const r = runRanks(bundle("ranks.mjs", format), app.esm);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split("\n").sort(), ["[0] [3,30]", "[1] [3,30]"], format);
  }
});

test("numbats' worker scripts lost: one line on stderr and cuda.detect() say why, launches run on the calling thread; numbats run fails fast with the reason", () => {
  // a copy of the package without its worker scripts, nor the modules they could fall back to
  const broken = join(dir, "broken");
  const modules = join(broken, "node_modules");
  cpSync(pkgDir, join(modules, "numbats"), { recursive: true });
  for (const dep of ["acorn", "koffi"]) symlinkSync(join(ROOT, "node_modules", dep), join(modules, dep));
  const runtime = join(modules, "numbats", "dist", "src");
  writeFileSync(join(runtime, "workers", "worker-sources.js"), "export const WORKER_SOURCES = {};\n");
  rmSync(join(runtime, "backends", "sim", "runtime", "sim-worker.js"));
  rmSync(join(runtime, "distributed", "store-worker.js"));
  for (const p of ["workers.mjs", "ranks.mjs"]) cpSync(join(BUNDLED, p), join(broken, p));

  const r = run(process.execPath, ["workers.mjs"], broken, { NUMBATS_TARGET: "sim", NUMBATS_SIM_WORKERS: "2" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.split("\n")[0], JSON.stringify([1, 1999, 2 * ((2 ** 20 - 1) % 1000) + 1]));
  const why = /numbats' sim-worker thread cannot start: numbats was built without its worker scripts .* their module \S+sim-worker\.js is not there/.source;
  assert.match(r.stderr, new RegExp(`^numbats: the simulator runs launches on the calling thread without worker threads: ${why}.*\n$`));
  assert.match(workersLine(r.stdout) ?? "", new RegExp(`^0 running; launches run on the calling thread alone: ${why}`));
  assert.match(ok(process.execPath, [join(runtime, "cli.js"), "-s"], broken, { NUMBATS_TARGET: "sim" }), new RegExp(`Simulator workers : 0 running; .*${why}`));

  const t0 = Date.now();
  const ranks = runRanks("ranks.mjs", broken, join(runtime, "cli.js"));
  assert.notEqual(ranks.status, 0);
  assert.match(ranks.stderr, /Error: numbats' store-worker thread cannot start: numbats was built without its worker scripts .* their module \S+store-worker\.js is not there/);
  assert.ok(Date.now() - t0 < 30_000, `failed fast, not after NUMBATS_DIST_TIMEOUT: ${Date.now() - t0} ms`);
});
