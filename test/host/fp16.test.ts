// Half precision beyond the end-to-end cases: the host conversions over every
// binary16 pattern, every math intrinsic over all 65,536 inputs on the
// simulator against independent references (test/helpers/half.ts), the PTX
// instructions chosen, and the errors.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, float16, TypingError } from "../../src/index.js";
import { compileToIR } from "../../src/compiler/index.js";
import { parseSignature } from "../../src/dtypes.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { allHalves, bfloat16Value, doubleToHalf, halfArith, halfValue, toBfloat16 } from "../helpers/half.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import { wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";
import { bfloat16 } from "../../src/index.js";

process.env.NUMBATS_TARGET ??= "sim";

test("float16.toBits/fromBits: every non-NaN half round-trips; NaN bits give NaN, NaN gives 0x7e00", () => {
  for (const h of allHalves()) {
    const v = float16.fromBits(h);
    assert.ok(Object.is(v, halfValue(h)), `fromBits(${h.toString(16)})`);
    assert.equal(float16.toBits(v), h, `toBits(${v})`);
  }
  assert.ok(Number.isNaN(float16.fromBits(0x7c01)) && Number.isNaN(float16.fromBits(0xfe00)));
  assert.equal(float16.toBits(NaN), 0x7e00);
  assert.deepEqual(float16.toBits([1, -2, 65504]), Uint16Array.of(0x3c00, 0xc000, 0x7bff));
  assert.deepEqual(float16.fromBits(Uint16Array.of(0x3555, 0x0001)), Float32Array.of(halfValue(0x3555), 2 ** -24));
});

test("float16.toBits rounds once to nearest even: ties, overflow, subnormals, values a float32 step would round to a tie", () => {
  const cases: [number, number][] = [
    [1 + 2 ** -11, 0x3c00], // tie: to even
    [1 + 3 * 2 ** -11, 0x3c02], // tie: to even (up)
    [1 + 2 ** -11 + 2 ** -40, 0x3c01], // above the tie; through float32 it would become the tie, then 0x3c00
    [65519.99, 0x7bff], [65520, 0x7c00], [-65520, 0xfc00], // the overflow threshold is a tie
    [2 ** -25, 0x0000], [2 ** -25 + 2 ** -60, 0x0001], [3 * 2 ** -25, 0x0002], // smallest subnormal's ties
    [2 ** -14 - 2 ** -25, 0x0400], // rounds up into the smallest normal
    [-0, 0x8000], [Infinity, 0x7c00],
  ];
  for (const [x, bits] of cases) {
    assert.equal(float16.toBits(x), bits, `toBits(${x})`);
    assert.equal(doubleToHalf(x), bits, `reference of ${x}`);
  }
  // random doubles across the whole range against the exact BigInt reference
  let s = 7;
  for (let i = 0; i < 20000; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const x = (s / 2 ** 32 - 0.5) * 2 ** ((i % 48) - 28);
    assert.equal(float16.toBits(x), doubleToHalf(x), `toBits(${x})`);
  }
});

const MATH_SIG = "void(float16[::1], float32[::1])";
const mathKernel = (a: Uint16Array, o: Float32Array) => {
  const i = cuda.grid(1);
  if (i >= a.length) return;
  const x = a[i];
  o[6 * i] = cuda.fp16.hsqrt(x); o[6 * i + 1] = cuda.fp16.hrsqrt(x); o[6 * i + 2] = cuda.fp16.hexp(x);
  o[6 * i + 3] = cuda.fp16.hlog(x); o[6 * i + 4] = cuda.fp16.hsin(x); o[6 * i + 5] = cuda.fp16.hcos(x);
};

test("hsqrt hrsqrt hexp hlog hsin hcos are correctly rounded for all 65,536 inputs (simulator)", () => {
  const a = Uint16Array.from({ length: 65536 }, (_, i) => i);
  const o = new Float32Array(6 * 65536);
  cuda.jit(mathKernel, { signature: MATH_SIG }).configure(256, 256)(a, o);
  const refs = [Math.sqrt, (x: number) => 1 / Math.sqrt(x), Math.exp, Math.log, Math.sin, Math.cos];
  for (let h = 0; h < 65536; h++) {
    const X = halfValue(h);
    refs.forEach((f, j) => {
      const got = o[6 * h + j]!, want = halfValue(doubleToHalf(f(X)));
      assert.ok(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)), `intrinsic ${j} of 0x${h.toString(16)}: ${got}, want ${want}`);
    });
  }
});

