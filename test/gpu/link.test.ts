// Kernels linked with device code compiled elsewhere, on the GPU (npm run test:gpu) or the emulated
// GPU (npm run test:emu): functions from a .ptx file, from PTX text and from CUDA C++ compiled by NVRTC,
// each checked against a host reference; a declared function nothing defines is the linker's error.
// Skips, saying why, without a GPU; the CUDA C++ part also without NVRTC.

import { test } from "node:test";
import assert from "node:assert/strict";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { nvrtc } from "../../src/backends/cuda/nvrtc/nvrtc.js";
import { cuda, CudaError } from "../../src/index.js";

process.env.NUMBATS_TARGET = "cuda";
const probe = probeCuda();
const noGpu = probe.ok ? false : `no usable GPU: ${probe.reason.split("\n")[0]}`;
if (noGpu) console.log(`# test/gpu/link.test.ts skipped: ${noGpu}`);
const noNvrtc = noGpu || (() => {
  try {
    nvrtc();
    return false;
  } catch (e) {
    return `NVRTC is not installed: ${(e as Error).message.split("\n")[0]}`;
  }
})();
if (noNvrtc && !noGpu) console.log(`# test/gpu/link.test.ts: CUDA C++ skipped: ${noNvrtc}`);

const f32 = Math.fround;
const fixture = new URL("../fixtures/link/scale.ptx", import.meta.url);

// scale.ptx defines scale_add(x, a, k) = x * a + k and bump(p, n): p[0..n) += 1
const scaleAdd = cuda.declareDevice("scale_add", "float32(float32, float32, int32)", { sim: (x: number, a: number, k: number) => f32(x * a) + k });
const bump = cuda.declareDevice("bump", "void(float32[:], int32)", { sim: (p: Float32Array, n: number) => { for (let i = 0; i < n; i++) p[i] = f32(p[i]! + 1); } });

test("a kernel calling functions defined in a .ptx file: values and a pointer the function writes", { skip: noGpu }, () => {
  const k = cuda.jit((x: Float32Array, out: Float32Array, rows: Float32Array) => {
    const i = cuda.grid(1);
    if (i < out.length) {
      out[i] = scaleAdd(x[i], 1.5, i);
      bump(rows.subarray(i * 3, i * 3 + 3), 2);
    }
  }, { link: [fixture] });
  const n = 200;
  const x = Float32Array.from({ length: n }, (_, i) => (i - 90) / 7), out = new Float32Array(n), rows = new Float32Array(3 * n).fill(0.5);
  k.forall(n)(x, out, rows);
  assert.deepEqual([...out], [...x].map((v, i) => f32(f32(v * 1.5) + i)));
  assert.deepEqual([...rows], Array.from({ length: 3 * n }, (_, j) => (j % 3 < 2 ? 1.5 : 0.5)));
});

test("called from a device function inside nested loops (the call's result is defined in the loop, not hoisted)", { skip: noGpu }, () => {
  const halveStep = cuda.jit((x: number, n: number) => { let s = x; for (let j = 0; j < n; j++) s = scaleAdd(s, 0.5, j); return s; }, { device: true });
  const k = cuda.jit((o: Float32Array, n: number) => {
    const i = cuda.grid(1);
    if (i < o.length) {
      let t = 0;
      for (let r = 0; r < 3; r++) t += halveStep(o[i] + r, n);
      o[i] = t;
    }
  }, { link: [fixture] });
  const o = Float32Array.from({ length: 40 }, (_, i) => i * 0.75);
  const want = o.map((v) => {
    let t = 0;
    for (let r = 0; r < 3; r++) {
      let s = f32(v + r);
      for (let j = 0; j < 5; j++) s = f32(f32(s * 0.5) + j);
      t = f32(t + s);
    }
    return t;
  });
  k.forall(40)(o, 5);
  assert.deepEqual([...o], [...want]);
});

