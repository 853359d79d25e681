// The float32 math library on the webgpu target (`npm run test:webgpu`, once per CPU adapter): every
// function as a `Math.f` kernel over its correctly rounded fixture, its accuracy measured (the table
// printed here is the one docs/mathlib.md gives per adapter), and its distance from the simulator's
// results. The library is numbats' own, compiled to WGSL, so an adapter whose `+ - * fma` are exact gives
// the simulator's bits; WGSL's looser `/` and `sqrt` and unfused `fma` move some results by a few ulp.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MATH_LIBRARY } from "../../src/mathlib/index.js";
import { getBackend } from "../../src/runtime/select.js";
import { fixture, mathKernel, measure, runKernel, tableHeader, tableRow, type FixtureData } from "../helpers/mathlib.js";
import { flushesSubnormals } from "../helpers/crosscheck.js";
import { isSubsetError, ulpDistance } from "../helpers/webgpu-crosscheck.js";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { typeOfArgument } from "../../src/kernel.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { createSimBackend, wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";
import type { KernelArg } from "../../src/abi/backend.js";

const adapter = process.env.NUMBATS_WEBGPU_ADAPTER ?? "the current adapter";
const skip = process.env.NUMBATS_TARGET === "webgpu" ? false : "run by `npm run test:webgpu` (NUMBATS_TARGET=webgpu on a WebGPU adapter)";
const BLOCK = 128;
/** the most a float32 function may be from the correctly rounded result on WebGPU, in ulp */
const WEBGPU_F32_GOAL = 4;

const FLT_MIN = 1.1754943508222875e-38;
const subnormal = (v: number) => v !== 0 && Math.abs(v) < FLT_MIN;

/**
 * The fixture without the points whose operands or correctly rounded result are subnormal, for an adapter
 * that flushes subnormals (WGSL allows it): there the flushed value is the adapter's, not the library's.
 */
function normalPoints(fx: FixtureData): FixtureData {
  const keep = fx.refs.map((r, i) => !subnormal(r) && fx.args.every((a) => !subnormal(a[i]!)));
  const pick = <T extends ArrayLike<number>>(a: T): T => (a as unknown as Float32Array).filter((_, i) => keep[i]) as unknown as T;
  return { ...fx, args: fx.args.map(pick), refs: pick(fx.refs), fracs: pick(fx.fracs) };
}

/** `kernel(...args, out)` on the simulator directly (the process's target is webgpu). */
function onSimulator(kernel: Function, args: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(args[0]!.length);
  const all = [...args, out];
  const ir = compileToIR(kernel, all.map((a, i) => typeOfArgument(a, i)), { resolveDeviceFunction });
  const kargs = all.map((a, i): KernelArg => ({ kind: "array", buffer: wrapHostArray(a), byteOffset: 0, dtype: "float32", shape: [a.length], strides: [1], name: `a${i}` }));
  const dims = { grid: [Math.ceil(out.length / BLOCK), 1, 1] as [number, number, number], block: [BLOCK, 1, 1] as [number, number, number], sharedMemBytes: 0 };
  compileSim(ir).launch(dims, kargs, createSimBackend().defaultStream(), false);
  return out;
}

test(`webgpu (${adapter}) f32: every math function, its accuracy and its distance from the simulator`, { skip }, () => {
  const lines = [`${tableHeader("f32", adapter)}  ulps-from-simulator  differ-from-simulator`];
  const outside: string[] = [];
  const failures: string[] = [];
  const flushes = flushesSubnormals();
  if (flushes) lines.unshift(`# ${adapter} flushes float32 subnormals: points with a subnormal operand or result are left out`);
  for (const name of Object.keys(MATH_LIBRARY).sort()) {
    const fx = flushes ? normalPoints(fixture("f32", name)) : fixture("f32", name);
    const kernel = mathKernel(name, fx.args.length);
    let got: Float32Array;
    try {
      got = runKernel(kernel, fx.args) as Float32Array;
    } catch (e) {
      if (!isSubsetError(e)) throw e;
      outside.push(`${name}: ${e.message.split("\n")[0]}`);
      continue;
    }
    const s = measure("f32", name, fx, got);
    const sim = onSimulator(kernel, fx.args as Float32Array[]);
    let far = 0;
    let differ = 0;
    got.forEach((v, i) => {
      const d = ulpDistance(v, sim[i]!);
      if (d > 0) differ++;
      far = Math.max(far, d);
    });
    lines.push(`${tableRow("f32", adapter, name, s)}  ${String(far).padStart(19)}  ${String(differ).padStart(21)}`);
    if (!(s.worst <= WEBGPU_F32_GOAL)) failures.push(`${name}: ${s.worst} ulp from the correctly rounded result at (${s.worstAt})`);
  }
  console.log(lines.join("\n"));
  for (const o of outside) console.log(`# outside the webgpu subset: ${o}`);
  assert.equal(getBackend().name, "webgpu");
  assert.deepEqual(failures, []);
});
