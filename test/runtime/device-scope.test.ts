// Device functions are found by name in the kernel's own module first (the file that called
// cuda.jit), else when exactly one module registered the name; several candidates are an error
// naming where each was made. Two helper modules register clashing names. Every kernel launched
// here runs on the simulator against a host reference and its PTX goes through ptxas.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compileToIR } from "../../src/compiler/index.js";
import { arrayType } from "../../src/dtypes.js";
import { CompileError } from "../../src/errors.js";
import { cuda } from "../../src/index.js";
import { isOwnFile, resolveDeviceFunction } from "../../src/device-functions.js";
import type { Kernel } from "../../src/kernel.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import * as moduleA from "../fixtures/devices/module-a.js";
import { squareAll } from "../fixtures/devices/module-a.js";
import { twice as twiceOfB } from "../fixtures/devices/module-b.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

// this module's own `square` (module-a and module-b register one each too)
const square = cuda.jit(function square(x: number) {
  return x + 0.5;
}, { device: true });
void square;

const cube = cuda.jit((x: number) => x * x * x, { device: true }); // an arrow function: named by its binding
void cube;
const [cubed] = [cuda.jit((x: number) => x * x * x, { device: true })]; // no name, and bound to none the call's line shows
void cubed;

const F64 = arrayType("float64", 1, "C");
const INPUT = [1, 2, 3, 4.5];

/** Runs a one-array kernel on [1, 2, 3, 4.5] and checks its PTX with ptxas; returns the array. */
function run(k: Kernel): number[] {
  const a = new Float64Array(INPUT);
  k.configure(1, 4)(a);
  if (hasPtxas()) {
    const ptx = emitPtx(compileToIR(k.fn, [F64], { ...k.options, name: k.name, resolveDeviceFunction }), { computeCapability: [8, 0] }).text;
    ptxasCheck(ptx, "sm_80");
    ptxasCheck(ptx, "sm_90");
  }
  return [...a];
}

const compileError = (k: Kernel): CompileError => {
  try { k.compile("void(float64[::1])"); } catch (e) { if (e instanceof CompileError) return e; throw e; }
  assert.fail("expected a CompileError");
};

/** `test/fixtures/devices/FILE:LINE` of the line of FILE holding `text`. */
function placeOf(file: string, text: string): string {
  const path = join("test", "fixtures", "devices", file);
  return `${path}:${readFileSync(path, "utf8").split("\n").findIndex((l) => l.includes(text)) + 1}`;
}

test("a kernel calls the device function of its own module, though other modules register the name too", () => {
  const k = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = square(a[i]); });
  assert.deepEqual(run(k), INPUT.map((x) => x + 0.5));
  // module-a's kernel calls module-a's square
  assert.deepEqual(run(squareAll as unknown as Kernel), INPUT.map((x) => x * x));
});

test("a name that only one other module registered is found, by its function's name or by options.name", () => {
  const k = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = decrement(onlyInA(a[i])); });
  assert.deepEqual(run(k), INPUT.map((x) => x + 100 - 1));
});

test("a device function called through its module's namespace, as tsc's CommonJS output and `import * as` write it", () => {
  const viaNamespace = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = moduleA.onlyInA(a[i]); });
  assert.deepEqual(run(viaNamespace), INPUT.map((x) => x + 100));
  const asTscWrites = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = (0, moduleA.onlyInA)(a[i]); });
  assert.deepEqual(run(asTscWrites), INPUT.map((x) => x + 100));
});

// as an esbuild bundle writes `const halve = cuda.jit(function halve(x) …)`: it renames the inner name
const halve = cuda.jit(function halve2(x: number) {
  return x / 2;
}, { device: true });
void halve;

test("a device function a bundler renamed (halve -> halve2) is found by the name its module called it", () => {
  const k = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = halve(a[i]); });
  assert.deepEqual(run(k), INPUT.map((x) => x / 2));
});

