// Unknown names and members in kernels name numbats' spelling of a Numba name
// (snake_case → camelCase, and a few renames) or a known name a misspelling is close to.

import assert from "node:assert/strict";
import { test } from "node:test";
import { compileToIR } from "../../src/compiler/index.js";
import { arrayType } from "../../src/dtypes.js";
import { CompileError } from "../../src/errors.js";

const F32 = arrayType("float32", 1, "C");

/** The problem messages of compiling a kernel, in source order. */
function problems(fn: Function, env: Record<string, unknown> = {}): string[] {
  try {
    compileToIR(fn, [F32], { env });
  } catch (e) {
    if (e instanceof CompileError) return e.problems.map((p) => p.message);
    throw e;
  }
  return assert.fail("expected a CompileError");
}

test("Numba spellings of in-kernel names: numbats' camelCase name, and cuda.atomic.compare_and_swap → cuda.atomic.cas", () => {
  const k = new Function("a", `
    a[0] = cuda.shfl_down_sync(0xffffffff, a[0], 1);
    a[1] = cuda.syncthreads_count(a[1] > 0);
    cuda.atomic.compare_and_swap(a, 0, 1, 2);
    const c = cuda.const.array_like(a);
    a[2] = cuda.random.xoroshiro128p_uniform_float32(a, 0);
    cuda.threadfence_block();
  `);
  assert.deepEqual(problems(k), [
    "'cuda.shfl_down_sync' is not supported in kernels; numbats spells it cuda.shflDownSync",
    "'cuda.syncthreads_count' is not supported in kernels; numbats spells it cuda.syncthreadsCount",
    "'cuda.atomic.compare_and_swap' is not supported in kernels; numbats spells it cuda.atomic.cas",
    "'cuda.const.array_like' is not supported in kernels; numbats spells it cuda.const.arrayLike",
    "'cuda.random.xoroshiro128p_uniform_float32' is not supported in kernels; numbats spells it cuda.random.xoroshiro128pUniformFloat32",
    "'cuda.threadfence_block' is not supported in kernels; numbats spells it cuda.threadfenceBlock",
  ]);
});

test("host API inside a kernel, Numba-spelled or not, says to call it before the launch", () => {
  const k = new Function("a", "const d = cuda.to_device(a); const e = cuda.deviceArray(4, float32);");
  assert.deepEqual(problems(k), [
    "'cuda.to_device' is host API (numbats spells it cuda.toDevice): kernels cannot call it; call it before the launch and pass the result as an argument",
    "'cuda.deviceArray' is host API: kernels cannot call it; call it before the launch and pass the result as an argument",
  ]);
});

test("misspellings close to a known name: members, Python's math, locals, env and device names", () => {
  const k = new Function("a", `
    cuda.syncthreds();
    a[0] = Math.fabs(a[0]);
    a[1] = Math.sqr(a[1]);
    a[1] = math.sqrt(a[2]);
    const total = a[3];
    a[2] = totl;
    a[2] = scal;
    a[3] = cuda.frobnicate(a[0]);
  `);
  assert.deepEqual(problems(k, { scale: 2 }).map((m) => m.replace(/:[^]*$/, "")), [
    "'cuda.syncthreds' is not supported in kernels; did you mean cuda.syncthreads?",
    "'Math.fabs' is not supported in kernels; numbats spells it Math.abs",
    "'Math.sqr' is not supported in kernels; did you mean Math.sqrt?",
    "unknown name 'math' (did you mean 'Math'?)",
    "unknown name 'totl' (did you mean 'total'?)",
    "unknown name 'scal' (did you mean 'scale'?)",
    "'cuda.frobnicate' is not supported in kernels",
  ]);
});

test("Python built-ins called in a kernel name what a numbats kernel writes, with the call's own argument", () => {
  const k = new Function("a", `
    const n = len(a);
    for (const i of range(n)) a[i] = 0;
    a[2] = abs(a[2]);
    a[0] = max(a[0], a[1]);
    a[1] = float(n);
    print(a[0]);
  `);
  assert.deepEqual(problems(k).map((m) => m.replace(/ \(did you mean.*$/, "")), [
    "unknown name 'len': Python's len(a) is a.length in a kernel (a.shape[k] for dimension k of an N-d array)",
    "unknown name 'range': Python's range(n) is a counted loop in a kernel: for (let i = 0; i < n; i++)",
    "unknown name 'abs': Python's abs(a[2]) is Math.abs(a[2]) in a kernel",
    "unknown name 'max': Python's max(a[0], a[1]) is Math.max(a[0], a[1]) in a kernel",
    "unknown name 'float': Python's float(n) is float64(n) in a kernel",
    "unknown name 'print': Python's print(a[0]) is console.log(a[0]) in a kernel",
  ]);
  // a local of that name is what it names, not Python's
  const local = new Function("a", "const len = 2; a[0] = len(a);");
  assert.throws(() => compileToIR(local, [F32]), (e: unknown) => e instanceof Error && /not callable/.test(e.message) && !/Python/.test(e.message));
});
