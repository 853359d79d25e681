// Complex numbers on the host side: `{ re, im }` scalar arguments, complex device arrays, complex
// arrays in `env`, reductions and ufuncs over complex, and views of complex arrays in kernels. Every
// kernel runs on the current target against a host reference (NumPy's formulas in plain JS), through
// ptxas, and on ptxsim bit for bit (test/helpers/crosscheck.ts).

import assert from "node:assert/strict";
import { test } from "node:test";
import { complex128, complex64, cuda, float32, int32, ndarray, CompileError, LaunchError, NDArray, type Complex, type Kernel, type KernelArray1 } from "../../src/index.js";
import { randomFloats, runCase, type KernelCase } from "../helpers/crosscheck.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { hostComplex, type C } from "../cases/complex.js";

process.env.NUMBATS_TARGET ??= "sim";

const h64 = hostComplex((x) => x), h32 = hostComplex(Math.fround);
const pairs = (a: ArrayLike<number>, i: number): C => [a[2 * i]!, a[2 * i + 1]!];
const N = 40;

/** A kernel's PTX for each compiled signature through ptxas (for launches the case runner cannot take: device arrays). */
function ptxasEach(k: Kernel<never>): void {
  if (!hasPtxas()) return;
  for (const sig of k.signatures) for (const arch of ["sm_80", "sm_90"] as const) ptxasCheck(k.inspectAsm(sig, { computeCapability: [8, 0] }), arch);
}

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

// ------------------------------------------------------------------ complex device arrays

test("cuda.toDevice(a, { dtype: complex64 }) and cuda.deviceArray(n, \"complex128\"): shape counts complex elements, copyToHost is interleaved, a lazy kernel types them complex", () => {
  const host = randomFloats(Float32Array, 2 * N, 21, -2, 2);
  const a = cuda.toDevice(host, { dtype: complex64 });
  assert.deepEqual([a.shape, a.size, a.complex, a.dtype, a.itemsize, a.nbytes], [[N], N, "complex64", "float32", 8, 8 * N]);
  assert.deepEqual(cuda.toDevice(host, { dtype: "c8" }).copyToHost(), host);
  const out = cuda.deviceArray(N, "complex128");
  assert.deepEqual([out.shape, out.complex, out.dtype, out.itemsize], [[N], "complex128", "float64", 16]);
  const k = cuda.jit(affine, { fma: false });
  k.configure(2, 32)(complex64(0.5, -2), a, { re: 1, im: 1 }, out);
  assert.deepEqual(k.signatures, ["void(complex64, array(complex64, 1d, C), complex128, array(complex128, 1d, C))"]);
  ptxasEach(k);
  const got = out.copyToHost();
  assert.ok(got instanceof Float64Array && got.length === 2 * N);
  for (let i = 0; i < N; i++) {
    // complex64 × complex64 in float32, then + complex128 in float64 (NumPy's promotion)
    const p = h32.mul(pairs(host, i), [0.5, -2]);
    assert.deepEqual(pairs(got, i), h64.add(p, [1, 1]), `element ${i}`);
  }
});

test("complex device arrays: 2-d host data holds the pairs along its last axis; slices, copies back into a target, and mismatches are errors that say why", () => {
  const host = Float64Array.from({ length: 12 }, (_, i) => i);
  const rows = cuda.toDevice(ndarray(host, [2, 6]), { dtype: complex128 });
  assert.deepEqual(rows.shape, [2, 3]);
  const back = rows.copyToHost();
  assert.ok(back instanceof NDArray);
  assert.deepEqual([back.shape, Array.from(back.data)], [[2, 6], Array.from(host)]);
  assert.deepEqual(Array.from(rows.slice(null, 1).copyToHost() as Float64Array), [2, 3, 8, 9], "column 1: one complex per row");
  const d = cuda.toDevice(host, { dtype: complex128 });
  assert.deepEqual(d.shape, [6]);
  // every other complex element: a strided view copies pairs, not parts
  assert.deepEqual(Array.from(d.slice([1, null, 2]).copyToHost() as Float64Array), [2, 3, 6, 7, 10, 11]);
  const target = new Float64Array(12);
  d.copyToHost(target);
  assert.deepEqual(target, host);
  assert.throws(() => d.copyToHost(new Float64Array(6)), (e: unknown) => e instanceof RangeError && /complex128: interleaved \(re, im\) float64 parts, \[12\] of them/.test(e.message));
  assert.throws(() => cuda.toDevice(new Float32Array(3), { dtype: complex64 }), (e: unknown) => e instanceof RangeError && /interleaved \(re, im\) float32 pairs along its last dimension, which must be even; got shape \[3\]/.test(e.message));
  assert.throws(() => cuda.toDevice(new Float64Array(4), { dtype: complex64 }), /dtype mismatch: the device array holds float32, the host array float64/);
  const k = cuda.jit((x: Float32Array) => { x[0] = 1; }, { signature: "void(float32[:])" });
  assert.throws(() => k.configure(1, 1)(cuda.deviceArray(2, complex64) as never), (e: unknown) => e instanceof LaunchError && /cannot take \(array\(complex64, 1d, C\)\)/.test(e.message));
});

