// Complex numbers at the edges of the API: device arrays for complex parameters, the signature's
// spelling of complex types, and the errors a user meets. (The kernels' results are checked in
// test/cases/complex.ts, run by test/host/e2e.test.ts.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, ndarray, LaunchError, TypingError, type Complex, type KernelArray1 } from "../../src/index.js";
import { parseSignature, typeToString } from "../../src/dtypes.js";

process.env.NUMBATS_TARGET ??= "sim";

const conjugate = (a: KernelArray1<Complex>) => {
  const i = cuda.grid(1);
  if (i < a.length) a[i] = cuda.cmath.conj(a[i]);
};

test("a complex64 parameter takes a device array of interleaved float32 (re, im) pairs; a 2-d array's last axis holds the pairs", () => {
  const k = cuda.jit(conjugate, { signature: "void(complex64[:])" });
  const d = cuda.toDevice(new Float32Array([1, 2, 3, -4]));
  k.configure(1, 32)(d);
  assert.deepEqual(Array.from(d.copyToHost() as Float32Array), [1, -2, 3, 4]);

  const rows = cuda.jit((a: KernelArray1<KernelArray1<Complex>>, out: Float64Array) => {
    const i = cuda.grid(1);
    if (i < a.length) out[i] = a[i][1].im * 10 + a.shape[1] + a.ndim * 100;
  }, { signature: "void(complex128[:, :], float64[:])" });
  const out = new Float64Array(2);
  rows.configure(1, 32)(cuda.toDevice(ndarray(new Float64Array([0, 0, 1, 7, 0, 0, 1, 8]), [2, 4])), out);
  assert.deepEqual(Array.from(out), [70 + 2 + 200, 80 + 2 + 200]);
});

test("signatures spell complex types as Numba does", () => {
  const sig = parseSignature("void(complex64[::1], complex128)");
  assert.deepEqual(sig.args.map(typeToString), ["array(complex64, 1d, C)", "complex128"]);
});

test("a float array with an odd number of elements is refused for a complex parameter, naming the argument", () => {
  const k = cuda.jit(conjugate, { signature: "void(complex64[:])" });
  assert.throws(() => k.configure(1, 32)(new Float32Array(3)), (e: unknown) =>
    e instanceof LaunchError && /argument 1 \('a'\) is for a complex64 parameter, which takes interleaved \(re, im\) float32 pairs; its last dimension has 3 elements/.test(e.message));
});

test("complex values have no ordering, no bitwise operators and only .re and .im", () => {
  const sig = { signature: "void(complex128[:], float64[:])" } as const;
  const cases: [(a: Float64Array, o: Float64Array) => void, RegExp][] = [
    [(a, o) => { o[0] = a[0] < a[1] ? 1 : 0; }, /'<' is not defined on complex numbers \(they have \+ - \* \/ === !==\)/],
    [(a, o) => { o[0] = a[0] & 1; }, /'&' is not defined on complex numbers/],
    [(a, o) => { o[0] = (a[0] as unknown as { real: number }).real; }, /'real' is not a property of complex128/],
    [(a, o) => { o[0] = cuda.cmath.abs(a[0] > 0); }, /cuda\.cmath\.abs takes complex or real numbers; got bool|'>' is not defined on complex numbers/],
    [(_a, o) => { o[0] = cuda.cmath.abs(cuda.complex(1, 2, 3 as never)); }, /cuda\.complex takes 1 or 2 arguments \(re, im\); got 3/],
    [(a, o) => { o[0] = cuda.cmath.pow(a[0] as never); }, /cuda\.cmath\.pow takes 2 argument\(s\); got 1/],
  ];
  for (const [fn, message] of cases) {
    assert.throws(() => cuda.jit(fn, sig), (e: unknown) => e instanceof TypingError && message.test(e.message), String(fn));
  }
});