test("PTX text as a link entry ({ ptx, name }), and the same symbol linked into two kernels", { skip: noGpu }, () => {
  const ptx = `.version 7.8\n.target sm_75\n.address_size 64\n.visible .func (.param .b64 func_retval0) halve(.param .b64 p)\n{\n\t.reg .f64 %fd<3>;\n\tld.param.f64 %fd1, [p];\n\tmul.rn.f64 %fd2, %fd1, 0d3FE0000000000000;\n\tst.param.f64 [func_retval0], %fd2;\n\tret;\n}\n`;
  const halve = cuda.declareDevice("halve", "float64(float64)", { sim: (v: number) => v / 2 });
  const a = cuda.jit((o: Float64Array) => { const i = cuda.grid(1); if (i < o.length) o[i] = halve(o[i]); }, { link: [{ ptx, name: "halve.ptx" }] });
  const b = cuda.jit((o: Float64Array) => { const i = cuda.grid(1); if (i < o.length) o[i] = halve(halve(o[i]) + 1); }, { link: [{ ptx, name: "halve.ptx" }] });
  const o = Float64Array.from({ length: 64 }, (_, i) => i * 3.25);
  a.forall(64)(o);
  b.forall(64)(o);
  assert.deepEqual([...o], Array.from({ length: 64 }, (_, i) => (i * 3.25 / 2 / 2 + 1) / 2));
});

test("CUDA C++ compiled by NVRTC ({ source, name }) and linked: integer, bool and float results", { skip: noNvrtc }, () => {
  const source = `
    extern "C" __device__ int collatz_steps(long long n) { int s = 0; while (n != 1) { n = (n & 1) ? 3 * n + 1 : n / 2; s++; } return s; }
    extern "C" __device__ bool is_square(unsigned int v) { unsigned int r = (unsigned int)sqrtf((float)v); return r * r == v || (r + 1) * (r + 1) == v; }
    extern "C" __device__ double cube(double x) { return x * x * x; }
  `;
  const steps = cuda.declareDevice("collatz_steps", "int32(int64)");
  const square = cuda.declareDevice("is_square", "bool(uint32)");
  const cube = cuda.declareDevice("cube", "float64(float64)");
  const k = cuda.jit((o: Int32Array, sq: Uint8Array, c: Float64Array) => {
    const i = cuda.grid(1);
    if (i < o.length) {
      o[i] = steps(BigInt(i + 1));
      sq[i] = square(i) ? 1 : 0;
      c[i] = cube(i - 20.5);
    }
  }, { link: [{ source, name: "numbers.cu" }] });
  const n = 100, o = new Int32Array(n), sq = new Uint8Array(n), c = new Float64Array(n);
  k.forall(n)(o, sq, c);
  const collatz = (v: number) => { let s = 0; while (v !== 1) { v = v % 2 ? 3 * v + 1 : v / 2; s++; } return s; };
  assert.deepEqual([...o], Array.from({ length: n }, (_, i) => collatz(i + 1)));
  assert.deepEqual([...sq], Array.from({ length: n }, (_, i) => (Number.isInteger(Math.sqrt(i)) ? 1 : 0)));
  // nvcc contracts x * x * x into no fma (two multiplies, each rounded): the same as JavaScript's
  assert.deepEqual([...c], Array.from({ length: n }, (_, i) => (i - 20.5) * (i - 20.5) * (i - 20.5)));
});

test("a declared function that nothing linked defines: the linker's error naming it, with its log", { skip: noGpu }, () => {
  const missing = cuda.declareDevice("not_defined_anywhere", "float32(float32)");
  const alone = cuda.jit((o: Float32Array) => { o[0] = missing(o[0]); });
  const linked = cuda.jit((o: Float32Array) => { o[0] = missing(o[0]) + scaleAdd(1, 2, 3); }, { link: [fixture] });
  for (const [k, what] of [[alone, /it has no `link` entries/], [linked, /it was linked with 'scale\.ptx'/]] as const) {
    assert.throws(() => k.configure(1, 1)(new Float32Array(1)), (e: unknown) => {
      assert.ok(e instanceof CudaError, String(e));
      assert.match(e.message, /Unresolved extern function 'not_defined_anywhere'|Undefined reference to 'not_defined_anywhere'/);
      assert.match(e.message, /calls 'not_defined_anywhere'.*\(declared with cuda\.declareDevice\)/);
      assert.match(e.message, what);
      return true;
    });
  }
});
