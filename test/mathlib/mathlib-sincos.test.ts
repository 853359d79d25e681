// float32 Math.sin and Math.cos of one value share one argument reduction (the sincos pass); tanh, exp
// and log evaluate without branches. Each kernel runs on the simulator against host references, through
// ptxas and on ptxsim bit for bit (runCase); shared sin/cos must give the bits of separate calls.

import assert from "node:assert/strict";
import { test } from "node:test";
import { compileToIR } from "../../src/compiler/index.js";
import { printFunction } from "../../src/compiler/print.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { arrayType, type Type } from "../../src/dtypes.js";
import { cuda } from "../../src/index.js";
import { runCase } from "../helpers/crosscheck.js";
import { runKernel, mathKernel, sameBits, ulpDistance } from "../helpers/mathlib.js";

process.env.NUMBATS_TARGET ??= "sim";

const F32 = arrayType("float32", 1, "C");
type Kernel = (...args: never[]) => void;

/** A user device function computing both of its parameter. */
const sinTimesCos = cuda.jit((t: number) => Math.sin(t) * Math.cos(t), { device: true, name: "sinTimesCos" });

/** How many Cody–Waite reductions by π/2 (the fma by 2/π) a kernel's inlined IR holds. */
function reductions(kernel: Kernel, types: readonly Type[] = [F32, F32, F32]): number {
  return printFunction(compileToIR(kernel, types, { resolveDeviceFunction })).split("0.6366197466850281:float32").length - 1;
}

test("sincos pass: sin and cos of one never-reassigned value (local, parameter, expression of them) reduce once", () => {
  const local = (x: Float32Array, s: Float32Array, c: Float32Array) => {
    const i = cuda.grid(1);
    const v = x[i];
    s[i] = Math.sin(v);
    c[i] = Math.cos(v);
  };
  const param = (a: number, s: Float32Array, c: Float32Array) => { s[0] = Math.sin(a); c[0] = Math.cos(a); };
  const expression = (x: Float32Array, s: Float32Array) => {
    const v = x[0];
    s[0] = Math.sin(2 * v) * Math.cos(2 * v);
  };
  // one in each arm of an if: the reduction goes before the if
  const branches = (x: Float32Array, s: Float32Array) => {
    const i = cuda.grid(1);
    const v = x[i];
    if (i % 2 === 0) s[i] = Math.sin(v);
    else s[i] = Math.cos(v);
  };
  const device = (x: Float32Array, s: Float32Array) => { s[0] = sinTimesCos(x[0]); };
  assert.equal(reductions(local), 1);
  assert.equal(reductions(param, ["float32", F32, F32]), 1);
  assert.equal(reductions(expression, [F32, F32]), 1);
  assert.equal(reductions(branches, [F32, F32]), 1);
  assert.equal(reductions(device, [F32, F32]), 1);
});

test("sincos pass: values that may differ between the calls are not shared", () => {
  const reassigned = (x: Float32Array, s: Float32Array) => {
    let v = x[0];
    const a = Math.sin(v);
    v = v + 1;
    s[0] = a + Math.cos(v);
  };
  // a load is not one value: a store may come between the two calls
  const loads = (x: Float32Array, s: Float32Array) => { s[0] = Math.sin(x[0]) + Math.cos(x[0]); };
  const different = (x: Float32Array, s: Float32Array) => {
    const v = x[0];
    s[0] = Math.sin(v) + Math.cos(v + 1);
  };
  assert.equal(reductions(reassigned, [F32, F32]), 2);
  assert.equal(reductions(loads, [F32, F32]), 2);
  assert.equal(reductions(different, [F32, F32]), 2);
});

const bitsOf = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0]!;
const fromBits = (b: number) => new Float32Array(new Uint32Array([b]).buffer)[0]!;

/** The finite float32 values within `n` floats of each center, both signs. */
function around(centers: readonly number[], n: number): number[] {
  return centers.flatMap((c) => {
    const b = bitsOf(Math.abs(c));
    const near = Array.from({ length: 2 * n + 1 }, (_, d) => b - n + d).filter((bits) => bits >= 0 && bits < 0x7f800000);
    return near.map(fromBits).flatMap((v) => [v, -v]);
  });
}

/** Deterministic float32 values uniform in [lo, hi). */
function uniform(n: number, lo: number, hi: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return Math.fround(lo + ((hi - lo) * s) / 2 ** 32);
  });
}

