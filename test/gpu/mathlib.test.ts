// The device math library on a real GPU (`npm run test:gpu`): every function
// and variant as a `Math.f` kernel through cuda.jit, over the correctly rounded
// fixtures plus random operands (agreement only); the results must equal the simulator's bit for
// bit (NaN payloads excepted) and meet the accuracy goals. Prints the worst ulp
// per function. The same for every `cuda.math.*` function over its fixture (test/mathlib/mathlib-cuda.test.ts
// checks the simulator's accuracy; here the GPU must give the simulator's bits). Skips without a GPU.

import assert from "node:assert/strict";
import { test } from "node:test";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { typeOfArgument } from "../../src/kernel.js";
import { MATH_LIBRARY } from "../../src/mathlib/index.js";
import type { KernelArg } from "../../src/abi/backend.js";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { getBackend } from "../../src/runtime/select.js";
import { wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import {
  FORMATS, GOAL, fixture, floatArray, mathKernel, measure, randomOperands, runKernel, sameBits, tableHeader, tableRow, type FloatArray,
} from "../helpers/mathlib.js";
import { CUDA_MATH_NAMES, cudaMathFixture, cudaMathKernel, cudaMathOutputs, runCudaMath, type Column } from "../helpers/cuda-math.js";

process.env.NUMBATS_TARGET = "cuda";
const probe = probeCuda();
const skip = probe.ok ? false : `no GPU: ${probe.reason}`;
if (skip) console.log(`# GPU math library suite skipped: ${skip}`);

const NAMES = Object.keys(MATH_LIBRARY).sort();
const BLOCK = 128;

/** The same kernel compiled for the simulator and launched directly (the process's target is the GPU); fills `outs`. */
function simulate(kernel: Function, args: readonly Column[], outs: readonly Column[]): void {
  const all = [...args, ...outs];
  const ir = compileToIR(kernel, all.map((a, i) => typeOfArgument(a, i)), { resolveDeviceFunction });
  const kargs = all.map((a, i): KernelArg => ({
    kind: "array", buffer: wrapHostArray(a), byteOffset: 0,
    dtype: a instanceof Float32Array ? "float32" : a instanceof Float64Array ? "float64" : "int32",
    shape: [a.length], strides: [1], name: `a${i}`,
  }));
  const dims = { grid: [Math.ceil(args[0]!.length / BLOCK), 1, 1] as [number, number, number], block: [BLOCK, 1, 1] as [number, number, number], sharedMemBytes: 0 };
  compileSim(ir).launch(dims, kargs, getBackend().defaultStream(), false);
}

function runOnSimulator(kernel: Function, args: readonly FloatArray[]): FloatArray {
  const out = floatArray(args[0] instanceof Float32Array ? "f32" : "f64", new Float64Array(args[0]!.length));
  simulate(kernel, args, [out]);
  return out;
}

const RANDOM_POINTS = 1 << 14;

for (const fmt of FORMATS) {
  test(`GPU ${fmt}: every math function equals the simulator bit for bit and is within ${GOAL[fmt]} ulp`, { skip }, () => {
    assert.equal(getBackend().name, "cuda");
    const lines = [tableHeader(fmt, "gpu")];
    const failures: string[] = [];
    NAMES.forEach((name, n) => {
      const fx = fixture(fmt, name);
      const kernel = mathKernel(name, fx.args.length);
      const gpu = runKernel(kernel, fx.args);
      const s = measure(fmt, name, fx, gpu);
      lines.push(tableRow(fmt, "gpu", name, s));
      if (!(s.worst <= GOAL[fmt])) failures.push(`${name}: ${s.worst} ulp at (${s.worstAt})`);

      const random = fx.args.map((_, j) => randomOperands(fmt, RANDOM_POINTS, 1 + 97 * n + j));
      for (const args of [fx.args, random]) {
        const got = args === fx.args ? gpu : runKernel(kernel, args);
        const want = runOnSimulator(kernel, args);
        const differ = [...got.keys()].filter((i) => !sameBits(got[i]!, want[i]!));
        for (const i of differ.slice(0, 3)) failures.push(`${name}(${args.map((a) => a[i]).join(", ")}): GPU ${got[i]}, simulator ${want[i]}`);
        if (differ.length > 3) failures.push(`${name}: ${differ.length - 3} more points where GPU and simulator differ`);
      }
    });
    console.log(lines.join("\n"));
    assert.deepEqual(failures, []);
  });
}

for (const fmt of FORMATS) {
  test(`GPU ${fmt}: every cuda.math function equals the simulator bit for bit`, { skip }, () => {
    const failures: string[] = [];
    for (const name of CUDA_MATH_NAMES) {
      const { args } = cudaMathFixture(fmt, name);
      const gpu = runCudaMath(fmt, name, args);
      const sim = cudaMathOutputs(fmt, name, args[0]!.length);
      simulate(cudaMathKernel(name), args, sim);
      let differ = 0;
      gpu.forEach((col, c) => col.forEach((v, i) => {
        if (sameBits(v, sim[c]![i]!)) return;
        if (differ++ < 3) failures.push(`cuda.math.${name}(${args.map((a) => a[i]).join(", ")})[${c}]: GPU ${v}, simulator ${sim[c]![i]}`);
      }));
      if (differ > 3) failures.push(`cuda.math.${name}: ${differ - 3} more points where GPU and simulator differ`);
    }
    assert.deepEqual(failures, []);
  });
}
