// The docs stand alone and stay true:
// - every ```ts block of README.md and docs/*.md type-checks under `tsc --strict` as a user's
//   program (test/docs/tsconfig.json: "numbats" resolves to src/index.ts), and under TypeScript 7
//   (the native compiler, installed apart in test/ts7 by .ci/run) when it is installed. A block right after a line
//   `<!-- continued -->` is checked together with the ts block before it in the same file;
//   anything that is not TypeScript is fenced as ```sh or ```text;
// - no doc points to a file users do not have;
// - docs/api is what `npm run docs:api` generates from the current source.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { CONTINUED, extractUnits, type Unit } from "../helpers/doc-blocks.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const require = createRequire(import.meta.url);

const DOCS = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
/** The dev tools' READMEs (tools/*), which must stand alone too. */
const TOOL_DOCS = readdirSync(join(root, "tools"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `tools/${e.name}/README.md`);

// ---------------------------------------------------------------------------
// checking them

/** A compiler's command line: `node <script>`, for TypeScript 5.9 and 7 alike. */
interface Compiler { readonly name: string; readonly script: string }

/** The script a package's `bin` entry names, or undefined when the package is not installed. */
function binScript(pkg: string, bin: string): string | undefined {
  try {
    const pkgPath = require.resolve(`${pkg}/package.json`);
    const script = (JSON.parse(readFileSync(pkgPath, "utf8")) as { bin?: Record<string, string> }).bin?.[bin];
    return script ? join(pkgPath, "..", script) : undefined;
  } catch {
    return undefined;
  }
}

const tsc: Compiler = { name: "tsc", script: binScript("typescript", "tsc")! };

/** TypeScript 7's compiler, installed apart in test/ts7 (both versions install a `tsc` command). */
function findTs7(): Compiler | undefined {
  const script = join(root, "test/ts7/node_modules/typescript/bin/tsc");
  return existsSync(script) ? { name: "TypeScript 7", script } : undefined;
}

/**
 * Type-checks each unit as its own module; returns the errors as `doc:line: message`, positioned
 * in the markdown file. The files live under the repository (tmp/ is ignored by git) so that
 * `types: ["node"]` and the package's `"type": "module"` apply as they do in a user's project.
 */
function typeCheck(units: readonly Unit[], compiler: Compiler): string[] {
  mkdirSync(join(root, "tmp"), { recursive: true });
  const dir = mkdtempSync(join(root, "tmp", "doc-blocks-"));
  try {
    const files = units.map((unit, k) => {
      const name = `block${k}.ts`;
      writeFileSync(join(dir, name), unit.map((s) => s.code).join("\n"));
      return name;
    });
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: relative(dir, join(root, "test/docs/tsconfig.json")), files }));
    const r = spawnSync(process.execPath, [compiler.script, "-p", dir, "--pretty", "false"], { cwd: root, encoding: "utf8" });
    const output = `${r.stdout}${r.stderr}`.trim();
    if (r.status === 0) return [];
    const errors = output.split("\n").filter((l) => / error TS\d+:/.test(l)).map((l) => locate(l, units));
    return errors.length ? errors : [`${compiler.name} failed: ${output}`];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `tmp/doc-blocks-x/block3.ts(7,5): error TS2304: …` → `docs/x.md:41: TS2304: …` (other files' errors as they are). */
function locate(line: string, units: readonly Unit[]): string {
  const m = /doc-blocks-[^/\\]*[/\\]block(\d+)\.ts\((\d+),\d+\): error (TS\d+: .*)$/.exec(line);
  if (!m) return line;
  let at = Number(m[2]);
  for (const s of units[Number(m[1])]!) {
    const n = s.code.split("\n").length;
    if (at <= n) return `${s.doc}:${s.line + at - 1}: ${m[3]}`;
    at -= n;
  }
  return line;
}

const docUnits = () => DOCS.flatMap((doc) => extractUnits(doc, readFileSync(join(root, doc), "utf8")));

test("README.md and docs/*.md: every ts code block type-checks under tsc --strict", () => {
  const units = docUnits();
  assert.ok(units.length >= 20, `found only ${units.length} ts blocks`);
  const errors = typeCheck(units, tsc);
  assert.deepEqual(errors, [], `code blocks that do not type-check:\n${errors.join("\n")}`);
});

test("README.md and docs/*.md: every ts code block type-checks under TypeScript 7", (t) => {
  const ts7 = findTs7();
  if (!ts7) {
    t.skip("TypeScript 7 is not installed: npm ci --prefix test/ts7");
    return;
  }
  const errors = typeCheck(docUnits(), ts7);
  assert.deepEqual(errors, [], `code blocks that do not type-check under TypeScript 7:\n${errors.join("\n")}`);
});

test("the block checker reports a wrong block at its line in the markdown file, continued blocks included", () => {
  const markdown = [
    "# t", "", "```ts", "const a: number = 1;", "```", "", "Prose.", "", CONTINUED, "", "```ts",
    "const b: string = a;", "```", "", "```sh", "not typescript", "```", "", "```ts", "export const c: boolean = 0;", "```",
  ].join("\n");
  const units = extractUnits("t.md", markdown);
  assert.deepEqual(units.map((u) => u.map((s) => s.line)), [[4, 12], [20]]);
  for (const compiler of [tsc, findTs7()].filter((c) => c !== undefined)) {
    const errors = typeCheck(units, compiler);
    assert.equal(errors.length, 2, `${compiler.name}: ${errors.join("\n")}`);
    assert.match(errors[0]!, /^t\.md:12: TS2322: Type 'number' is not assignable to type 'string'/, compiler.name);
    assert.match(errors[1]!, /^t\.md:20: TS2322: Type 'number' is not assignable to type 'boolean'/, compiler.name);
  }
});

// ---------------------------------------------------------------------------
// links

/** The prose lines of a markdown text (code blocks blanked, inline code removed), by line number. */
function proseLines(markdown: string): string[] {
  let inFence = false;
  return markdown.split("\n").map((l) => {
    if (/^```/.test(l)) { inFence = !inFence; return ""; }
    return inFence ? "" : l.replace(/`[^`]*`/g, "");
  });
}

test("README.md, docs/*.md and the tools' READMEs point only to files users have", () => {
  const problems: string[] = [];
  for (const doc of [...DOCS, ...TOOL_DOCS]) {
    const markdown = readFileSync(join(root, doc), "utf8");
    markdown.split("\n").forEach((text, i) => {
      if (/\bSPEC\b/.test(text)) problems.push(`${doc}:${i + 1}: cites SPEC, which users do not have`);
      if (/(^|[\s(`/])shared\/(notes|tools|gpu)\//.test(text)) problems.push(`${doc}:${i + 1}: points into shared/, outside the repository`);
    });
    proseLines(markdown).forEach((text, i) => {
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
        if (!existsSync(join(root, doc, "..", target!))) problems.push(`${doc}:${i + 1}: links to ${target}, which does not exist`);
      }
    });
  }
  assert.deepEqual(problems, []);
});

// ---------------------------------------------------------------------------
// the API reference

/** Every file under `dir` with its contents, by relative path. */
function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

test("docs/api is current: what `npm run docs:api` generates from the source", () => {
  mkdirSync(join(root, "tmp"), { recursive: true });
  const dir = mkdtempSync(join(root, "tmp", "docs-api-"));
  try {
    const r = spawnSync(process.execPath, [binScript("typedoc", "typedoc")!, "--out", dir, "--logLevel", "Error"], { cwd: root, encoding: "utf8" });
    assert.equal(r.status, 0, `typedoc failed:\n${r.stdout}${r.stderr}`);
    const fresh = readTree(dir);
    const committed = existsSync(join(root, "docs/api")) ? readTree(join(root, "docs/api")) : new Map<string, string>();
    const stale = [...new Set([...fresh.keys(), ...committed.keys()])].filter((f) => fresh.get(f) !== committed.get(f)).sort();
    assert.deepEqual(stale, [], `docs/api is out of date (run npm run docs:api); files that differ: ${stale.join(", ")}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
