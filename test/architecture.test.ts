// Imports run one way. The source is in layers, lowest first:
//   leaf      dtypes.ts and records.ts (dtypes), errors.ts, ndarray.ts (host N-d arrays), the numeric
//             helpers fp.ts (exact floating point) and half.ts (float16, bfloat16), and launch-abi.ts
//             (what a compiled kernel is handed at a launch)
//   mathlib   the device math library and random draws, written in the kernel language
//   compiler  source → typed IR → passes
//   targets   IR → PTX, IR → the simulator's JavaScript
//   runtime   devices, memory, streams, launching (the driver through koffi; the simulator)
//   host      the public API: cuda.ts, kernel.ts, reduce, ufuncs, the command line, distributed
// A module may import from its own layer and the layers below it; the test fails on any import that
// points up.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

const LAYERS = ["leaf", "mathlib", "compiler", "targets", "runtime", "host"] as const;
type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer {
  if (["dtypes.ts", "records.ts", "errors.ts", "ndarray.ts", "fp.ts", "half.ts", "launch-abi.ts"].includes(file)) return "leaf";
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

function upwardEdges(): string[] {
  const edges: string[] = [];
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    for (const spec of importsOf(readFileSync(path, "utf8"))) {
      const target = normalize(join(dirname(file), spec)).replace(/\.js$/, ".ts");
      if (LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(layerOf(file))) edges.push(`${file} -> ${target}`);
    }
  }
  return edges.sort();
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
});
