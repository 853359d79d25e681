// The build plugin's transform (src/plugin/record.ts) on TypeScript and JavaScript modules: which
// functions it records, that each record's text is the original with TypeScript's types blanked (it
// parses as JavaScript, means what esbuild makes of the TypeScript, and every character is where it
// is in the file), which free names the record's `names` holds, and the source map of the change.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Parser } from "acorn";
import { transformSync } from "esbuild";
import { TraceMap, originalPositionFor } from "@jridgewell/trace-mapping";
import { findKernels, recordKernels, type KernelSite } from "../../src/plugin/record.js";

const ROOT = "/proj";

/** A site's record, as the object its text evaluates to with the names' thunk left as text. */
interface Rec { source: string; name?: string; file: string; line: number; column: number; names: string[] }

function parseRecord(site: KernelSite): Rec {
  const names = /names: \(\) => \(\{(.*) \}\) \}$/.exec(site.record)![1]!;
  const r = Function(`return ${site.record.replace(/names: \(\) => .*\}$/, "}")}`)() as Rec;
  return { ...r, names: names.trim() ? names.trim().split(", ").map((kv) => kv.split(": ")[0]!) : [] };
}

function records(code: string, file = "/proj/src/app.ts"): Rec[] {
  const { sites, warnings } = findKernels(code, file, ROOT);
  assert.deepEqual(warnings, []);
  return sites.map(parseRecord);
}

/** The text at a record's line and column in `code`, as long as the record's source. */
function originalAt(code: string, r: Rec): string {
  const lines = code.split("\n");
  const offset = lines.slice(0, r.line - 1).reduce((n, l) => n + l.length + 1, 0) + r.column;
  return code.slice(offset, offset + r.source.length);
}

/** What esbuild makes of a function's text as TypeScript (or JavaScript), whitespace minified. */
const compiled = (fnText: string, loader: "ts" | "js") => transformSync(`(${fnText});`, { loader, minifyWhitespace: true }).code;

/** The record is the original text, types blanked: JavaScript, with the same meaning and positions. */
function assertBlankedOriginal(code: string, r: Rec): void {
  const original = originalAt(code, r);
  assert.equal(r.source.length, original.length);
  for (let i = 0; i < original.length; i++) {
    if (r.source[i] !== " ") assert.equal(r.source[i], original[i], `character ${i} of ${r.name}: ${JSON.stringify(r.source)}`);
    if (original[i] === "\n") assert.equal(r.source[i], "\n");
  }
  assert.doesNotThrow(() => Parser.parse(`(${r.source})`, { ecmaVersion: "latest" }), r.source);
  assert.equal(compiled(r.source, "js"), compiled(original, "ts"), `${r.name} means what the TypeScript means`);
}

const TS_MODULE = `import { cuda, float32, type KernelArray1 } from "numbats";
import { helper } from "./helper.js";
import type { Shape } from "./types.js";

const TPB = 16;
let unused = 0;
declare const declaredOnly: number;

function scale<T extends number>(x: T, k?: number): number {
  return (x as number) * (k ?? 2) satisfies number;
}
export const scaleDev = cuda.jit(scale, { device: true });

const square = (v: number): number => v * v;

export const add = cuda.jit(<T,>(
  a: KernelArray1<number>,
  out: Float32Array,
  n: number = TPB as number,
): void => {
  const sm = cuda.shared.array(TPB, float32);
  let z!: number;
  const t = cuda.threadIdx.x;
  sm[t] = a[t]! + helper(t) + (<number>Math.PI);
  cuda.syncthreads();
  z = square(sm[t]!);
  out[t] = scale<number>(z) + Number.EPSILON;
}, { env: { square, TPB, cube: (u: number): number => u * u * u, named: function namedFn(this: unknown, w: number) { return w; } } });

export const sum = cuda.reduce((a: number, b: number) => a + b);
export const ufunc = cuda.vectorize(function ufn(x: number, y: number): number { return Math.sin(x) * y; }, ["float32(float32, float32)"]);
export const gu = cuda.guvectorize((x: KernelArray1<number>, out: KernelArray1<number>) => { out[0] = x[0]!; }, ["void(float32[:], float32[:])"], "(n)->()");
`;

