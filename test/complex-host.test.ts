// Complex numbers on the host side: `{ re, im }` scalar arguments, complex device arrays, complex
// arrays in `env`, reductions and ufuncs over complex, and views of complex arrays in kernels. Every
// kernel runs on the current target against a host reference (NumPy's formulas in plain JS), through
// ptxas, and on ptxsim bit for bit (test/helpers/crosscheck.ts).

import assert from "node:assert/strict";
import { test } from "node:test";
import { complex128, complex64, cuda, LaunchError, type Complex, type KernelArray1 } from "../src/index.js";
import { randomFloats, runCase, type KernelCase } from "./helpers/crosscheck.js";
import { hostComplex, type C } from "./cases/complex.js";

process.env.NUMBATS_TARGET ??= "sim";

const h64 = hostComplex((x) => x), h32 = hostComplex(Math.fround);
const pairs = (a: ArrayLike<number>, i: number): C => [a[2 * i]!, a[2 * i + 1]!];
const N = 40;

// ------------------------------------------------------------------ complex scalar arguments

/** out[i] = a[i] · z + w over interleaved arrays: two complex scalars. */
const affine = (z: Complex, a: KernelArray1<Complex>, w: Complex, out: KernelArray1<Complex>) => {
  const i = cuda.grid(1);
  if (i < a.length) out[i] = cuda.cmath.add(cuda.cmath.mul(a[i], z), w);
};

const SCALAR_CASES: KernelCase[] = [
  {
    name: "a plain { re, im } argument is a complex128 scalar (lazy typing): z · x and x / z with float64 x, NumPy's formulas bit for bit",
    kernel: (z: Complex, x: Float64Array, out: Float64Array) => {
      const i = cuda.grid(1);
      if (i >= x.length) return;
      const p = cuda.cmath.mul(z, x[i]), q = cuda.cmath.div(x[i], z);
      out[4 * i] = p.re; out[4 * i + 1] = p.im;
      out[4 * i + 2] = q.re; out[4 * i + 3] = q.im;
    },
    options: { fma: false },
    grid: 2, block: 32,
    args: () => [{ re: 1.5, im: -0.3 }, randomFloats(Float64Array, N, 11, -3, 3), new Float64Array(4 * N)],
    check: ([, x, out]) => {
      const z: C = [1.5, -0.3];
      for (let i = 0; i < N; i++) {
        const xi: C = [(x as Float64Array)[i]!, 0];
        assert.deepEqual(pairs(out as Float64Array, 2 * i), h64.mul(z, xi), `z · x[${i}]`);
        assert.deepEqual(pairs(out as Float64Array, 2 * i + 1), h64.div(xi, z), `x[${i}] / z`);
      }
    },
  },
  {
    name: "an eager complex64 scalar parameter takes { re, im } (parts rounded to float32) and complex64(re, im); a * z + w on complex64 arrays",
    kernel: affine,
    options: { signature: "void(complex64, complex64[:], complex64, complex64[:])", fma: false },
    grid: 2, block: 32,
    args: () => [{ re: 0.1, im: 2.7 }, randomFloats(Float32Array, 2 * N, 12, -3, 3), complex64(-1.3, 0.2), new Float32Array(2 * N)],
    check: ([, a, , out]) => {
      const z: C = [Math.fround(0.1), Math.fround(2.7)], w: C = [Math.fround(-1.3), Math.fround(0.2)];
      for (let i = 0; i < N; i++) assert.deepEqual(pairs(out as Float32Array, i), h32.add(h32.mul(pairs(a as Float32Array, i), z), w), `element ${i}`);
    },
  },
  {
    name: "a complex scalar parameter is a local: reassigned in a loop (z = z · z + c, a Julia orbit), printed as (re±imj)",
    kernel: (z: Complex, c: Complex, out: Float64Array) => {
      for (let k = 0; k < 5; k++) z = cuda.cmath.add(cuda.cmath.mul(z, z), c);
      out[0] = z.re; out[1] = z.im;
      console.log(z, c);
    },
    options: { fma: false },
    grid: 1, block: 1,
    args: () => [{ re: 0.25, im: 0.5 }, complex128(-0.5, 0.125), new Float64Array(2)],
    check: ([, , out], printed) => {
      let z: C = [0.25, 0.5];
      for (let k = 0; k < 5; k++) z = h64.add(h64.mul(z, z), [-0.5, 0.125]);
      assert.deepEqual(pairs(out as Float64Array, 0), z);
      const g = (x: number) => String(Number(x.toPrecision(6)));
      assert.deepEqual(printed, [`(${g(z[0])}${z[1] < 0 ? "-" : "+"}${g(Math.abs(z[1]))}j) (-0.5+0.125j)`]);
    },
  },
];

for (const c of SCALAR_CASES) test(c.name, () => runCase(c));
