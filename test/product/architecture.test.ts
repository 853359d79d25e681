// Imports run one way. The source is in layers, lowest first:
//   leaf      dtypes.ts and records.ts (dtypes), errors.ts, ndarray.ts (host N-d arrays), the numeric
//             helpers fp.ts (exact floating point) and half.ts (float16, bfloat16), abi/launch-abi.ts
//             (what a compiled kernel is handed at a launch), module-file.ts (where numbats' own files
//             are) and workers/ (how numbats starts a thread on one of its own modules)
//   mathlib   the device math library and random draws, written in the kernel language
//   compiler  source → typed IR → passes
//   abi       what a back end is handed: abi/backend.ts (the Backend contract: compile typed IR, run it)
//             and abi/kernel-info.ts (the few facts of a kernel a back end's runtime reads); the launch
//             ABI (abi/launch-abi.ts) and kernel errors (abi/kernel-errors.ts) are leaves
//   backends  one folder per back end, backends/X/: its target (IR → code) and its runtime, and the
//             list of back ends (backends/index.ts); a back end's part of the public API, backends/X/host/,
//             and backends/communicators.ts are in the host layer
//   runtime   device arrays, streams, target selection, launch arguments, over whichever back end runs
//   host      the public API: cuda.ts, kernel.ts, reduce, ufuncs, the command line, distributed
// A module may import from its own layer and the layers below it; the test fails on any import that
// points up.
//
// A back end is its folder: no module outside src/backends/X/ names back end X, but the lists of back
// ends (src/backends/index.ts, src/backends/communicators.ts); target selection (src/runtime/select.ts)
// is a policy over the first list and names none.
// To name X is to import a module under backends/X/ (statically or with import()), or to compare a
// target's, back end's or buffer's name or kind with the string "X" (`backend.name === "X"`,
// `buffer.kind !== "X"`, `info.target === "X"`: a `.name`, `.kind` or `.target` read off a variable,
// so that a syntax node's `(node as SyntaxNode).name === "cuda"`, the kernel language's `cuda`
// namespace, is not a back end): the ways code outside a back end would depend on which one runs.
// Everything else asks the Backend contract (abi/backend.ts) or selection.
//
// Nor do imports run in circles (type-only imports count: a cycle of types still ties the modules'
// designs together): there are none.
//
// And a module over 600 lines says why it is one module, in a line of the comment it starts with:
// "One file over 600 lines: …".
//
// And no two modules export a declaration of one name (a reader, or an editor's auto-import, takes one
// for the other), but the few listed below, each with its reason.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

const LAYERS = ["leaf", "mathlib", "compiler", "abi", "backends", "runtime", "host"] as const;
type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer {
  if (["dtypes.ts", "records.ts", "errors.ts", "ndarray.ts", "fp.ts", "half.ts", "module-file.ts", "abi/launch-abi.ts", "abi/kernel-errors.ts"].includes(file)) return "leaf";
  if (file.startsWith("workers/")) return "leaf";
  if (file === "backends/communicators.ts" || /^backends\/[^/]+\/host\//.test(file)) return "host";
  const top = file.split("/")[0]!;
  return (LAYERS as readonly string[]).includes(top) ? (top as Layer) : "host";
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []);
}

/** Relative module specifiers of every import and re-export, type-only ones included. */
function importsOf(text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)].map((m) => m[1]!);
}

