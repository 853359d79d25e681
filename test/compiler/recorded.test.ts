// A function's recorded source (what numbats' build plugin attaches before a minifier renames and
// rewrites the code): the compiler parses the record, resolves the free names it spells through the
// recorded bindings, and places errors and line info at the record's file and line.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, float32, int32, CompileError } from "../../src/index.js";
import { hasPtxas, ptxasCheck, PTXAS_TARGETS } from "../helpers/ptxas.js";

const RECORD = Symbol.for("numbats.source");

/** Attaches a record to `fn` (as the build plugin's wrapper does) and returns `fn`. */
function recorded<F extends Function>(fn: F, record: object): F {
  Object.defineProperty(fn, RECORD, { value: record, configurable: true });
  return fn;
}

// What a minifier leaves of `import { cuda, float32 } from "numbats"` and of a device function `twice`.
const ct = cuda, ft = float32;
const e = ct.jit(recorded((n: number) => n * 2, { source: "function twice(n) { return n * 2; }", name: "twice", file: "src/helpers.ts", line: 3, column: 0 }), { device: true });

/** A kernel as a minifier printed it, with the record of the source the user wrote (types as spaces). */
function minifiedKernel(extra = "", names: () => Record<string, unknown> = () => ({ cuda: ct, float32: ft, twice: e })) {
  const minified = function (t: Float32Array, r: Float32Array) { const n = ct.grid(1); n < t.length && (r[n] = ft(e(t[n]!) + 1)); };
  const source = [
    "function scaleAll(a              , out              ) {",
    "  const i = cuda.grid(1);",
    `  if (i < a.length) out[i] = float32(twice(a[i]) + 1)${extra};`,
    "}",
  ].join("\n");
  return recorded(minified, { source, name: "scaleAll", file: "src/kernels.ts", line: 12, column: 2, names });
}

test("a recorded kernel compiles from its record: renamed bindings resolve by what they denote", () => {
  const k = cuda.jit(minifiedKernel());
  const a = new Float32Array([1, 2, 3.5]), out = new Float32Array(3);
  k.configure(1, 4)(a, out);
  assert.deepEqual([...out], [...a].map((x) => Math.fround(x * 2 + 1)));
  assert.equal(k.name, "scaleAll");
  if (hasPtxas()) for (const { arch, computeCapability } of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(undefined, { computeCapability }), arch);
});

test("errors point at the record's file, line and column, quoting the record where the file is not here", () => {
  const k = cuda.jit(minifiedKernel(" + later"));
  assert.throws(() => k.configure(1, 1)(new Float32Array(1), new Float32Array(1)), (err: unknown) => {
    assert.ok(err instanceof CompileError);
    const m = String(err.message);
    assert.match(m, /unknown name 'later'/);
    assert.match(m, /src\/kernels\.ts line 14, column 57/);
    assert.match(m, /14 \|   if \(i < a\.length\) out\[i\] = float32\(twice\(a\[i\]\) \+ 1\) \+ later;/);
    return true;
  });
});

test("a recorded binding that is no device function, dtype or cuda means nothing: the name resolves as without a record", () => {
  const k = cuda.jit(minifiedKernel(" + N", () => ({ cuda: ct, float32: ft, twice: e, N: 5 })));
  assert.throws(() => k.configure(1, 1)(new Float32Array(1), new Float32Array(1)), /unknown name 'N'.*env: \{ N \}/s);
  const withEnv = cuda.jit(minifiedKernel(" + N", () => ({ cuda: ct, float32: ft, twice: e, N: 5 })), { env: { N: 7 } });
  const out = new Float32Array(1);
  withEnv.configure(1, 1)(new Float32Array([1]), out);
  assert.equal(out[0], 10);
});

test("bindings not yet initialised when the kernel compiles: resolved by name as without a record, read again at the next compile", () => {
  let ready = false;
  const names = () => { if (!ready) throw new ReferenceError("Cannot access 'e' before initialization"); return { cuda: ct, float32: ft, twice: e }; };
  const early = cuda.jit(minifiedKernel("", names));
  // `cuda` and `float32` resolve as built-ins and `twice` as the device function registered under its recorded name
  const out = new Float32Array(1);
  early.configure(1, 1)(new Float32Array([2]), out);
  assert.equal(out[0], 5);
  ready = true;
  const out64 = new Float64Array(1);
  // another signature compiles again (the kernel's TypeScript type says float32 arrays; the compiler takes any)
  (early.configure(1, 1) as unknown as (...args: Float64Array[]) => void)(new Float64Array([3]), out64);
  assert.equal(out64[0], 7);
});

test("a malformed record is ignored: the function's own text compiles", () => {
  const k = cuda.jit(recorded(function (a: Int32Array) { a[0] = int32(41) + 1; }, { source: 42, file: "x.ts", line: 1, column: 0 }));
  const a = new Int32Array(1);
  k.configure(1, 1)(a);
  assert.equal(a[0], 42);
});