test("hadd hsub hmul hdiv hfma round once on random operand triples (simulator, exact BigInt references)", () => {
  const n = 1 << 15;
  let s = 99;
  const next = () => { s = (s * 1664525 + 1013904223) >>> 0; return s >>> 16; };
  const [a, b, c] = [0, 1, 2].map(() => Uint16Array.from({ length: n }, next)) as [Uint16Array, Uint16Array, Uint16Array];
  const o = new Float32Array(5 * n);
  cuda.jit((a: Uint16Array, b: Uint16Array, c: Uint16Array, o: Float32Array) => {
    const i = cuda.grid(1);
    if (i >= a.length) return;
    o[5 * i] = cuda.fp16.hadd(a[i], b[i]); o[5 * i + 1] = cuda.fp16.hsub(a[i], b[i]); o[5 * i + 2] = cuda.fp16.hmul(a[i], b[i]);
    o[5 * i + 3] = cuda.fp16.hdiv(a[i], b[i]); o[5 * i + 4] = cuda.fp16.hfma(a[i], b[i], c[i]);
  }, { signature: "void(float16[::1], float16[::1], float16[::1], float32[::1])" }).configure(n / 256, 256)(a, b, c, o);
  const ops = ["add", "sub", "mul", "div", "fma"] as const;
  for (let i = 0; i < n; i++) {
    ops.forEach((op, j) => {
      const got = o[5 * i + j]!, want = halfValue(halfArith(op, a[i]!, b[i]!, c[i]!));
      assert.ok(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)), `h${op}(0x${a[i]!.toString(16)}, 0x${b[i]!.toString(16)}, 0x${c[i]!.toString(16)}): ${got}, want ${want}`);
    });
  }
});

test("PTX: hadd/hsub/hmul/hfma are add/sub/mul/fma.rn.f16 from sm_53 and go through float32 before", () => {
  const k = (a: Uint16Array, o: Uint16Array) => {
    const i = cuda.grid(1);
    o[i] = cuda.fp16.hfma(cuda.fp16.hadd(a[i], 1), cuda.fp16.hmul(a[i], a[i]), cuda.fp16.hsub(a[i], 0.5));
  };
  const ir = compileToIR(k, [...parseSignature("void(float16[::1], float16[::1])").args], { name: "k" });
  const sm80 = emitPtx(ir, { computeCapability: [8, 0] }).text;
  for (const inst of ["add.rn.f16", "sub.rn.f16", "mul.rn.f16", "fma.rn.f16"]) assert.match(sm80, new RegExp(inst.replace(/\./g, "\\.")));
  if (hasPtxas()) { ptxasCheck(sm80, "sm_80"); ptxasCheck(sm80, "sm_90"); }
  const hadd = compileToIR((a: Uint16Array, o: Uint16Array) => { o[0] = cuda.fp16.hadd(a[0], a[1]); }, [...parseSignature("void(float16[::1], float16[::1])").args], { name: "h" });
  const sm50 = emitPtx(hadd, { computeCapability: [5, 0] }).text;
  assert.doesNotMatch(sm50, /add\.rn\.f16/);
  assert.match(sm50, /add\.rn\.f32/);
  assert.throws(() => emitPtx(ir, { computeCapability: [5, 0] }), /fma on float16 \(cuda\.fma, cuda\.fp16\.hfma\) needs compute capability 5\.3/);
});

test("cuda.fp16 errors name the intrinsic: wrong argument count, an array argument", () => {
  // @ts-expect-error: one argument, as a user might write it
  assert.throws(() => cuda.jit((a: Float32Array) => { a[0] = cuda.fp16.hadd(a[0]!); }, { signature: "void(float32[:])" }),
    (e: unknown) => e instanceof TypingError && /cuda\.fp16\.hadd takes 2 argument\(s\); got 1/.test(e.message));
  assert.throws(() => cuda.jit((a: Float32Array) => { a[0] = cuda.fp16.hsqrt(a as unknown as number); }, { signature: "void(float32[:])" }),
    (e: unknown) => e instanceof TypingError && /cuda\.fp16\.hsqrt needs numbers; got array\(float32, 1d, A\)/.test(e.message));
  assert.throws(() => cuda.fp16.hadd(1, 2), /cuda\.fp16\.hadd can only be used inside a kernel/);
});

