// The package build's records of numbats' own kernel-language functions (scripts/build.ts, through the build plugin's src/plugin/record.ts): each
// is the .ts text with only TypeScript's syntax blanked, at the .ts file's positions; it parses as
// JavaScript, and its names are module-level bindings the compiled module has. (That a minified bundle
// of the package computes what the unminified one does is tested in package.test.ts.)

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import * as acorn from "acorn";
import { topLevelFunctions } from "../../src/plugin/record.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MODULES = readdirSync(join(ROOT, "src", "mathlib")).filter((f) => f.endsWith(".ts") && f !== "index.ts").map((f) => `src/mathlib/${f}`);

/** The records numbats' package build attaches to `module`'s functions (scripts/build.ts). */
const recordedFunctions = (module: string) => topLevelFunctions(readFileSync(join(ROOT, module), "utf8"), join(ROOT, module), ROOT);

test("every math library function's record: the .ts text at its position with types blanked, JavaScript, its free names bound in the module", async () => {
  let functions = 0;
  for (const module of MODULES) {
    const ts = readFileSync(join(ROOT, module), "utf8");
    const lineStarts = [0, ...[...ts.matchAll(/\n/g)].map((m) => m.index + 1)];
    const compiled = (await import(join(ROOT, module))) as Record<string, unknown>;
    for (const f of recordedFunctions(module)) {
      functions++;
      const at = lineStarts[f.line - 1]! + f.column;
      const original = ts.slice(at, at + f.source.length);
      // only blanked, nothing moved: each character is the file's, or a space where the file has more
      for (let i = 0; i < f.source.length; i++) {
        if (f.source[i] !== original[i]) assert.equal(f.source[i], " ", `${module} ${f.name}: offset ${i} is '${f.source[i]}', the file has '${original[i]}'`);
      }
      assert.doesNotThrow(() => acorn.parse(`(${f.source})`, { ecmaVersion: "latest" }), `${module} ${f.name} parses as JavaScript`);
      assert.equal(typeof compiled[f.name], "function", `${module} exports ${f.name}`);
      for (const n of f.names) assert.ok(new RegExp(`\\b${n}\\b`).test(f.source), `${f.name} uses ${n}`);
    }
  }
  // the blanked syntax is what tsc removes: a parameter's type, say
  const [exp64] = recordedFunctions("src/mathlib/exp.ts").filter((f) => f.name === "__exp64");
  assert.match(exp64!.source, /^function __exp64\(x {8}\) {9}\{/);
  assert.deepEqual(exp64!.names, ["__expk", "__f64hi"]);
  assert.ok(functions > 100, `${functions} functions`);
});
