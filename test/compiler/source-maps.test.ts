// Error excerpts and PTX line info point at the file the user wrote, whatever ran it: tsx, an esbuild
// bundle with its source map (loaded by node --enable-source-maps or not), plain node on hand-written
// JS. With no map at all, a bundle's own lines are quoted when readable, else the function's own text.
// Each case is a real program run in a child process.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
mkdirSync(join(root, "tmp"), { recursive: true });
const dir = mkdtempSync(join(root, "tmp", "source-maps-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A program with a kernel that does not type (line 5) and one compiled with lineinfo (lines 8-10). */
const program = (from: string, ts: boolean) => {
  const t = (annotation: string) => (ts ? annotation : "");
  return `import { cuda } from ${JSON.stringify(from)};

const bad = (a${t(": Float32Array")}, n${t(": number")})${t(": void")} => {
  const i${t(": number")} = cuda.grid(1);
  if (i < n) a[i] = a.length.foo;
};
const scale = (a${t(": Float32Array")}, n${t(": number")})${t(": void")} => {
  const i${t(": number")} = cuda.grid(1);
  if (i < n) {
    a[i] = a[i]${t("!")} * 2;
  }
};
let error${t(": any")};
try { cuda.jit(bad, { signature: "void(float32[:], int32)" }); } catch (e) { error = e; }
const ptx = cuda.jit(scale, { lineinfo: true, signature: "void(float32[:], int32)" }).inspectAsm();
console.log(JSON.stringify({ message: error.message, file: error.file, line: error.line, column: error.column, sourceLine: error.sourceLine, ptx }));
`;
};

interface Seen { message: string; file?: string; line: number; column: number; sourceLine: string; ptx: string }

function run(script: string, nodeFlags: string[] = []): Seen {
  const r = spawnSync(process.execPath, [...nodeFlags, script], { cwd: root, encoding: "utf8", env: { ...process.env, NUMBATS_TARGET: "sim" } });
  assert.equal(r.status, 0, r.stderr);
  const seen = JSON.parse(r.stdout) as Seen;
  if (hasPtxas()) ptxasCheck(seen.ptx, "sm_80");
  return seen;
}

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function bundle(entry: string, out: string, flags: string[]): string {
  const outfile = join(dir, out);
  execFileSync(join(root, "node_modules", ".bin", "esbuild"), [entry, "--bundle", "--platform=node", "--format=esm", "--external:koffi", `--outfile=${outfile}`, "--log-level=warning", ...flags]);
  return outfile;
}

const userTs = write("user.ts", program("../../src/index.ts", true));
const shown = (path: string) => relative(root, path);

/** The error and the `.loc` lines are at `file`'s lines `badLine` and `scaleLine` (1-based), quoting them. */
function assertInFile(seen: Seen, path: string, badLine: number, scaleLine: number): void {
  const lines = readFileSync(path, "utf8").split("\n");
  assert.equal(seen.file, shown(path), seen.message);
  assert.equal(seen.line, badLine);
  assert.equal(seen.sourceLine, lines[badLine - 1]);
  assert.ok(seen.sourceLine.slice(seen.column).startsWith("foo"), seen.message);
  assert.ok(seen.message.includes(`(in 'bad' at ${shown(path)} line ${badLine}, column ${seen.column + 1})\n${badLine} | ${lines[badLine - 1]}\n`), seen.message);
  assert.match(seen.ptx, new RegExp(`^\\.file 1 "${shown(path).replace(/[.\\\\]/g, "\\$&")}"$`, "m"));
  assert.match(seen.ptx, new RegExp(`^\\s*\\.loc 1 ${scaleLine} \\d+$`, "m"));
  for (const [, l] of seen.ptx.matchAll(/\.loc 1 (\d+) /g)) assert.ok(Math.abs(Number(l) - scaleLine) <= 2, `.loc line ${l} is not in 'scale'`);
}

test("tsx: errors and .loc name the .ts file and its lines (the types tsx removed included)", () => {
  assertInFile(run(userTs, ["--import", "tsx"]), userTs, 5, 10);
});

test("an esbuild bundle with --sourcemap under node --enable-source-maps: the original .ts file", () => {
  assertInFile(run(bundle(userTs, "mapped.mjs", ["--sourcemap"]), ["--enable-source-maps"]), userTs, 5, 10);
});

test("a bundle with --sourcemap run without --enable-source-maps: the map its comment names, beside it or inline", () => {
  assertInFile(run(bundle(userTs, "unloaded.mjs", ["--sourcemap"])), userTs, 5, 10);
  assertInFile(run(bundle(userTs, "inline.mjs", ["--sourcemap=inline"])), userTs, 5, 10);
});

test("a bundle whose map names sources that are gone: the map's sourcesContent is quoted", () => {
  const out = bundle(userTs, "moved.mjs", ["--sourcemap", "--sources-content=true"]);
  const map = JSON.parse(readFileSync(`${out}.map`, "utf8")) as { sources: string[] };
  const i = map.sources.findIndex((s) => s.endsWith("user.ts"));
  map.sources[i] = map.sources[i]!.replace(/user\.ts$/, "moved-away.ts");
  writeFileSync(`${out}.map`, JSON.stringify(map));
  const seen = run(out);
  assert.equal(seen.file, shown(join(dir, "moved-away.ts")), seen.message);
  assert.equal(seen.line, 5);
  assert.equal(seen.sourceLine, readFileSync(userTs, "utf8").split("\n")[4]);
});

test("a readable bundle with no source map: its own file and lines, where Node's stack traces point", () => {
  const out = bundle(userTs, "plain.mjs", []);
  const lines = readFileSync(out, "utf8").split("\n");
  const lineOf = (re: RegExp) => lines.findIndex((l) => re.test(l)) + 1;
  assertInFile(run(out), out, lineOf(/a\.length\.foo/), lineOf(/a\[\w+\] \* 2/));
});

test("a minified bundle with no source map: the function's own text, not a line thousands of characters long", () => {
  const seen = run(bundle(userTs, "min.mjs", ["--minify-whitespace"]));
  assert.equal(seen.file, undefined, seen.message);
  assert.equal(seen.line, 1);
  assert.ok(seen.sourceLine.length < 100 && seen.sourceLine.slice(seen.column).startsWith("foo"), seen.message);
  assert.ok(seen.message.includes(`(in 'bad' at line 1, column ${seen.column + 1})\n1 | ${seen.sourceLine}\n`), seen.message);
  // .loc lines count from the function's first line, in a file named after the kernel
  assert.match(seen.ptx, /^\.file 1 "scale\.ts"$/m);
  assert.match(seen.ptx, /^\s*\.loc 1 1 \d+$/m);
});

test("plain node on hand-written JavaScript: the file's own lines", () => {
  const lib = bundle(join(root, "src", "index.ts"), "numbats.mjs", []);
  const user = write("user.mjs", program(`./${relative(dir, lib)}`, false));
  assertInFile(run(user), user, 5, 10);
});