test("bfloat16.toBits/fromBits: every non-NaN pattern round-trips; ties to even; rounding once from a double", () => {
  for (let h = 0; h < 65536; h++) {
    const v = bfloat16Value(h);
    if (Number.isNaN(v)) { assert.ok(Number.isNaN(bfloat16.fromBits(h))); continue; }
    assert.ok(Object.is(bfloat16.fromBits(h), v), `fromBits(${h.toString(16)})`);
    assert.equal(bfloat16.toBits(v), h, `toBits(${v})`);
  }
  assert.equal(bfloat16.toBits(1 + 2 ** -8), 0x3f80); // tie: to even
  assert.equal(bfloat16.toBits(1 + 2 ** -8 + 2 ** -40), 0x3f81); // Math.fround first would give the tie, then 0x3f80
  assert.equal(bfloat16.toBits(NaN), 0x7fc0);
  assert.deepEqual(bfloat16.toBits([1, -2]), Uint16Array.of(0x3f80, 0xc000));
  let s = 3;
  for (let i = 0; i < 20000; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const x = (s / 2 ** 32 - 0.5) * 2 ** ((i % 280) - 140);
    assert.equal(bfloat16.toBits(x), toBfloat16(x), `toBits(${x})`);
  }
});

test("PTX before sm_80 rounds float32 to bfloat16 with integer instructions (no cvt.rn.bf16.f32): the same bits on ptxsim", async () => {
  const k = (x: Float32Array, o: Uint16Array) => { const i = cuda.grid(1); if (i < x.length) o[i] = bfloat16(x[i]); };
  const ir = compileToIR(k, [...parseSignature("void(float32[::1], bfloat16[::1])").args], { name: "k" });
  const sm75 = emitPtx(ir, { computeCapability: [7, 5] });
  assert.doesNotMatch(sm75.text, /bf16/);
  assert.match(emitPtx(ir, { computeCapability: [8, 0] }).text, /cvt\.rn\.bf16\.f32/);
  if (hasPtxas()) ptxasCheck(sm75.text, "sm_75");
  const special = [1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4028234663852886e38, 3.3961e38, -Infinity, NaN, 2 ** -149, 2 ** -134, -0, 1.00390625];
  let s = 11;
  const x = Float32Array.from({ length: 512 }, (_, i) => {
    s = (s * 1103515245 + 12345) >>> 0;
    return special[i] ?? (s / 2 ** 32 - 0.5) * 2 ** ((i % 256) - 128);
  });
  const o = new Uint16Array(x.length);
  await runOnPtxsim(sm75, { grid: [2, 1, 1], block: [256, 1, 1], sharedMemBytes: 0 }, [
    { kind: "array", buffer: wrapHostArray(x), byteOffset: 0, dtype: "float32", shape: [x.length], strides: [1], name: "x" },
    { kind: "array", buffer: wrapHostArray(o), byteOffset: 0, dtype: "bfloat16", shape: [o.length], strides: [1], name: "o" },
  ]);
  x.forEach((v, i) => assert.equal(o[i], toBfloat16(v), `bfloat16(${v})`));
});

test("float16 and bfloat16 device arrays: cuda.toDevice(bits, { dtype }) and copyToHost() give Uint16Array bits", () => {
  const src = bfloat16.toBits([1.5, -2, 1e30]);
  const d = cuda.toDevice(src, { dtype: bfloat16 });
  assert.equal(d.dtype, "bfloat16");
  const out = cuda.deviceArray(3, "float16");
  cuda.jit((a: Uint16Array, o: Uint16Array) => { const i = cuda.grid(1); if (i < a.length) o[i] = a[i] * 2; }).configure(1, 32)(d, out);
  const bits = out.copyToHost();
  assert.ok(bits instanceof Uint16Array);
  assert.deepEqual(Array.from(bits), [float16.toBits(3), float16.toBits(-4), 0x7c00]); // 2e30 overflows float16
  assert.deepEqual(Array.from(d.copyToHost()), Array.from(src));
  assert.throws(() => cuda.toDevice(new Float32Array(2), { dtype: "float16" }), /dtype mismatch: the device array holds float16, the host array float32/);
});