const SPECIALS = [NaN, Infinity, -Infinity, 0, -0, 1.4e-45, -1.4e-45, 3.4e38, -3.4e38];

/** Every result within 1 ulp of the correctly rounded value (the float64 function rounded), special results exact. */
function assertWithinOneUlp(name: string, x: Float32Array, got: Float32Array, f: (v: number) => number): void {
  const bad = [...x.keys()].filter((i) => !(Math.abs(ulpDistance(got[i]!, Math.fround(f(x[i]!)), "f32")) <= 1));
  assert.deepEqual(bad.slice(0, 5).map((i) => `${name}(${x[i]}) = ${got[i]}, want ${Math.fround(f(x[i]!))}`), []);
}

// sin and cos of every kind of argument: tiny (the 2^-12 select), quadrant boundaries, the Cody–Waite
// limit 105615, huge (the float64 Payne–Hanek path), specials
const TRIG_ARGS = new Float32Array([
  ...uniform(3000, -200, 200, 7), ...uniform(500, -1e-3, 1e-3, 8), ...uniform(200, -1e30, 1e30, 9),
  ...around([Math.PI / 4, Math.PI / 2, Math.PI, 3 * Math.PI / 2, 2.44140625e-4, 105615], 40), ...SPECIALS,
]);

test("sin and cos of one value in one kernel: bit for bit the separate calls', within 1 ulp, on the simulator, ptxas and ptxsim", async () => {
  const sinAlone = runKernel(mathKernel("sin", 1), [TRIG_ARGS]) as Float32Array;
  const cosAlone = runKernel(mathKernel("cos", 1), [TRIG_ARGS]) as Float32Array;
  assertWithinOneUlp("sin", TRIG_ARGS, sinAlone, Math.sin);
  assertWithinOneUlp("cos", TRIG_ARGS, cosAlone, Math.cos);
  const differ = (got: Float32Array, want: Float32Array) => [...got.keys()].filter((i) => !sameBits(got[i]!, want[i]!)).map((i) => TRIG_ARGS[i]);
  await runCase({
    name: "sincos_shared",
    kernel: (x: Float32Array, s: Float32Array, c: Float32Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        const v = x[i];
        s[i] = Math.sin(v);
        c[i] = Math.cos(v);
      }
    },
    grid: Math.ceil(TRIG_ARGS.length / 128), block: 128,
    args: () => [TRIG_ARGS.slice(), new Float32Array(TRIG_ARGS.length), new Float32Array(TRIG_ARGS.length)],
    check: ([, s, c]) => {
      assert.deepEqual(differ(s as Float32Array, sinAlone), []);
      assert.deepEqual(differ(c as Float32Array, cosAlone), []);
    },
  });
});

// The branch-free functions around each former branch point, and over a range where one warp mixes them
const BRANCHLESS: readonly { name: "tanh" | "exp" | "log"; f: (v: number) => number; args: number[] }[] = [
  { name: "tanh", f: Math.tanh, args: [...around([2.44140625e-4, 0.625, 9.010913848876953], 2000), ...uniform(4000, -10, 10, 11)] },
  { name: "exp", f: Math.exp, args: [...around([104, 103.97207641601562, 89, 88.72283172607422, 87.33654022216797], 2000), ...uniform(4000, -110, 95, 12)] },
  { name: "log", f: Math.log, args: [...around([1.1754943508222875e-38, 3.4028234663852886e38, 1, 1.4e-45], 2000), ...uniform(4000, 0, 100, 13)] },
];

for (const { name, f, args } of BRANCHLESS) {
  test(`${name} without branches: within 1 ulp around its former branch points and with mixed inputs in a warp; specials exact`, async () => {
    const x = new Float32Array([...args, ...SPECIALS]);
    await runCase({
      name: `${name}_branchless`,
      kernel: mathKernel(name, 1) as Kernel,
      grid: Math.ceil(x.length / 128), block: 128,
      args: () => [x.slice(), new Float32Array(x.length)],
      check: ([, out]) => assertWithinOneUlp(name, x, out as Float32Array, f),
    });
  });
}

test("tanh keeps −0 and saturates to ±1 exactly", () => {
  const x = new Float32Array([-0, 0, 9.010913848876953, -9.010913848876953, 20, -1e30, Infinity, -Infinity]);
  const out = runKernel(mathKernel("tanh", 1), [x]);
  assert.deepEqual([...out], [-0, 0, 1, -1, 1, -1, 1, -1]);
});
