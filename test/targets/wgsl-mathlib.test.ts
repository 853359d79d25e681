// The math library on float32 (numbats' own, inlined into the IR) compiles to WGSL without float64 for
// every Math.* function (the float32 variants use only float32 and 32-bit integers, the Payne–Hanek
// reduction of huge sin/cos/tan arguments included). They run on both CPU adapters and are compared
// with the simulator in ulps (ACCURACY: the most measured, per adapter).

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { arrayType } from "../../src/dtypes.js";
import { cuda } from "../../src/index.js";
import { emitWgsl } from "../../src/backends/webgpu/wgsl/index.js";
import { ADAPTERS, dawnSetup, runWgsl } from "./wgsl-dawn.js";

const F32 = arrayType("float32", 1, "C");
const UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp", "exp2", "expm1",
  "log", "log2", "log10", "log1p", "sqrt", "cbrt", "floor", "ceil", "round", "trunc", "sign", "abs", "fround"];
const BINARY = ["atan2", "pow", "hypot", "min", "max"];

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

test("Math.* on float32 compiles to WGSL without float64", (t) => {
  const failing = [...UNARY.map((f) => [f, errorOf(f, 1)] as const), ...BINARY.map((f) => [f, errorOf(f, 2)] as const)].filter(([, e]) => e !== undefined);
  for (const [f, e] of failing) t.diagnostic(`Math.${f}(float32): ${e}`);
  assert.deepEqual(failing, []);
});

/**
 * the functions measured, with the range of their 4096 inputs (log-spaced where it spans decades; sin, cos
 * and tan mostly past 105615, the integer Payne–Hanek path; the second operand of a binary function is the
 * first's mirror, x[n − 1 − i])
 */
const RANGES: readonly (readonly [string, number, number])[] = [
  ["exp", -80, 80], ["exp2", -120, 120], ["expm1", -10, 10], ["log", 1e-30, 1e30], ["log2", 1e-30, 1e30], ["log10", 1e-30, 1e30],
  ["log1p", -0.9, 100], ["asin", -1, 1], ["acos", -1, 1], ["atan", -100, 100], ["sinh", -80, 80], ["cosh", -80, 80], ["tanh", -10, 10],
  ["asinh", -1e5, 1e5], ["acosh", 1, 1e5], ["atanh", -0.99, 0.99], ["cbrt", -1e6, 1e6], ["sqrt", 0, 1e6], ["atan2", -10, 10],
  ["sin", -1e6, 1e6], ["cos", 1, 3e38], ["tan", -1e6, 1e6], ["pow", 0.1, 10], ["hypot", -1e20, 1e20],
];
/** the most ulps from the simulator measured on each adapter (lavapipe's compiler reassociates within expressions) */
const ACCURACY: Readonly<Record<keyof typeof ADAPTERS, number>> = { lavapipe: 1, swiftshader: 0 };

const N = 4096;
const inputs = (lo: number, hi: number) => Float32Array.from({ length: N }, (_, i) =>
  (lo > 0 && hi / lo > 1e3 ? Math.exp(Math.log(lo) + ((Math.log(hi) - Math.log(lo)) * i) / (N - 1)) : lo + ((hi - lo) * i) / (N - 1)));
/** the distance in float32 steps (NaN from NaN: 0) */
function ulps(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  const [x, y] = new Int32Array(new Float32Array([a, b]).buffer);
  const ordered = (v: number) => (v < 0 ? -2147483648 - v : v);
  return Math.abs(ordered(x!) - ordered(y!));
}

for (const adapter of Object.keys(ADAPTERS) as (keyof typeof ADAPTERS)[]) {
  test(`Math.* on float32 on ${adapter} within ${ACCURACY[adapter]} ulp of the simulator`, (t) => {
    const setup = dawnSetup(adapter);
    if (typeof setup === "string") { t.skip(setup); return; }
    cuda.useTarget("sim");
    const runs = RANGES.map(([f, lo, hi]) => {
      const args = BINARY.includes(f) ? "x[i], x[x.length - 1 - i]" : "x[i]";
      const kernel = new Function("cuda", `return (x, o) => { const i = cuda.grid(1); if (i < x.length) o[i] = Math.${f}(${args}); }`)(cuda) as (x: Float32Array, o: Float32Array) => void;
      const x = inputs(lo, hi), sim = new Float32Array(N);
      cuda.jit(kernel).configure(N / 64, 64)(x, sim);
      cuda.synchronize();
      const k = emitWgsl(compileToIR(kernel, [F32, F32], { name: f, resolveDeviceFunction }), ADAPTERS[adapter]);
      const params = new DataView(new ArrayBuffer(16 * Math.ceil(k.params.length / 4)));
      k.params.forEach((field, j) => params.setInt32(4 * j, field.what === "shape" ? N : 0, true));
      const job = {
        code: k.code, entryPoint: k.entryPoint, params: new Uint8Array(params.buffer), statusWords: k.statusWords, grid: [N / 64, 1, 1], block: [64, 1, 1],
        arrays: k.arrays.map((b) => ({ binding: b.binding, readOnly: b.readOnly, data: new Uint8Array(b.arg === 0 ? x.buffer : new ArrayBuffer(4 * N)) })),
      };
      return { f, sim, job };
    });
    const results = runWgsl(setup, runs.map((r) => r.job));
    const worst = runs.map((r, k) => {
      const res = results[k]!;
      if ("error" in res) assert.fail(`${r.f}: ${res.error}`);
      const out = new Float32Array(res.arrays[1]!.slice().buffer);
      return [r.f, Math.max(...Array.from(out, (v, i) => ulps(v, r.sim[i]!)))] as const;
    });
    t.diagnostic(`${adapter}, most ulps from the simulator: ${worst.map(([f, u]) => `${f} ${u}`).join(", ")}`);
    assert.deepEqual(worst.filter(([, u]) => u > ACCURACY[adapter]), []);
  });
}
