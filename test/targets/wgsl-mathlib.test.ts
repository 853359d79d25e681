// The math library on float32 (numbats' own, inlined into the IR) compiles to WGSL without float64,
// but for the functions listed in FLOAT64_INSIDE, whose float32 versions still compute in float64 in
// part (Payne–Hanek reduction of huge arguments in sin/cos/tan; pow and hypot): on WebGPU those are
// subset errors until the math library has float32-only versions.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { arrayType } from "../../src/dtypes.js";
import { cuda } from "../../src/index.js";
import { emitWgsl } from "../../src/backends/webgpu/wgsl/index.js";
import { ADAPTERS } from "./wgsl-dawn.js";

const F32 = arrayType("float32", 1, "C");
const UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp", "exp2", "expm1",
  "log", "log2", "log10", "log1p", "sqrt", "cbrt", "floor", "ceil", "round", "trunc", "sign", "abs", "fround"];
const BINARY = ["atan2", "pow", "hypot", "min", "max"];
const FLOAT64_INSIDE = ["sin", "cos", "tan", "pow", "hypot"];

/** the subset error of Math.f on float32 arguments, or undefined when it compiles */
function errorOf(f: string, arity: number): string | undefined {
  const args = arity === 1 ? "x[i]" : "x[i], o[i]";
  const kernel = new Function("cuda", `return (x, o) => { const i = cuda.grid(1); o[i] = Math.${f}(${args}); }`)(cuda) as Function;
  try {
    emitWgsl(compileToIR(kernel, [F32, F32], { name: f, resolveDeviceFunction }), ADAPTERS.lavapipe);
    return undefined;
  } catch (e) {
    return (e as Error).message.split("\n")[0];
  }
}

test("Math.* on float32 compiles to WGSL without float64, but for the math library's known float64 parts", (t) => {
  const failing = [...UNARY.map((f) => [f, errorOf(f, 1)] as const), ...BINARY.map((f) => [f, errorOf(f, 2)] as const)].filter(([, e]) => e !== undefined);
  for (const [f, e] of failing) t.diagnostic(`Math.${f}(float32): ${e}`);
  assert.deepEqual(failing.map(([f]) => f), FLOAT64_INSIDE);
  for (const [, e] of failing) assert.match(e!, /^float64 is not available on the webgpu target/);
});
