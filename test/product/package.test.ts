// The package as users install it (test/helpers/packed.ts), and one program of kernels
// (test/package/) run from an ES-module app and a CommonJS app every way such
// apps load it: tsc then node, tsx, esbuild bundles with and without source
// maps. Every run must print the results the host computes here.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
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
