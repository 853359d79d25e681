// The device math library compiled into kernels: every function and variant,
// through cuda.jit on the simulator over the correctly rounded fixtures
// (test/fixtures/mathlib/), then the same kernels' PTX through ptxas and on
// ptxsim, bit for bit equal to the simulator.
//
// Goals as in test/mathlib/mathlib.test.ts: float64 within 2 ulp, float32 within 1 ulp
// of the correctly rounded result; special values exact, sign of zero included.
// Compiled code contracts a*b+c into fma, so it may differ from the plain-JS run
// (test/mathlib/mathlib.test.ts) in the last bit (the "differ-from-JS" column); the goals still hold.

process.env.NUMBATS_TARGET = "sim";

import assert from "node:assert/strict";
import { test } from "node:test";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { typeOfArgument } from "../../src/kernel.js";
import { wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";
import type { KernelArg } from "../../src/abi/backend.js";
import { MATH_LIBRARY } from "../../src/mathlib/index.js";
import { getBackend } from "../../src/runtime/select.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import {
  FORMATS, GOAL, arityOf, fixture, mathKernel, measure, randomOperands, runKernel, sameBits, tableHeader, tableRow, ulpDistance, floatArray, type FloatArray,
} from "../helpers/mathlib.js";

const NAMES = Object.keys(MATH_LIBRARY).sort();

for (const fmt of FORMATS) {
  test(`compiled ${fmt} on the simulator: worst ulp error per function is within ${GOAL[fmt]} ulp`, () => {
    assert.equal(getBackend().name, "sim");
    const lines = [tableHeader(fmt, "sim")];
    const failures: string[] = [];
    for (const name of NAMES) {
      const fx = fixture(fmt, name);
      const s = measure(fmt, name, fx, runKernel(mathKernel(name, fx.args.length), fx.args));
      lines.push(tableRow(fmt, "sim", name, s));
      if (!(s.worst <= GOAL[fmt])) failures.push(`${name}: ${s.worst} ulp at (${s.worstAt})`);
    }
    console.log(lines.join("\n"));
    assert.deepEqual(failures, []);
  });
}

/** ±0, ±∞, NaN, ±1, ±2, ±½, the smallest subnormals, huge values of both formats, ±1075 (odd: pow underflows to ±0); results that are NaN, ±∞ or ±0 are checked exactly. */
const SPECIALS = [NaN, 0, -0, Infinity, -Infinity, 1, -1, 2, -2, 0.5, -0.5, 5e-324, -5e-324, 1.4e-45, -1.4e-45, 1e308, -1e308, 3.4e38, -3.4e38, 1075, -1075];

for (const fmt of FORMATS) {
  test(`compiled ${fmt}: special values agree with the host's Math`, () => {
    const round = fmt === "f64" ? (v: number) => v : Math.fround;
    const failures: string[] = [];
    let checked = 0;
    for (const name of NAMES) {
      const host = (Math as unknown as Record<string, (...a: number[]) => number>)[name];
      if (!host) continue; // exp2 is not in JS Math; its specials are in the fixture
      const binary = arityOf(name) === 2;
      // two-argument functions: every pair of specials
      const args = binary ? [SPECIALS.flatMap((x) => SPECIALS.map(() => x)), SPECIALS.flatMap(() => SPECIALS)] : [SPECIALS];
      const out = runKernel(mathKernel(name, args.length), args.map((a) => floatArray(fmt, a)));
      for (let i = 0; i < out.length; i++) {
        const operands = args.map((a) => round(a[i]!));
        const want = round(host(...operands));
        if (Number.isFinite(want) && want !== 0) continue; // finite nonzero results are the sweep's business
        checked++;
        if (!Object.is(out[i], want)) failures.push(`${name}(${operands.join(", ")}) = ${out[i]}, want ${want}`);
      }
    }
    assert.ok(checked > 200, `checked ${checked} special results`);
    assert.deepEqual(failures, []);
  });
}

/** Beyond this |x| sin/cos/tan leave Cody–Waite for the Payne–Hanek reduction (src/mathlib/trig.ts). */
const PAYNE_HANEK_FROM = 2 ** 20 * (Math.PI / 2);

for (const fmt of FORMATS) {
  test(`compiled ${fmt}: sin, cos, tan of huge arguments (Payne–Hanek) are within ${GOAL[fmt]} ulp`, () => {
    for (const name of ["sin", "cos", "tan"]) {
      const fx = fixture(fmt, name);
      const huge = [...fx.args[0]!.keys()].filter((i) => Math.abs(fx.args[0]![i]!) >= PAYNE_HANEK_FROM);
      assert.ok(huge.length >= 20, `${name} ${fmt}: ${huge.length} huge arguments in the fixture`);
      const x = floatArray(fmt, huge.map((i) => fx.args[0]![i]!));
      const out = runKernel(mathKernel(name, 1), [x]);
      const bad = huge.filter((i, j) => !(Math.abs(ulpDistance(out[j]!, fx.refs[i]!, fmt)) <= GOAL[fmt]));
      assert.deepEqual(bad.map((i) => `${name}(${fx.args[0]![i]}) want ${fx.refs[i]}`), []);
    }
  });
}

/** ptxsim also runs this many random operands per function (agreement only: they have no reference). */
const RANDOM_POINTS = 1024;

function arrayArg(v: FloatArray, name: string): KernelArg {
  const dtype = v instanceof Float32Array ? "float32" : "float64";
  return { kind: "array", buffer: wrapHostArray(v), byteOffset: 0, dtype, shape: [v.length], strides: [1], name };
}

for (const fmt of FORMATS) {
  test(`compiled ${fmt}: PTX assembles (ptxas sm_90) and on ptxsim equals the simulator bit for bit over the whole fixture and random operands`, async () => {
    for (const name of NAMES) {
      const fixed = fixture(fmt, name).args;
      const args = fixed.map((a, j) => floatArray(fmt, [...a, ...randomOperands(fmt, RANDOM_POINTS, 1 + 2 * NAMES.indexOf(name) + j)]));
      const kernel = mathKernel(name, args.length);
      const types = [...args, args[0]!].map((a, i) => typeOfArgument(a, i));
      const mod = emitPtx(compileToIR(kernel, types, { name: `${name}_${fmt}`, resolveDeviceFunction }), { computeCapability: [9, 0] });
      if (hasPtxas()) ptxasCheck(mod.text, "sm_90");
        const want = runKernel(kernel, args);
      const out = floatArray(fmt, new Float64Array(want.length));
      await runOnPtxsim(mod, { grid: [Math.ceil(out.length / 32), 1, 1], block: [32, 1, 1], sharedMemBytes: 0 }, [
        ...args.map((a, i) => arrayArg(a, `x${i}`)),
        arrayArg(out, "out"),
      ]);
      const differ = [...out.keys()].filter((i) => !sameBits(out[i]!, want[i]!));
      assert.deepEqual(differ.map((i) => `${name}(${args.map((a) => a[i]).join(", ")}): ptxsim ${out[i]}, simulator ${want[i]}`), []);
    }
  });
}