// ------------------------------------------------------------------ complex arrays in env (constant memory)

const TWIDDLES = Float64Array.from({ length: 16 }, (_, k) => (k % 2 === 0 ? Math.cos : Math.sin)((-2 * Math.PI * (k >> 1)) / 8));
const GRID = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, 0.5, 0.25, 0.125, 2]);

const ENV_CASES: KernelCase[] = [
  {
    name: "complex arrays in env ({ data, dtype }): a complex128 TypedArray and a 2-d complex64 ndarray in constant memory, read as complex elements",
    kernel: (a: KernelArray1<Complex>, out: KernelArray1<Complex>, dims: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      out[i] = cuda.cmath.mul(a[i], W[i % W.length]);
      out[a.length + i] = cuda.cmath.add(out[i], G[i % 2][i % G.shape[1]]);
      if (i === 0) { dims[0] = W.length; dims[1] = G.shape[0]; dims[2] = G.shape[1]; dims[3] = W.size; }
    },
    options: { signature: "void(complex128[:], complex128[:], int32[:])", fma: false, env: {
      W: { data: TWIDDLES, dtype: complex128 },
      G: { data: GRID, shape: [2, 8], stride: [8, 1], offset: 0, dtype: "complex64" },
    } },
    grid: 1, block: 32,
    args: () => [randomFloats(Float64Array, 2 * 20, 31, -1, 1), new Float64Array(4 * 20), new Int32Array(4)],
    check: ([a, out, dims]) => {
      assert.deepEqual(Array.from(dims as Int32Array), [8, 2, 4, 8]);
      for (let i = 0; i < 20; i++) {
        const p = h64.mul(pairs(a as Float64Array, i), pairs(TWIDDLES, i % 8));
        assert.deepEqual(pairs(out as Float64Array, i), p, `a[${i}] · W`);
        assert.deepEqual(pairs(out as Float64Array, 20 + i), h64.add(p, pairs(GRID, 4 * (i % 2) + (i % 4))), `+ G[${i % 2}][${i % 4}]`);
      }
    },
  },
];

for (const c of ENV_CASES) test(c.name, () => runCase(c));

declare const W: KernelArray1<Complex>, G: KernelArray1<KernelArray1<Complex>>;

test("a complex env array whose data is not its part type, or has an odd number of parts, is a TypingError naming it", () => {
  const f = (o: Float64Array) => { o[0] = W[0].re; };
  assert.throws(() => cuda.jit(f, { signature: "void(float64[:])", env: { W: { data: new Float64Array(4), dtype: complex64 } } }),
    /env value 'W' is a complex64 array: its data must be a Float32Array of interleaved \(re, im\) parts/);
  assert.throws(() => cuda.jit(f, { signature: "void(float64[:])", env: { W: { data: new Float64Array(3), dtype: complex128 } } }),
    /env value 'W' is a complex128 array of interleaved \(re, im\) parts; its last dimension has 3 of them, an odd number/);
});

// ------------------------------------------------------------------ reductions over complex

/** A host fold of interleaved pairs with `op`, in index order (exact when every partial sum is exact). */
const fold = (a: ArrayLike<number>, n: number, op: (x: C, y: C) => C, init: C): C => {
  let acc = init;
  for (let i = 0; i < n; i++) acc = op(acc, pairs(a, i));
  return acc;
};