/** Every module under src (relative path) and the modules it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    graph.set(file, importsOf(readFileSync(path, "utf8")).map((spec) => normalize(join(dirname(file), spec)).replace(/\.js$/, ".ts")));
  }
  return graph;
}

function upwardEdges(): string[] {
  const edges: string[] = [];
  for (const [file, targets] of importGraph()) {
    for (const target of targets) {
      if (LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(layerOf(file))) edges.push(`${file} -> ${target}`);
    }
  }
  return edges.sort();
}

/** The import cycles of `graph`: its strongly connected sets of more than one module (Tarjan's algorithm), each sorted. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], onStack = new Set<string>(), found: string[] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const members: string[] = [];
    let w: string;
    do { w = stack.pop()!; onStack.delete(w); members.push(w); } while (w !== v);
    if (members.length > 1) found.push(members.sort().join(" "));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found.sort();
}

test("layers: every import points to the module's own layer or below", () => {
  const edges = upwardEdges();
  assert.deepEqual(edges, [], `imports that point up a layer (${LAYERS.join(" < ")}):\n${edges.join("\n")}`);
});

test("layers: the classification sees every kind of import", () => {
  // a sample of real edges, so a regex that matched nothing could not pass the test above
  const text = `import { a } from "../x.js";\nimport type {\n  B,\n} from "./y.js";\nexport { c } from "../../z.js";\n`;
  assert.deepEqual(importsOf(text), ["../x.js", "./y.js", "../../z.js"]);
  assert.equal(layerOf("compiler/lower.ts"), "compiler");
  assert.equal(layerOf("fp.ts"), "leaf");
  assert.equal(layerOf("kernel.ts"), "host");
  assert.equal(layerOf("distributed/communicator.ts"), "host");
  assert.equal(layerOf("abi/backend.ts"), "abi");
  assert.equal(layerOf("backends/sim/runtime/sim.ts"), "backends");
  assert.equal(layerOf("backends/cuda/host/nccl-comm.ts"), "host");
});

/** The back ends: the folders of src/backends. */
const BACKENDS = readdirSync(join(SRC, "backends"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);

/** The modules that list the back ends, and may name each. */
const BACKEND_LISTS = ["backends/index.ts", "backends/communicators.ts"];

/** The back ends `text` (the module `file`) names: by importing one of their modules, or by comparing a name or kind with theirs. */
function namedBackends(file: string, text: string): string[] {
  const specs = [...text.matchAll(/\b(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => normalize(join(dirname(file), m[1]!)));
  return BACKENDS.filter((x) =>
    specs.some((target) => target.startsWith(`backends/${x}/`)) ||
    new RegExp(`[\\w$]\\.(?:target|name|kind)\\s*[!=]==\\s*"${x}"|"${x}"\\s*[!=]==\\s*[\\w$.?]+\\.(?:target|name|kind)\\b`).test(text));
}

test("back ends: no module outside src/backends/X names back end X, but the lists of back ends", () => {
  const naming: string[] = [];
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    if (BACKEND_LISTS.includes(file)) continue;
    const own = /^backends\/([^/]+)\//.exec(file)?.[1];
    const named = namedBackends(file, readFileSync(path, "utf8")).filter((x) => x !== own);
    if (named.length > 0) naming.push(`${file} names ${named.join(", ")}`);
  }
  assert.deepEqual(naming, [], `modules outside a back end's folder that name it:\n${naming.join("\n")}`);
});

test("back ends: naming is an import of a back end's module or a comparison with its name", () => {
  assert.ok(BACKENDS.includes("cuda") && BACKENDS.includes("sim"), "the back ends are found");
  assert.deepEqual(namedBackends("runtime/x.ts", `import { a } from "../backends/cuda/driver/device.js";`), ["cuda"]);
  assert.deepEqual(namedBackends("x.ts", `const m = () => import("./backends/sim/host/sim-comm.js");`), ["sim"]);
  assert.deepEqual(namedBackends("x.ts", `if (backend.name === "cuda") f();`), ["cuda"]);
  assert.deepEqual(namedBackends("x.ts", `if ("sim" !== buf.kind) f();`), ["sim"]);
  // the kernel language's \`cuda\` namespace is not the back end
  assert.deepEqual(namedBackends("x.ts", `if (importedName(s) === "cuda" || (p as Node).name === "cuda") found.add(s); const CUDA = ns("cuda", {});`), []);
  assert.deepEqual(namedBackends("x.ts", `import { b } from "./abi/backend.js";`), []);
});

/** The comment a module starts with: its lines up to the first that is not a comment. */
const headerOf = (text: string): string => text.slice(0, text.search(/^(?!\/\/)/m));

test("size: every module over 600 lines says at its top why it is one module (\"One file over 600 lines: …\")", () => {
  const unexplained = sourceFiles(SRC).filter((path) => {
    const text = readFileSync(path, "utf8");
    return text.split("\n").length > 600 && !/^\/\/ One file over 600 lines: \S/m.test(headerOf(text));
  }).map((path) => relative(SRC, path));
  assert.deepEqual(unexplained, [], `modules over 600 lines whose header does not say why:\n${unexplained.join("\n")}`);
});

test("size: the header is the leading comment", () => {
  assert.equal(headerOf("// a\n//\n// b\n\nimport x;\n// c\n"), "// a\n//\n// b\n");
});

test("cycles: no two modules import each other, directly or through others (type-only imports too)", () => {
  const found = cycles(importGraph());
  assert.deepEqual(found, [], `import cycles (modules that import each other, directly or not):\n${found.join("\n")}`);
});

test("cycles: the search finds a cycle through several modules and nothing in a chain", () => {
  const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts", "d.ts"]], ["d.ts", []], ["e.ts", ["d.ts"]]]);
  assert.deepEqual(cycles(graph), ["a.ts b.ts c.ts"]);
  assert.deepEqual(cycles(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
});

test("bundles: no name kernels use (cuda, the dtypes) is also a top-level name of another module", async () => {
  // a bundler that puts two top-level bindings of one name in one scope renames one of them, and a
  // kernel that says `cuda.grid(1)` of a `cuda` renamed `cuda2` no longer compiles
  const { BUILTINS } = await import("../../src/compiler/builtins.js");
  const exported = Object.keys(await import("../../src/index.js"));
  const publicNames = new Set(exported.filter((name) => Object.hasOwn(BUILTINS, name)));
  assert.ok(publicNames.has("cuda") && publicNames.has("float32"), "the kernel-visible public names are found");
  const declaredIn = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    for (const [, name] of readFileSync(path, "utf8").matchAll(/^(?:export\s+)?(?:const|let|var|function\*?|class)\s+([\w$]+)/gm)) {
      if (publicNames.has(name!)) declaredIn.set(name!, [...(declaredIn.get(name!) ?? []), relative(SRC, path)]);
    }
  }
  const twice = [...declaredIn].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(", ")}`);
  assert.deepEqual(twice, [], `names kernels use, declared at the top level of more than one module:\n${twice.join("\n")}`);
});

/** Names two modules declare and export on purpose, and why. */
const SAME_NAME_ALLOWED: Readonly<Record<string, string>> = {
  atomic: "each target's emitter of the IR's atomic operation (PTX instructions; the simulator's runtime call)",
  bitcast: "each target's reinterpretation of a scalar's bits (PTX mov.b; the simulator's runtime)",
  viewAs: "each target's view of an array's bytes as another dtype (array.view)",
  convert: "a dtype conversion, in the compiler (typed IR) and in the PTX target (cvt), the same operation at two levels",
};

/** Modules that stand in for another in the browser build (scripts/browser.ts): they export its names by design. */
const STAND_INS = /^browser\/(?:node\/|no-cuda\.ts$|workers\.ts$)/;

/** The names `text` declares and exports (re-exports are not declarations). */
const exportedDeclarations = (text: string): string[] =>
  [...text.matchAll(/^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:const|let|var|function\*?|class|type|interface|enum)\s+([\w$]+)/gm)].map((m) => m[1]!);

test("names: no two modules export a declaration of one name, but the per-target ones listed with their reason", () => {
  const declaredIn = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    if (STAND_INS.test(file)) continue;
    for (const name of exportedDeclarations(readFileSync(path, "utf8"))) declaredIn.set(name, [...(declaredIn.get(name) ?? []), file]);
  }
  const twice = [...declaredIn].filter(([name, files]) => files.length > 1 && !Object.hasOwn(SAME_NAME_ALLOWED, name)).map(([name, files]) => `${name}: ${files.join(", ")}`);
  assert.deepEqual(twice, [], `names exported by more than one module (rename one, or list it in SAME_NAME_ALLOWED with the reason):\n${twice.join("\n")}`);
  const stale = Object.keys(SAME_NAME_ALLOWED).filter((name) => (declaredIn.get(name)?.length ?? 0) < 2);
  assert.deepEqual(stale, [], "allowed names no longer declared twice (drop them from the list)");
});

test("names: the scan sees every kind of exported declaration and no re-export", () => {
  const text = "export type A = 1;\nexport interface B {}\nexport function* c() {}\nexport abstract class D {}\nexport const e = 1;\nexport { f } from \"./f.js\";\nconst g = 1;\n";
  assert.deepEqual(exportedDeclarations(text), ["A", "B", "c", "D", "e"]);
  assert.ok(STAND_INS.test("browser/node/path.ts") && !STAND_INS.test("browser/index.ts"));
});
