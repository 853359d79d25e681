// `cuda.math.*` (erf, erfc, lgamma, tgamma, copysign, fmod, remainder, ldexp, nextafter, modf, frexp)
// compiled into kernels: on the simulator against Python's math module (test/fixtures/mathlib/
// gen_cuda_math.py), edge cases by hand, and every kernel's PTX through ptxas and on ptxsim, bit for
// bit equal to the simulator.

process.env.NUMBATS_TARGET = "sim";

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda } from "../../src/index.js";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { typeOfArgument } from "../../src/kernel.js";
import { wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";
import type { KernelArg } from "../../src/abi/backend.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import { FORMATS, floatArray, randomOperands, sameBits, ulpDistance, type Fmt } from "../helpers/mathlib.js";
import { rng } from "../helpers/crosscheck.js";
import { CUDA_MATH } from "../../src/mathlib/index.js";
import {
  CUDA_MATH_NAMES, EXACT, cudaMathFixture, cudaMathKernel, cudaMathOutputs, runCudaMath, type Column,
} from "../helpers/cuda-math.js";

/**
 * Worst ulps from the fixture's reference (float32: the float64 reference rounded): Python's math.erf and
 * math.erfc (the platform libm, ≤ 1 ulp), and for lgamma and tgamma 50-digit values (Python's own are
 * Lanczos sums a few ulp off; the generator checks them against it). lgamma is measured in ulps only where
 * |lgamma(x)| ≥ 0.5: near its zeros (x = 1, 2 and two in every unit interval of negative x) its error is
 * absolute, and there the bound is 4·2^-53 (float64) or 12·2^-24 (float32). The float32 erfc, lgamma and
 * tgamma are native float32 (few-ulp functions, as CUDA's are); their bounds are the dense sweeps' worst
 * (docs/mathlib.md), except lgamma in (−10.001, −2.264), where the reflection cancels: 16.
 */
const ULP_BOUND: Record<Fmt, Record<string, number>> = {
  f64: { erf: 2, erfc: 2, lgamma: 2, tgamma: 6 },
  f32: { erf: 1, erfc: 2, lgamma: 3, tgamma: 2 },
};
const LGAMMA_ABS: Record<Fmt, number> = { f64: 4 * 2 ** -53, f32: 12 * 2 ** -24 };
const LGAMMA_CANCELS = { lo: -10.001, hi: -2.264, ulps: 16 };

/** The error of one result in ulps (0 when equal; Infinity for a wrong special value). */
function error(fmt: Fmt, name: string, got: number, want: number): number {
  if (EXACT.has(name)) return sameBits(got, want) ? 0 : Infinity;
  if (name === "lgamma" && Number.isFinite(want) && Math.abs(want) < 0.5) return Math.abs(got - want) <= LGAMMA_ABS[fmt] ? 0 : Infinity;
  return Math.abs(ulpDistance(got, want, fmt));
}

function worst(fmt: Fmt, name: string, args: readonly Column[], outs: readonly Column[], refs: readonly Column[]): { ulps: number; at: string } {
  let ulps = 0;
  let at = "";
  for (let c = 0; c < outs.length; c++) {
    for (let i = 0; i < outs[c]!.length; i++) {
      const e = error(fmt, name, outs[c]![i]!, refs[c]![i]!);
      if (e > ulps) {
        ulps = e;
        at = `(${args.map((a) => a[i]).join(", ")}) = ${outs[c]![i]}, Python ${refs[c]![i]}`;
      }
    }
  }
  return { ulps, at };
}

for (const fmt of FORMATS) {
  test(`cuda.math ${fmt} on the simulator: exact functions bit for bit, erf/erfc/lgamma/tgamma within their ulp bounds of Python's math`, () => {
    const failures: string[] = [];
    const lines: string[] = [];
    for (const name of CUDA_MATH_NAMES) {
      const fx = cudaMathFixture(fmt, name);
      const w = worst(fmt, name, fx.args, runCudaMath(fmt, name, fx.args), fx.refs);
      const bound = EXACT.has(name) ? 0 : ULP_BOUND[fmt][name]!;
      lines.push(`sim ${fmt} ${name.padEnd(9)} ${String(fx.args[0]!.length).padStart(5)} points  worst ${w.ulps} ulp  ${w.at}`);
      if (!(w.ulps <= bound)) failures.push(`${name}: ${w.ulps} ulp (bound ${bound}) at ${w.at}`);
    }
    console.log(lines.join("\n"));
    assert.deepEqual(failures, []);
  });
}

/** Uniform ranges where the native float32 erfc, lgamma and tgamma are hardest: every branch and its edges. */
const HARD_RANGES: Record<string, [number, number][]> = {
  erfc: [[-4, 0.84375], [0.8, 1.3], [1.25, 4], [4, 10.2]],
  lgamma: [[-0.25, 0.75], [0.75, 2.5], [2.5, 8], [8, 1e6], [1e30, 4.1e36], [-10.001, -2.264], [-60, -0.25]],
  tgamma: [[-44, -0.25], [-0.25, 0.75], [0.75, 2.5], [2.5, 35.1]],
};
const HARD_POINTS = 2048; // per range

test("cuda.math f32 erfc, lgamma, tgamma (native float32) on the simulator: within their bounds of the float64 functions over their hardest ranges", () => {
  const failures: string[] = [];
  for (const [name, ranges] of Object.entries(HARD_RANGES)) {
    const r = rng(17 + name.length);
    const x = Float32Array.from(ranges.flatMap(([lo, hi]) => Array.from({ length: HARD_POINTS }, () => lo + (hi - lo) * r())));
    const [got] = runCudaMath("f32", name, [x]);
    const f64 = CUDA_MATH[name]!.f64 as (v: number) => number;
    let worst = 0;
    x.forEach((v, i) => {
      const want = Math.fround(f64(v)), g = got![i]!;
      const inCancellation = name === "lgamma" && v > LGAMMA_CANCELS.lo && v < LGAMMA_CANCELS.hi;
      const e = name === "lgamma" && Number.isFinite(want) && Math.abs(want) < 0.5
        ? (Math.abs(g - f64(v)) <= LGAMMA_ABS.f32 ? 0 : Infinity)
        : Math.abs(ulpDistance(g, want, "f32"));
      if (e > (inCancellation ? LGAMMA_CANCELS.ulps : ULP_BOUND.f32[name]!)) failures.push(`${name}(${v}) = ${g}, float64 ${f64(v)}: ${e} ulp`);
      if (!inCancellation) worst = Math.max(worst, e);
    });
    console.log(`sim f32 ${name.padEnd(6)} ${x.length} points over ${ranges.length} ranges: worst ${worst} ulp`);
  }
  assert.deepEqual(failures.slice(0, 10), []);
});

/** [function, operands, C's result(s)], checked in both formats (operands and results exact in float32). */
const EDGE_CASES: [string, number[], number[]][] = [
  ["copysign", [NaN, -1], [-NaN]],
  ["copysign", [0, -0], [-0]],
  ["copysign", [-0, 0], [0]],
  ["copysign", [-Infinity, 1], [Infinity]],
  ["fmod", [5.5, -2], [1.5]],
  ["fmod", [-5.5, 2], [-1.5]],
  ["fmod", [-4, 2], [-0]],
  ["fmod", [1, 0], [NaN]],
  ["fmod", [Infinity, 2], [NaN]],
  ["fmod", [3, Infinity], [3]],
  ["fmod", [-0, 1], [-0]],
  ["remainder", [5, 2], [1]], // 2.5 → 2
  ["remainder", [7, 2], [-1]], // 3.5 → 4
  ["remainder", [-7, 2], [1]],
  ["remainder", [-4, 2], [-0]],
  ["remainder", [1, 0], [NaN]],
  ["remainder", [Infinity, 1], [NaN]],
  ["remainder", [3, -Infinity], [3]],
  ["remainder", [1.5, 1], [-0.5]], // 1.5 → 2
  ["remainder", [2.5, 1], [0.5]], // 2.5 → 2
  ["ldexp", [1, 1024], [Infinity]],
  ["ldexp", [-1, 2000], [-Infinity]],
  ["ldexp", [1, -1074], [5e-324]],
  ["ldexp", [1, -1075], [0]], // a tie: to even
  ["ldexp", [3, -1076], [5e-324]], // 0.75 of the smallest subnormal
  ["ldexp", [-1, -1080], [-0]],
  ["ldexp", [5e-324, 1074], [1]],
  ["ldexp", [5e-324, 2098], [Infinity]],
  ["ldexp", [Number.MAX_VALUE, -2098], [5e-324]], // (2 − 2^-52)·2^-1075 rounds up
  ["ldexp", [Number.MAX_VALUE, -2099], [0]],
  ["ldexp", [NaN, 3], [NaN]],
  ["ldexp", [-0, 100], [-0]],
  ["ldexp", [1, 2 ** 31 - 1], [Infinity]],
  ["ldexp", [1, -(2 ** 31)], [0]],
  ["nextafter", [0, -1], [-5e-324]],
  ["nextafter", [0, -0], [-0]],
  ["nextafter", [-0, 0], [0]],
  ["nextafter", [5e-324, 0], [0]],
  ["nextafter", [-5e-324, 0], [-0]],
  ["nextafter", [1, 2], [1 + 2 ** -52]],
  ["nextafter", [1, 0], [1 - 2 ** -53]],
  ["nextafter", [-1, -2], [-1 - 2 ** -52]],
  ["nextafter", [Number.MAX_VALUE, Infinity], [Infinity]],
  ["nextafter", [Infinity, 0], [Number.MAX_VALUE]],
  ["nextafter", [NaN, 1], [NaN]],
  ["nextafter", [1, NaN], [NaN]],
  ["modf", [-3.5], [-0.5, -3]],
  ["modf", [-2], [-0, -2]],
  ["modf", [-0], [-0, -0]],
  ["modf", [Infinity], [0, Infinity]],
  ["modf", [-Infinity], [-0, -Infinity]],
  ["modf", [NaN], [NaN, NaN]],
  ["frexp", [8], [0.5, 4]],
  ["frexp", [-0.75], [-0.75, 0]],
  ["frexp", [5e-324], [0.5, -1073]],
  ["frexp", [-0], [-0, 0]],
  ["frexp", [-Infinity], [-Infinity, 0]],
  ["frexp", [NaN], [NaN, 0]],
  ["erf", [-0], [-0]],
  ["erf", [Infinity], [1]],
  ["erf", [-Infinity], [-1]],
  ["erf", [NaN], [NaN]],
  ["erfc", [Infinity], [0]],
  ["erfc", [-Infinity], [2]],
  ["erfc", [40], [0]],
  ["erfc", [-0], [1]],
  ["lgamma", [0], [Infinity]],
  ["lgamma", [-0], [Infinity]],
  ["lgamma", [-3], [Infinity]],
  ["lgamma", [-Infinity], [Infinity]],
  ["lgamma", [1], [0]],
  ["lgamma", [2], [0]],
  ["lgamma", [-2.5], [-0.056243716497674054]], // log(8√π/15),
  ["lgamma", [NaN], [NaN]],
  ["tgamma", [0], [Infinity]],
  ["tgamma", [-0], [-Infinity]],
  ["tgamma", [-1], [NaN]],
  ["tgamma", [-Infinity], [NaN]],
  ["tgamma", [Infinity], [Infinity]],
  ["tgamma", [5], [24]],
  ["tgamma", [23], [1124000727777607680000]],
  ["tgamma", [172], [Infinity]],
  ["tgamma", [-184.5], [-0]],
  ["tgamma", [-185.5], [0]],
  ["tgamma", [0.5], [Math.sqrt(Math.PI)]],
];

/** float32 only: overflow and underflow thresholds of the float32 range (float64 has finite values there). */
const F32_EDGE_CASES: [string, number[], number[]][] = [
  ["tgamma", [35.5], [Infinity]], // Γ overflows float32 from 35.0401
  ["tgamma", [-42.5], [-0]], // |Γ| < 2^-150 below about −42; its sign
  ["tgamma", [-43.5], [0]],
  ["tgamma", [-1e6 - 0.5], [-0]],
  ["lgamma", [2 ** 122], [Infinity]], // lgamma overflows float32 from 4.085e36 (2^122 = 5.3e36)
  ["erfc", [10.25], [0]], // erfc rounds to 0 from 10.1276
  ["erfc", [-4.5], [2]],
];

for (const fmt of FORMATS) {
  test(`cuda.math ${fmt}: edge cases (NaN, ±0, ±∞, poles, ties, overflow, subnormals) are C's results`, () => {
    const round = fmt === "f64" ? (v: number) => v : Math.fround;
    const isExponent = (name: string, j: number) => name === "ldexp" && j === 1;
    let checked = 0;
    const failures: string[] = [];
    for (const [name, ops, want] of fmt === "f32" ? [...EDGE_CASES, ...F32_EDGE_CASES] : EDGE_CASES) {
      // in float32, the cases whose operands and results are all float32 values
      if (fmt === "f32" && [...ops, ...want].some((v, j) => !isExponent(name, j) && !sameBits(round(v), v))) continue;
      checked++;
      const args: Column[] = ops.map((v, j) => (isExponent(name, j) ? Int32Array.of(v) : floatArray(fmt, [v])));
      const got = runCudaMath(fmt, name, args).map((c) => c[0]!);
      if (!got.every((g, j) => error(fmt, name, g, round(want[j]!)) <= (EXACT.has(name) ? 0 : ULP_BOUND[fmt][name]!))) {
        failures.push(`cuda.math.${name}(${ops.join(", ")}) = ${got.join(", ")}, want ${want.join(", ")}`);
      }
    }
    assert.ok(checked >= (fmt === "f64" ? EDGE_CASES.length : 50 + F32_EDGE_CASES.length), `${checked} cases checked`);
    assert.deepEqual(failures, []);
  });
}

/** The sign bit of a float's bits (NaN payloads kept). */
function signBit(fmt: Fmt, v: Column): number {
  return fmt === "f64" ? new Uint32Array(v.buffer)[1]! >>> 31 : new Uint32Array(v.buffer)[0]! >>> 31;
}

for (const fmt of FORMATS) {
  test(`cuda.math ${fmt}: copysign sets the sign bit of a NaN, and copysign(x, NaN) takes the NaN's sign bit`, () => {
    const nan = floatArray(fmt, [NaN]);
    const negNan = floatArray(fmt, [NaN]);
    new Uint8Array(negNan.buffer)[negNan.BYTES_PER_ELEMENT - 1]! |= 0x80;
    assert.equal(signBit(fmt, runCudaMath(fmt, "copysign", [nan, floatArray(fmt, [-1])])[0]!), 1);
    assert.equal(signBit(fmt, runCudaMath(fmt, "copysign", [negNan, floatArray(fmt, [1])])[0]!), 0);
    assert.equal(Object.is(runCudaMath(fmt, "copysign", [floatArray(fmt, [2]), negNan])[0]![0], -2), true);
  });
}

test("cuda.math.ldexp needs an integer exponent, gamma points to tgamma; integers compute in float64", () => {
  const k = cuda.jit((x: Float32Array) => { x[0] = cuda.math.ldexp(x[0], 1.5); });
  assert.throws(() => k.configure(1, 1)(new Float32Array(1)), /the exponent of cuda\.math\.ldexp must be an integer; got float64/);
  const g = cuda.jit(new Function("x", "x[0] = cuda.math.gamma(x[0]);") as (x: Float32Array) => void);
  assert.throws(() => g.configure(1, 1)(new Float32Array(1)), /Γ\(x\) is cuda\.math\.tgamma/);
  const m = cuda.jit((x: Float32Array, n: Int32Array, d: Float64Array) => {
    x[0] = cuda.math.ldexp(x[0], n[0]);
    d[0] = cuda.math.erf(n[0]); // an int32 operand computes in float64
    const [mant, e] = cuda.math.frexp(x[0]);
    n[0] = e;
    x[1] = mant;
  });
  const x = new Float32Array([3, 0]);
  const n = Int32Array.of(2);
  const d = new Float64Array(1);
  m.configure(1, 1)(x, n, d);
  cuda.synchronize();
  assert.deepEqual([...x, ...n, d[0]], [12, 0.75, 4, 0.9953222650189527]);
});

/** ptxsim also runs this many random operands per function (agreement only). */
const RANDOM_POINTS = 512;

function arrayArg(v: Column, name: string): KernelArg {
  const dtype = v instanceof Float32Array ? "float32" : v instanceof Float64Array ? "float64" : "int32";
  return { kind: "array", buffer: wrapHostArray(v), byteOffset: 0, dtype, shape: [v.length], strides: [1], name };
}

for (const fmt of FORMATS) {
  test(`cuda.math ${fmt}: PTX assembles (ptxas sm_80, sm_90) and on ptxsim equals the simulator bit for bit`, async () => {
    for (const [n, name] of CUDA_MATH_NAMES.entries()) {
      const fixed = cudaMathFixture(fmt, name).args;
      const args = fixed.map((a, j): Column => {
        if (a instanceof Int32Array) return Int32Array.from({ length: a.length + RANDOM_POINTS }, (_, i) => (i < a.length ? a[i]! : (i * 7919) % 4001 - 2000));
        return floatArray(fmt, [...a, ...randomOperands(fmt, RANDOM_POINTS, 101 + 2 * n + j)]);
      });
      const kernel = cudaMathKernel(name);
      const outsShape = cudaMathOutputs(fmt, name, args[0]!.length);
      const types = [...args, ...outsShape].map((a, i) => typeOfArgument(a, i));
      const ir = compileToIR(kernel, types, { name: `cuda_math_${name}_${fmt}`, resolveDeviceFunction });
      if (hasPtxas()) for (const sm of ["sm_80", "sm_90"] as const) ptxasCheck(emitPtx(ir, { computeCapability: sm === "sm_80" ? [8, 0] : [9, 0] }).text, sm);
      const want = runCudaMath(fmt, name, args);
      const outs = cudaMathOutputs(fmt, name, args[0]!.length);
      await runOnPtxsim(emitPtx(ir, { computeCapability: [9, 0] }), { grid: [Math.ceil(outs[0]!.length / 32), 1, 1], block: [32, 1, 1], sharedMemBytes: 0 }, [
        ...args.map((a, i) => arrayArg(a, `x${i}`)),
        ...outs.map((o, i) => arrayArg(o, `out${i}`)),
      ]);
      const differ: string[] = [];
      outs.forEach((o, c) => o.forEach((v, i) => { if (!sameBits(v, want[c]![i]!)) differ.push(`${name}(${args.map((a) => a[i]).join(", ")})[${c}]: ptxsim ${v}, simulator ${want[c]![i]}`); }));
      assert.deepEqual(differ.slice(0, 10), []);
    }
  });
}