test("cuda.reduce over complex: sums of a complex128 DeviceArray and of host complex64 parts ({ dtype }), a product, init and res, an empty one", () => {
  const sum = cuda.reduce((a: Complex, b: Complex) => cuda.cmath.add(a, b));
  // small integers: every partial sum is exact, so the tree's order cannot change the result
  const n = 5000;
  const ints = Float64Array.from({ length: 2 * n }, (_, k) => ((k * 7919) % 201) - 100);
  assert.deepEqual(sum(cuda.toDevice(ints, { dtype: complex128 })), { re: fold(ints, n, h64.add, [0, 0])[0], im: fold(ints, n, h64.add, [0, 0])[1] });
  const f32 = Float32Array.from(ints);
  assert.deepEqual(sum(f32, { dtype: complex64, init: { re: 0.5, im: -0.5 } }), { re: fold(f32, n, h64.add, [0.5, -0.5])[0], im: fold(f32, n, h64.add, [0.5, -0.5])[1] });
  assert.deepEqual(sum(f32, { dtype: "complex64", size: 3 }), { re: f32[0]! + f32[2]! + f32[4]!, im: f32[1]! + f32[3]! + f32[5]! });
  // products of unit-modulus powers of i are exact: i^k
  const units = Float64Array.from({ length: 2 * 1001 }, (_, k) => (k % 2 === 0 ? 0 : 1));
  const prod = cuda.reduce((a: Complex, b: Complex) => cuda.cmath.mul(a, b));
  assert.deepEqual(prod(units, { dtype: complex128 }), { re: 0, im: 1 }, "i^1001 = i");
  const res = cuda.deviceArray(1, complex128);
  prod(cuda.toDevice(units.subarray(0, 8), { dtype: complex128 }), { res, init: 2 });
  assert.deepEqual(Array.from(res.copyToHost() as Float64Array), [2, 0], "2 · i^4");
  assert.deepEqual(sum(new Float64Array(0), { dtype: complex128, init: { re: 1, im: 2 } }), { re: 1, im: 2 });
  assert.deepEqual(sum.kernels.length, 2);
  for (const k of sum.kernels) ptxasEach(k as Kernel<never>);
  assert.throws(() => sum(cuda.toDevice(ints, { dtype: complex128 }), { res: cuda.deviceArray(1, "float64") }), /res must be a DeviceArray with at least one element of complex128/);
});

// ------------------------------------------------------------------ views of complex arrays in kernels

const VIEW_N = 24;

const VIEW_CASES: KernelCase[] = [
  {
    name: "subarray of a complex array counts complex elements (negative bounds too); view between complex64 and float32/int32 parts, as NumPy's view",
    kernel: (a: KernelArray1<Complex>, f: Float32Array, tail: KernelArray1<Complex>, mid: KernelArray1<Complex>, parts: Float32Array, bits: Int32Array, zs: KernelArray1<Complex>, lens: Int32Array) => {
      const i = cuda.grid(1);
      const t = a.subarray(2), m = a.subarray(-5, -1);
      const p = a.view("float32"), b = a.subarray(1).view("int32");
      const z = f.view("complex64");
      if (i < t.length) tail[i] = cuda.cmath.mul(t[i], 2);
      if (i < m.length) mid[i] = m[i];
      if (i < p.length) parts[i] = p[i] * 10;
      if (i < b.length) bits[i] = b[i];
      if (i < z.length) zs[i] = cuda.cmath.conj(z[i]);
      if (i === 0) { lens[0] = t.length; lens[1] = m.length; lens[2] = p.length; lens[3] = b.length; lens[4] = z.length; lens[5] = t.size; lens[6] = z.size; }
    },
    options: { signature: "void(complex64[::1], float32[::1], complex64[:], complex64[:], float32[:], int32[:], complex64[:], int32[:])" },
    grid: 2, block: 32,
    args: () => [randomFloats(Float32Array, 2 * VIEW_N, 41, -4, 4), randomFloats(Float32Array, 2 * 7 + 1, 42, -4, 4), new Float32Array(2 * (VIEW_N - 2)),
      new Float32Array(8), new Float32Array(2 * VIEW_N), new Int32Array(2 * (VIEW_N - 1)), new Float32Array(14), new Int32Array(7)],
    check: ([a, f, tail, mid, parts, bits, zs, lens]) => {
      const A = a as Float32Array, F = f as Float32Array;
      assert.deepEqual(Array.from(lens as Int32Array), [VIEW_N - 2, 4, 2 * VIEW_N, 2 * (VIEW_N - 1), 7, VIEW_N - 2, 7]);
      for (let i = 0; i < VIEW_N - 2; i++) assert.deepEqual(pairs(tail as Float32Array, i), h32.mul(pairs(A, i + 2), [2, 0]), `tail ${i}`);
      assert.deepEqual(Array.from(mid as Float32Array), Array.from(A.subarray(2 * (VIEW_N - 5), 2 * (VIEW_N - 1))));
      assert.deepEqual(Array.from(parts as Float32Array), Array.from(A, (x) => Math.fround(x * 10)));
      assert.deepEqual(Array.from(bits as Int32Array), Array.from(new Int32Array(A.buffer, 8)));
      for (let i = 0; i < 7; i++) assert.deepEqual(pairs(zs as Float32Array, i), [F[2 * i]!, -F[2 * i + 1]!], `conj of f's pair ${i}`);
    },
  },
  {
    name: "a complex128 local array viewed as float64 parts and written through the view; a complex view of a float64 subarray",
    kernel: (x: Float64Array, out: KernelArray1<Complex>, s: Float64Array) => {
      const i = cuda.threadIdx.x;
      const loc = cuda.local.array(3, "complex128");
      for (let k = 0; k < 3; k++) loc[k] = cuda.complex(x[k] + i, -i);
      const p = loc.view("float64");
      p[1] = p[1] * 2 - 1;
      out[i] = cuda.cmath.add(loc[0], x.subarray(2).view("complex128")[1]);
      s[i] = p.length + loc.size;
    },
    options: { signature: "void(float64[::1], complex128[:], float64[:])" },
    grid: 1, block: 8,
    args: () => [Float64Array.from([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]), new Float64Array(16), new Float64Array(8)],
    check: ([x, out, s]) => {
      const X = x as Float64Array;
      for (let i = 0; i < 8; i++) {
        assert.deepEqual(pairs(out as Float64Array, i), [X[0]! + i + X[4]!, (-i * 2 - 1) + X[5]!], `thread ${i}`);
        assert.equal((s as Float64Array)[i], 6 + 3);
      }
    },
  },
];

