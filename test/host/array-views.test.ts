// In-kernel array views: `a.subarray(begin, end?)` of a 1-d array (writes land in `a`, bounds as
// JavaScript's subarray takes them, indexing checked against the view's length) and `a.view(dtype)`
// (the same bytes as another dtype). Runs on the current target (the simulator, or the GPU under
// `npm run test:emu`) against host references; every kernel's PTX goes through ptxas.

import assert from "node:assert/strict";
import { test } from "node:test";
import { LaunchError, TypingError, cuda, float32, uint16, uint32, uint8 } from "../../src/index.js";
import type { Kernel } from "../../src/kernel.js";
import { PTXAS_TARGETS, hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

function checkPtx(k: Kernel): void {
  if (!hasPtxas()) return;
  for (const sig of k.signatures) for (const { arch, computeCapability } of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(sig, { computeCapability }), arch);
}

/** what JavaScript's subarray gives for these bounds: the reference the kernels must match */
const lengths = (n: number, bounds: readonly [number, number?][]) => bounds.map(([b, e]) => new Float64Array(n).subarray(b, e).length);

const BOUNDS: readonly [number, number?][] = [[2, -2], [-3], [5, 1], [0], [-100, 100], [3, 3], [-1, -5], [7]];

const viewLengths = cuda.jit(function viewLengths(a: Float64Array, begins: Int32Array, ends: Int32Array, out: Int32Array) {
  const i = cuda.grid(1);
  if (i < begins.length) out[i] = ends[i]! === 999 ? a.subarray(begins[i]!).length : a.subarray(begins[i]!, ends[i]!).length;
});

test("subarray's bounds are JavaScript's: negative from the end, clamped, an empty view when end < begin", () => {
  const begins = Int32Array.from(BOUNDS, ([b]) => b);
  const ends = Int32Array.from(BOUNDS, ([, e]) => e ?? 999);
  const out = new Int32Array(BOUNDS.length);
  viewLengths.configure(1, 32)(new Float64Array(8), begins, ends, out);
  assert.deepEqual([...out], lengths(8, BOUNDS));
  checkPtx(viewLengths);
});

const scaleMiddle = cuda.jit(function scaleMiddle(a: Float32Array, from: number, to: number) {
  const mid = a.subarray(from, to);
  const i = cuda.grid(1);
  if (i < mid.length) mid[i] = mid[i]! * 3;
});

test("writes through a subarray land in the array, at the view's offset", () => {
  const host = Float32Array.from({ length: 100 }, (_, i) => i + 0.5);
  const expected = Float32Array.from(host);
  expected.subarray(17, -20).forEach((v, i, view) => { view[i] = v * 3; });
  const d = cuda.toDevice(host);
  scaleMiddle.configure(4, 32)(d, 17, -20);
  assert.deepEqual([...d.copyToHost()], [...expected]);
  const h = Float32Array.from(host);
  scaleMiddle.configure(4, 32)(h, 17, -20); // a host array: copied back
  assert.deepEqual([...h], [...expected]);
  checkPtx(scaleMiddle);
});

const nested = cuda.jit(function nested(a: Int32Array) {
  const s = cuda.shared.array(16, "int32");
  const t = cuda.threadIdx.x;
  s[t] = t;
  cuda.syncthreads();
  const inner = s.subarray(4).subarray(2, 6); // elements 6..9 of s
  if (t < inner.length) a[t] = inner[t]! * 10;
});

test("a subarray of a subarray of a shared array", () => {
  const a = new Int32Array(4);
  nested.configure(1, 16)(a);
  assert.deepEqual([...a], [60, 70, 80, 90]);
  checkPtx(nested);
});

test("indexing past a subarray's end is out of bounds on the simulator", { skip: process.env.NUMBATS_TARGET !== "sim" && "the GPU checks bounds only with debug" }, () => {
  const past = cuda.jit(function past(a: Float64Array) {
    const v = a.subarray(1, 3);
    v[cuda.threadIdx.x] = 1;
  });
  assert.throws(() => past.configure(1, 3)(new Float64Array(8)), (e: unknown) => e instanceof LaunchError && /index out of bounds: .*\[2\] with shape \[2\]/.test(e.message));
  checkPtx(past);
});

const bitsOf = cuda.jit(function bitsOf(a: Float32Array, out: Uint32Array) {
  const bits = a.view(uint32);
  const i = cuda.grid(1);
  if (i < bits.length) out[i] = bits[i]!;
});

const bytesOf = cuda.jit(function bytesOf(a: Uint32Array, out: Uint8Array, halves: Uint16Array) {
  const bytes = a.view(uint8);
  const i = cuda.grid(1);
  if (i < bytes.length) out[i] = bytes[i]!;
  const h = a.subarray(1).view(uint16);
  if (i < h.length) halves[i] = h[i]!;
});

const setBits = cuda.jit(function setBits(words: Uint32Array) {
  const f = words.view(float32);
  const i = cuda.grid(1);
  if (i < f.length) f[i] = f[i]! * -2;
});

test("view(dtype) reads and writes the same bytes as another dtype, its length scaled", () => {
  const a = new Float32Array([1, -0, Math.PI, 1e-40, Infinity, NaN]);
  const out = new Uint32Array(a.length);
  bitsOf.configure(1, 32)(a, out);
  assert.deepEqual([...out], [...new Uint32Array(a.buffer)]);

  const words = new Uint32Array([0x01020304, 0xa0b0c0d0, 0xdeadbeef]);
  const bytes = new Uint8Array(12), halves = new Uint16Array(4);
  bytesOf.configure(1, 32)(words, bytes, halves);
  assert.deepEqual([...bytes], [...new Uint8Array(words.buffer)]);
  assert.deepEqual([...halves], [...new Uint16Array(words.buffer, 4, 4)]);

  const w = new Uint32Array(new Float32Array([1.5, -3, 0.25]).buffer);
  setBits.configure(1, 32)(w);
  assert.deepEqual([...new Float32Array(w.buffer)], [-3, 6, -0.5]);
  for (const k of [bitsOf, bytesOf, setBits]) checkPtx(k);
});

test("view of a multi-dimensional array, of a strided array, or without a dtype is a TypingError", () => {
  const view = (a: Float32Array) => { const v = a.view("int32"); v[0] = 1; };
  for (const signature of ["void(float32[:, ::1])", "void(float32[:])"]) {
    assert.throws(() => cuda.jit(view, { signature: signature as never }), (e: unknown) =>
      e instanceof TypingError && /view needs a contiguous 1-d array; got array\(float32, (2d, C|1d, A)\)/.test(e.message), signature);
  }
  const bad = cuda.jit((a: Float32Array) => { const v = a.view(3 as never); v[0] = 1; });
  assert.throws(() => bad.configure(1, 1)(new Float32Array(1)), (e: unknown) => e instanceof TypingError && /expected a dtype/.test(e.message));
});