test("TypeScript: every function passed to numbats is recorded, its types blanked, where it is in the file", () => {
  const rs = records(TS_MODULE);
  assert.deepEqual(rs.map((r) => r.name), ["scale", "add", "square", "cube", "namedFn", "sum", "ufn", "gu"]);
  for (const r of rs) {
    assert.equal(r.file, "src/app.ts");
    assertBlankedOriginal(TS_MODULE, r);
  }
  const add = rs[1]!;
  assert.equal(add.line, 16);
  assert.equal(add.column, 28);
  // a hand-written reference for the lines with the most type syntax
  assert.equal(add.source.split("\n")[0], "    (");
  assert.equal(add.source.split("\n")[3], "  n         = TPB          ,");
  assert.equal(add.source.split("\n")[4], ")       => {");
  assert.equal(add.source.split("\n")[8], "  sm[t] = a[t]  + helper(t) + (        Math.PI);");
  const scale = rs[0]!;
  assert.equal(scale.source.split("\n")[0], "function scale                  (x   , k         )         {");
  assert.equal(scale.source.split("\n")[1], "  return (x          ) * (k ?? 2)                 ;");
  assert.match(rs[4]!.source, /^function namedFn\(               w        \)/);
});

test("names: the free names bound in the module (imports, constants, functions), not globals, locals or type-only names", () => {
  const rs = records(TS_MODULE);
  const byName = new Map(rs.map((r) => [r.name, r.names]));
  assert.deepEqual(byName.get("add"), ["TPB", "cuda", "float32", "helper", "square", "scale"]);
  assert.deepEqual(byName.get("scale"), []);
  assert.deepEqual(byName.get("sum"), []);
  assert.deepEqual(byName.get("ufn"), []);
});

test("names: an enclosing function's variables; not a name shadowed where the function is passed", () => {
  const code = `import { cuda } from "numbats";
const k = 2;
function kern(a) { a[0] = k * m; }
export function make(m) {
  return cuda.jit((a) => { a[0] = m + k; });
}
export function shadowed(k) {
  return cuda.jit(kern);
}
`;
  const rs = records(code, "/proj/src/make.js");
  assert.deepEqual(rs.map((r) => [r.name, r.names]), [[undefined, ["m", "k"]], ["kern", []]]);
});

test("the call forms: aliases, namespace imports, require, a re-exported cuda; not a shadowed or unrelated `cuda`", () => {
  const forms: [string, string, number][] = [
    ["alias", `import { cuda as c } from "numbats"; c.jit((a) => {});`, 1],
    ["namespace", `import * as nb from "numbats"; nb.cuda.jit((a) => {}); nb.cuda.reduce((a, b) => a + b);`, 2],
    ["default import", `import nb from "numbats"; nb.cuda.vectorize((x) => x);`, 1],
    ["require destructured", `const { cuda } = require("numbats"); cuda.jit(function k(a) {});`, 1],
    ["require renamed", `const { cuda: g } = require("numbats"); g.jit((a) => {});`, 1],
    ["require module", `const nb = require("numbats"); nb.cuda.jit((a) => {});`, 1],
    ["require member", `const cu = require("numbats").cuda; cu.jit((a) => {});`, 1],
    ["re-exported", `import { cuda } from "./gpu.js"; cuda.jit((a) => {});`, 1],
    ["shadowed", `import { cuda } from "numbats"; function f(cuda) { cuda.jit((a) => {}); }`, 0],
    ["other object", `import { cuda } from "numbats"; const other = { jit: (f) => f }; other.jit((a) => {});`, 0],
    ["not numbats' namespace", `import * as nb from "other"; nb.cuda.jit((a) => {});`, 0],
    ["other method", `import { cuda } from "numbats"; cuda.synchronize((a) => {});`, 0],
    ["type-only import", `import type { cuda } from "numbats"; cuda.jit((a: number) => {});`, 0],
  ];
  for (const [what, code, n] of forms) {
    assert.equal(findKernels(code, what === "type-only import" ? "/proj/m.ts" : "/proj/m.js", ROOT).sites.length, n, what);
  }
});

test("JavaScript, TSX and CommonJS modules; files that cannot hold kernels are left alone", () => {
  const js = `const { cuda } = require("numbats");\nmodule.exports = cuda.jit(function inc(a) {\n  a[cuda.grid(1)] += 1;\n});\n`;
  const [r] = records(js, "/proj/lib/inc.cjs");
  assert.equal(r!.source, "function inc(a) {\n  a[cuda.grid(1)] += 1;\n}");
  assert.deepEqual([r!.file, r!.line, r!.column, r!.names], ["lib/inc.cjs", 2, 26, ["cuda"]]);

  const tsx = `import { cuda } from "numbats";\nexport const V = () => <div>{String(cuda.jit(<T,>(a: T[]) => { a[0] = a[1]!; }))}</div>;\n`;
  const [t] = records(tsx, "/proj/src/view.tsx");
  assert.equal(t!.source, "    (a     ) => { a[0] = a[1] ; }");

  assert.equal(recordKernels(`export const x = 1;`, "/proj/a.ts", ROOT).code, undefined, "no numbats");
  assert.equal(recordKernels(`import { cuda } from "numbats"; cuda.jit((a) => {});`, "/proj/a.css", ROOT).code, undefined, "not a script");
  assert.equal(findKernels(`import { cuda } from "numbats"; cuda.jit((a) => {});`, "/elsewhere/a.js", ROOT).sites.length, 1);
  assert.equal(parseRecord(findKernels(`import { cuda } from "numbats"; cuda.jit((a) => {});`, "/elsewhere/a.js?v=3", ROOT).sites[0]!).file, "/elsewhere/a.js");
});