for (const c of VIEW_CASES) test(c.name, () => runCase(c));

test("subarray and view of an array of records are CompileErrors that say what to do instead", () => {
  const P = cuda.record({ x: float32, id: int32 });
  const cases: [(a: { x: number; id: number }[], o: Float32Array) => void, string][] = [
    [(a, o) => { o[0] = (a as unknown as { subarray(b: number): { x: number }[] }).subarray(1)[0]!.x; }, "subarray"],
    [(a, o) => { o[0] = (a as unknown as { view(d: string): Float32Array }).view("float32")[0]!; }, "view"],
  ];
  for (const [fn, what] of cases) {
    assert.throws(() => cuda.jit(fn, { signature: [P.array(1), float32.array(1)] }), (e: unknown) =>
      e instanceof CompileError && e.message.startsWith(`${what} of an array of records is not supported: index its records instead (a[begin + k])`), what);
  }
});

// ------------------------------------------------------------------ ufuncs over complex

test("cuda.vectorize with complex signatures: complex128(complex128, float64) on complex DeviceArrays and host reals; a { re, im } scalar; the result copied back interleaved", () => {
  const scale = cuda.vectorize((z: Complex, x: number) => cuda.cmath.mul(z, x), ["complex128(complex128, float64)"]);
  const z = randomFloats(Float64Array, 2 * N, 51, -2, 2), x = randomFloats(Float64Array, N, 52, -2, 2);
  const d = scale(cuda.toDevice(z, { dtype: complex128 }), x) as InstanceType<typeof cuda.DeviceArray>;
  assert.equal(d.complex, "complex128");
  const got = d.copyToHost() as Float64Array;
  for (let i = 0; i < N; i++) assert.deepEqual(pairs(got, i), h64.mul(pairs(z, i), [x[i]!, 0]), `element ${i}`);
  // a complex scalar broadcast over host reals: no device input, so a host result of interleaved parts
  const host = scale({ re: 0.5, im: -1 }, x) as Float64Array;
  assert.ok(host instanceof Float64Array && host.length === 2 * N);
  for (let i = 0; i < N; i++) assert.deepEqual(pairs(host, i), h64.mul([0.5, -1], [x[i]!, 0]), `scalar · x[${i}]`);
  // a host out of interleaved parts
  const out = new Float64Array(2 * N);
  assert.equal(scale({ re: 2, im: 0 }, x, out), out);
  assert.deepEqual(Array.from(out.filter((_, k) => k % 2 === 0)), Array.from(x, (v) => 2 * v));
  for (const k of scale.kernels) ptxasEach(k as Kernel<never>);
});

