// Shared by the `cuda.math.*` suites (test/mathlib/mathlib-cuda.test.ts on the simulator and ptxsim,
// test/gpu/mathlib.test.ts on a GPU): the Python-generated fixture, one kernel per function and a
// launcher for the current target.

import { readFileSync } from "node:fs";
import { cuda } from "../../src/index.js";
import { CUDA_MATH } from "../../src/mathlib/index.js";
import { floatArray, fromHex, type FloatArray, type Fmt } from "./mathlib.js";

export const CUDA_MATH_NAMES = Object.keys(CUDA_MATH);

/** Exact by contract (every result bit for bit); the others are measured in ulps. */
export const EXACT: ReadonlySet<string> = new Set(["copysign", "fmod", "remainder", "ldexp", "nextafter", "modf", "frexp"]);

/** Functions that return [a, b]; frexp's b is int32. */
const TUPLES: ReadonlySet<string> = new Set(["modf", "frexp"]);

export type Column = FloatArray | Int32Array;

const data: Record<Fmt, Record<string, string[][]>> = JSON.parse(
  readFileSync(new URL("../fixtures/mathlib/cuda-math.json", import.meta.url), "utf8"),
);


/** Whether operand / result column j of `name` is an int32 (ldexp's exponent, frexp's exponent). */
const intColumn = (name: string, j: number): boolean => (name === "ldexp" && j === 1) || (name === "frexp" && j === 2);

export interface CudaMathFixture {
  readonly args: Column[];
  /** Python's results: one column, or two for modf and frexp */
  readonly refs: Column[];
}

export function cudaMathFixture(fmt: Fmt, name: string): CudaMathFixture {
  const rows = data[fmt][name];
  if (!rows) throw new Error(`no ${fmt} cuda.math fixture for ${name}`);
  const nargs = CUDA_MATH[name]!.f64.length;
  const col = (j: number): Column =>
    intColumn(name, j) ? Int32Array.from(rows, (r) => Number(r[j])) : floatArray(fmt, rows.map((r) => fromHex(r[j]!, fmt)));
  const all = rows[0]!.map((_, j) => col(j));
  return { args: all.slice(0, nargs), refs: all.slice(nargs) };
}

const kernels = new Map<string, Function>();

/** `out[i] = cuda.math.name(x[i], …)`, or for modf/frexp `[out[i], out2[i]] = …`, written as a user would. */
export function cudaMathKernel(name: string): Function {
  let k = kernels.get(name);
  if (!k) {
    const ops = CUDA_MATH[name]!.f64.length === 2 ? ["x", "y"] : ["x"];
    const call = `cuda.math.${name}(${ops.map((o) => `${o}[i]`).join(", ")})`;
    const outs = TUPLES.has(name) ? ["out", "out2"] : ["out"];
    const body = TUPLES.has(name)
      ? `const [a, b] = ${call}; out[i] = a; out2[i] = b;`
      : `out[i] = ${call};`;
    k = new Function(...ops, ...outs, `const i = cuda.grid(1); if (i < x.length) { ${body} }`);
    kernels.set(name, k);
  }
  return k;
}

/** Empty result columns for `n` points. */
export function cudaMathOutputs(fmt: Fmt, name: string, n: number): Column[] {
  if (name === "frexp") return [floatArray(fmt, new Float64Array(n)), new Int32Array(n)];
  return Array.from({ length: TUPLES.has(name) ? 2 : 1 }, () => floatArray(fmt, new Float64Array(n)));
}

const BLOCK = 128;
const dispatchers = new Map<Function, ReturnType<typeof cuda.jit>>();

/** Launches the function's kernel on the current target over every point; returns the result columns. */
export function runCudaMath(fmt: Fmt, name: string, args: readonly Column[]): Column[] {
  const kernel = cudaMathKernel(name);
  let d = dispatchers.get(kernel);
  if (!d) dispatchers.set(kernel, (d = cuda.jit(kernel as (...a: never[]) => void)));
  const outs = cudaMathOutputs(fmt, name, args[0]!.length);
  d.configure(Math.ceil(args[0]!.length / BLOCK), BLOCK)(...([...args, ...outs] as never[]));
  cuda.synchronize();
  return outs;
}