test("a name two other modules registered is a CompileError listing where each was made; env picks one", () => {
  const k = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = twice(a[i]); });
  const err = compileError(k);
  assert.match(err.message, /'twice' names 2 device functions, made at /);
  assert.ok(err.message.includes(`${placeOf("module-a.ts", "function twice")} and ${placeOf("module-b.ts", "function twice")}`), err.message);
  assert.match(err.message, /options\.env \(cuda\.jit\(fn, \{ env: \{ twice \} \}\)\)/);
  const picked = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = twice(a[i]); }, { env: { twice: twiceOfB } });
  assert.deepEqual(run(picked), INPUT.map((x) => 2 * x + 1));
});

test("an arrow function made a device function is named by the binding of its cuda.jit call", () => {
  const k = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = cube(a[i]); });
  assert.deepEqual(run(k), INPUT.map((x) => x * x * x));
});

test("a device function with no name and no binding on its line: the error says so and shows both fixes", () => {
  const k = cuda.jit((a: Float64Array) => { a[0] = cubed(a[0]); });
  const err = compileError(k);
  const here = fileURLToPath(import.meta.url);
  const line = readFileSync(here, "utf8").split("\n").findIndex((l) => l.startsWith("const [cubed] = [cuda.jit(")) + 1;
  assert.match(err.message, /^unknown name 'cubed'/);
  assert.ok(err.message.includes(`the device function made at test/runtime/device-scope.test.ts:${line} has no name`), err.message);
  assert.ok(err.message.includes("cuda.jit(kernel, { env: { cubed } })"), err.message);
  assert.ok(err.message.includes(`cuda.jit(fn, { device: true, name: "cubed" })`), err.message);
  const fixed = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = cubed(a[i]); }, { env: { cubed } });
  assert.deepEqual(run(fixed), INPUT.map((x) => x * x * x));
});

test("options.name names a kernel in its PTX entry and in errors; it must be an identifier", () => {
  const k = cuda.jit((a: Float64Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = 2 * a[i]; }, { name: "doubleAll" });
  assert.deepEqual(run(k), INPUT.map((x) => 2 * x));
  assert.match(k.inspectAsm(), /\.visible \.entry doubleAll\(/);
  // WARP_SZ is PTX's one predefined plain name
  const w = cuda.jit((a: Float64Array) => { a[0] = 1; }, { name: "WARP_SZ" });
  assert.deepEqual(run(w), [1, ...INPUT.slice(1)]);
  assert.match(w.inspectAsm(), /\.visible \.entry k_WARP_SZ\(/);
  const bad = cuda.jit((a: Float64Array) => { a[0] = unknownThing; }, { name: "namedKernel" });
  assert.match(compileError(bad).message, /\(in 'namedKernel' at /);
  assert.throws(() => cuda.jit((a: Float64Array) => { a[0] = 1; }, { name: "two words" }), (e: unknown) =>
    e instanceof TypeError && e.message === `options.name of a kernel must be a JavaScript identifier; got "two words"`);
});

test("a ufunc's scalar function sees the device functions of the module that made the ufunc", () => {
  const addHalf = cuda.vectorize((x: number) => square(x));
  const out = addHalf(new Float64Array(INPUT)) as Float64Array;
  assert.deepEqual([...out], INPUT.map((x) => x + 0.5));
  if (hasPtxas()) for (const k of addHalf.kernels) ptxasCheck(k.inspectAsm(), "sm_90");
});

test("numbats' own stack frames are those under its package root's src/ and dist/ (paths or file URLs) and an installed copy", () => {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  assert.ok(isOwnFile(join(root, "src", "kernel.ts")));
  assert.ok(isOwnFile(join(root, "dist", "src", "kernel.js")));
  assert.ok(isOwnFile(pathToFileURL(join(root, "dist", "src", "cuda.js")).href));
  assert.ok(isOwnFile(join("/app", "node_modules", "numbats", "src", "kernel.ts")));
  assert.ok(!isOwnFile(fileURLToPath(import.meta.url)));
  assert.ok(!isOwnFile(join(root, "examples", "saxpy.ts")));
});

declare const decrement: (x: number) => number;
declare const onlyInA: (x: number) => number;
declare const twice: (x: number) => number;
declare const unknownThing: number;