test("cuda.vectorize without signatures types complex operands by NumPy's promotion: complex64 with float32 and with a plain complex scalar, complex128 with float64; ufunc.reduce sums complex", () => {
  const mul = cuda.vectorize((a: Complex, b: Complex) => cuda.cmath.mul(a, b));
  const z = randomFloats(Float32Array, 2 * N, 61, -2, 2), w = randomFloats(Float32Array, N, 62, -2, 2);
  const dz = cuda.toDevice(z, { dtype: complex64 });
  const r1 = mul(dz, cuda.toDevice(w)) as InstanceType<typeof cuda.DeviceArray>;
  assert.equal(r1.complex, "complex64");
  const g1 = r1.copyToHost() as Float32Array;
  for (let i = 0; i < N; i++) assert.deepEqual(pairs(g1, i), h32.mul(pairs(z, i), [w[i]!, 0]), `complex64 × float32 [${i}]`);
  const r2 = mul(dz, { re: 0.5, im: -2 }) as InstanceType<typeof cuda.DeviceArray>; // exact products: the result does not depend on fma contraction
  assert.equal(r2.complex, "complex64", "a plain complex scalar is weak");
  const g2 = r2.copyToHost() as Float32Array;
  for (let i = 0; i < N; i++) assert.deepEqual(pairs(g2, i), h32.mul(pairs(z, i), [0.5, -2]), `complex64 × scalar [${i}]`);
  const r3 = mul(dz, cuda.toDevice(Float64Array.from(w))) as InstanceType<typeof cuda.DeviceArray>;
  assert.equal(r3.complex, "complex128", "complex64 with float64 is complex128");
  // ufunc.reduce: integer parts, so the halving order is exact
  const add = cuda.vectorize((a: Complex, b: Complex) => cuda.cmath.add(a, b));
  const ints = Float64Array.from({ length: 2 * 37 }, (_, k) => (k * 13) % 17 - 8);
  const total = fold(ints, 37, h64.add, [0, 0]);
  assert.deepEqual(add.reduce!(cuda.toDevice(ints, { dtype: complex128 })), { re: total[0], im: total[1] });
  for (const k of [...mul.kernels, ...add.kernels]) ptxasEach(k as Kernel<never>);
});

test("vectorize signature selection with complex: a complex input never binds a real signature; reals cast to complex by NumPy's safe casting", () => {
  const f = cuda.vectorize((a: number) => a * 2, ["float64(float64)", "complex128(complex128)"]);
  const r = f(cuda.toDevice(Float64Array.of(1, 2, 3, 4), { dtype: complex128 })) as InstanceType<typeof cuda.DeviceArray>;
  assert.deepEqual([r.complex, Array.from(r.copyToHost() as Float64Array)], ["complex128", [2, 4, 6, 8]]);
  assert.deepEqual(Array.from(f(Float64Array.of(1, 2)) as Float64Array), [2, 4], "a real array picks the real signature");
  const only64 = cuda.vectorize((a: Complex) => cuda.cmath.conj(a), ["complex64(complex64)"]);
  assert.throws(() => only64(cuda.toDevice(Float64Array.of(1, 2), { dtype: complex128 })), /no signature of ufunc .* accepts \(complex128\)/);
  assert.throws(() => only64(Int32Array.of(1)), /no signature of ufunc .* accepts \(int32\)/, "int32 → complex64 is not a safe cast");
  assert.deepEqual(Array.from(only64(Int16Array.of(3, -4)) as Float32Array), [3, -0, -4, -0], "int16 → complex64 is");
});

test("cuda.guvectorize with complex signatures: a complex dot product per row, (n),(n)->() on a complex DeviceArray and a host complex scalar output", () => {
  const dot = cuda.guvectorize((a: KernelArray1<Complex>, b: Float64Array, out: KernelArray1<Complex>) => {
    let acc = cuda.complex(0, 0);
    for (let k = 0; k < a.length; k++) acc = cuda.cmath.add(acc, cuda.cmath.mul(a[k], b[k]));
    out[0] = acc;
  }, ["void(complex128[:], float64[:], complex128[:])"], "(n),(n)->()");
  // integer parts: every sum is exact
  const rows = 3, n = 5;
  const a = Float64Array.from({ length: 2 * rows * n }, (_, k) => (k * 5) % 11 - 5), b = Float64Array.from({ length: n }, (_, k) => k - 2);
  const d = cuda.toDevice(ndarray(a, [rows, 2 * n]), { dtype: complex128 });
  const got = dot(d, b) as InstanceType<typeof cuda.DeviceArray>;
  assert.deepEqual([got.shape, got.complex], [[rows], "complex128"]);
  const host = got.copyToHost() as Float64Array;
  for (let r = 0; r < rows; r++) {
    const want = fold(a.subarray(2 * n * r, 2 * n * (r + 1)).map((x, k) => x * b[k >> 1]!), n, h64.add, [0, 0]);
    assert.deepEqual(pairs(host, r), want, `row ${r}`);
  }
  const out = new Float64Array(2 * rows);
  dot(d, b, out);
  assert.deepEqual(out, host, "a host output of interleaved parts");
  for (const k of dot.kernels) ptxasEach(k as Kernel<never>);
});