test("a module the parser cannot read is left alone with a warning", () => {
  const { sites, warnings } = findKernels(`import { cuda } from "numbats"; cuda.jit((a) => { a[0] = ; });`, "/proj/bad.js", ROOT);
  assert.equal(sites.length, 0);
  assert.match(warnings[0]!, /^numbats: \/proj\/bad\.js was not searched for kernels: Unexpected token/);
});

test("the transformed module runs: each function carries its record, names() reads the module's bindings, the rest is unchanged", async () => {
  const code = `import { cuda } from "./fake-cuda.js";
const TPB = 8;
function dev(x: number): number { return x + TPB; }
export const k = cuda.jit((a: number[]) => { a[0] = dev(a[0]!) * TPB; }, { env: { dev, TPB } });
export const d = cuda.jit(dev, { device: true });
`;
  const out = recordKernels(code, "/proj/src/k.ts", ROOT);
  assert.ok(out.code !== undefined);
  const js = transformSync(out.code, { loader: "ts", format: "esm" }).code;
  const fake = `const cuda = { jit: (f, o) => ({ f, o }) };`;
  const mod = await import(`data:text/javascript,${encodeURIComponent(js.replace(/import \{ cuda \} from "\.\/fake-cuda\.js";/, fake))}`);
  const rec = mod.k.f[Symbol.for("numbats.source")];
  assert.equal(rec.name, "k");
  assert.deepEqual(Object.keys(rec.names()), ["dev", "TPB"]);
  assert.equal(rec.names().dev, mod.d.f);
  assert.equal(rec.names().TPB, 8);
  assert.equal(mod.k.o.env.dev, mod.d.f, "env's shorthand `dev` is still the function");
  assert.equal(mod.k.o.env.TPB, 8);
  assert.equal(mod.d.f[Symbol.for("numbats.source")].name, "dev");
  const a = [1];
  mod.k.f(a);
  assert.deepEqual(a, [72], "the wrapped function is the function");
});

test("the source map maps the transformed module back to the original positions", () => {
  const code = `import { cuda } from "numbats";\nconst k = cuda.jit((a: number[]) => {\n  a[0] = 1;\n});\nconst after = 42;\n`;
  const out = recordKernels(code, "/proj/src/m.ts", ROOT);
  assert.ok(out.code !== undefined);
  const map = new TraceMap(out.map as unknown as ConstructorParameters<typeof TraceMap>[0]);
  const lines = out.code.split("\n");
  for (const [text, line, column] of [["a[0] = 1", 3, 2], ["const after", 5, 0], ["(a: number[])", 2, 19]] as const) {
    const genLine = lines.findIndex((l) => l.includes(text));
    const pos = originalPositionFor(map, { line: genLine + 1, column: lines[genLine]!.indexOf(text) });
    assert.deepEqual([pos.line, pos.column], [line, column], text);
  }
});

test("a module that imports numbats: its other top-level functions are recorded where declared; a module that does not, none", () => {
  const code = `import { float32 } from "numbats";\nexport function kern(a: Float32Array) { a[0] = float32(a[1]!); }\nexport const twice = (x: number) => 2 * x;\nconst view = () => <b/>;\n`;
  const { sites, appended } = findKernels(code, "/proj/src/k.tsx", ROOT);
  assert.equal(sites.length, 0);
  assert.equal(appended.length, 2, "kern and twice; the JSX function is host code and left alone");
  assert.match(appended[0]!, /^\(\(f, r\) => .*\)\(kern, \{ source: "function kern\(a              \) \{ a\[0\] = float32\(a\[1\] \); \}", name: "kern", file: "src\/k\.tsx", line: 2, column: 7, names: \(\) => \(\{ float32: float32 \}\) \}\);\n$/);
  assert.match(appended[1]!, /\(twice, \{ source: "\(x        \) => 2 \* x", name: "twice"/);
  assert.deepEqual(findKernels(`export function kern(a) { a[0] = cuda.grid(1); }`, "/proj/src/k.js", ROOT).appended, []);
});
