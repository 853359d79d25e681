// Device functions compiled elsewhere on the simulator (cuda.declareDevice): the kernel calls each
// declared function's `sim` stand-in, checked against a host reference per type; what a kernel cannot
// do with one is a compile error with a caret, a launch without a stand-in a LaunchError saying how to
// give one, a bad declaration or link entry a TypeError; the PTX (no GPU needed) calls the symbol.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, declareDevice, CompileError, LaunchError, TypingError } from "../../src/index.js";
import { setSimChecks, simChecks } from "../../src/backends/sim/runtime/sanitize.js";
import { linkKernel } from "../../src/backends/cuda/driver/link-kernel.js";
import type { DeviceContext } from "../../src/backends/cuda/driver/context.js";
import { compileCuda, nvrtc } from "../../src/backends/cuda/nvrtc/nvrtc.js";
import { nvJitLink } from "../../src/backends/cuda/nvrtc/nvjitlink.js";
import { elfSymbols } from "../helpers/elf.js";
import { PTXAS_TARGETS, hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { arrayType } from "../../src/dtypes.js";
import { emitWgsl } from "../../src/backends/webgpu/wgsl/index.js";
import { ADAPTERS } from "../targets/wgsl-dawn.js";

process.env.NUMBATS_TARGET = "sim";

const f32 = Math.fround;

const lerp = cuda.declareDevice("lerp_f32", "float32(float32, float32, float32)", { sim: (a: number, b: number, t: number) => a + (b - a) * t });
const hyp = cuda.declareDevice("hyp_f64", "float64(float64, float64)", { sim: Math.hypot });
const wrap8 = cuda.declareDevice("wrap_i8", "int8(int32)", { sim: (x: number) => x });
const mix64 = cuda.declareDevice("mix_u64", "uint64(uint64, int32)", { sim: (x: bigint, k: number) => (x << BigInt(k)) ^ x });
const odd = cuda.declareDevice("is_odd", "bool(int32)", { sim: (x: number) => x & 1 });
const fill = cuda.declareDevice("fill_from", "void(float32[:], int32, float32)", {
  sim: (p: Float32Array, n: number, v: number) => { for (let i = 0; i < n; i++) p[i] = v + i; },
});

test("declared functions run their sim stand-ins, results converted to the declared types as a GPU returns them", () => {
  const k = cuda.jit((x: Float32Array, out32: Float32Array, out64: Float64Array, o8: Int8Array, o64: BigUint64Array, ob: Uint8Array) => {
    const i = cuda.grid(1);
    if (i < x.length) {
      out32[i] = lerp(x[i], 2, 0.25);
      out64[i] = hyp(x[i], i);
      o8[i] = wrap8(i * 37);
      o64[i] = mix64(BigInt(i) + 1n, i % 7);
      ob[i] = odd(i) ? 1 : 0;
    }
  });
  const n = 300;
  const x = Float32Array.from({ length: n }, (_, i) => (i - 150) / 7);
  const out32 = new Float32Array(n), out64 = new Float64Array(n), o8 = new Int8Array(n), o64 = new BigUint64Array(n), ob = new Uint8Array(n);
  k.forall(n)(x, out32, out64, o8, o64, ob);
  for (let i = 0; i < n; i++) {
    // the stand-in computes in float64; the call returns it rounded to float32 (0.25 is exact in float32)
    assert.equal(out32[i], f32(x[i]! + (2 - x[i]!) * 0.25), `lerp at ${i}`);
    assert.equal(out64[i], Math.hypot(x[i]!, i), `hyp at ${i}`);
    assert.equal(o8[i], (i * 37) << 24 >> 24, `int8 result wrapped at ${i}`);
    const v = BigInt(i) + 1n;
    assert.equal(o64[i], BigInt.asUintN(64, (v << BigInt(i % 7)) ^ v), `uint64 at ${i}`);
    assert.equal(ob[i], i & 1, `bool at ${i}`);
  }
});

test("an array argument is a typed array from its first element, which the stand-in may write (copied back)", () => {
  const k = cuda.jit((m: Float32Array, cols: number) => {
    const r = cuda.grid(1);
    if (r * cols < m.length) fill(m.subarray(r * cols, r * cols + cols), cols - 1, r * 100);
  });
  const rows = 5, cols = 4, m = new Float32Array(rows * cols).fill(-1);
  k.forall(rows)(m, cols);
  assert.deepEqual([...m], Array.from({ length: rows * cols }, (_, j) => (j % cols === cols - 1 ? -1 : Math.floor(j / cols) * 100 + (j % cols))));
});

test("found by its symbol, by the name it is bound to, and through env", () => {
  const bySymbol = cuda.jit((o: Float32Array) => { o[0] = lerp_f32(0, 10, 0.5); });
  const byBinding = cuda.jit((o: Float32Array) => { o[0] = lerp(0, 10, 0.5); });
  const viaEnv = cuda.jit((o: Float32Array) => { o[0] = mid(0, 10, 0.5); }, { env: { mid: lerp } });
  for (const k of [bySymbol, byBinding, viaEnv]) {
    const o = new Float32Array(1);
    k.configure(1, 1)(o);
    assert.equal(o[0], 5);
  }
});
declare const lerp_f32: (a: number, b: number, t: number) => number;
declare const mid: (a: number, b: number, t: number) => number;

test("on the host a declared function runs its stand-in; without one it says where it runs", () => {
  assert.equal(lerp(1, 3, 0.5), 2);
  const none = declareDevice("host_none", "int32(int32)");
  assert.throws(() => none(1), /'host_none' \(int32\(int32\)\) is a device function compiled elsewhere; it runs in kernels on the GPU/);
});

test("a kernel calling a declared function without a stand-in: a LaunchError naming it and how to give one", () => {
  const noSim = cuda.declareDevice("no_sim_here", "float32(float32)");
  const k = cuda.jit((o: Float32Array) => { o[0] = noSim(1); });
  assert.throws(() => k.configure(1, 1)(new Float32Array(1)), (e: unknown) =>
    e instanceof LaunchError && /kernel 'k' calls 'no_sim_here', a device function compiled elsewhere, which the simulator cannot run/.test(e.message)
    && /cuda\.declareDevice\("no_sim_here", signature, \{ sim: /.test(e.message) && /link: \[/.test(e.message));
});

test("a wrong argument count is a CompileError at the call, with a caret; a wrong argument type is a TypingError", () => {
  const k = cuda.jit((o: Float32Array) => {
    o[0] = lerp(1, 2);
  });
  assert.throws(() => k.configure(1, 1)(new Float32Array(1)), (e: unknown) => {
    assert.ok(e instanceof CompileError, String(e));
    assert.match(e.message, /'lerp_f32' takes 3 argument\(s\) \(lerp_f32: float32\(float32, float32, float32\), declared with cuda\.declareDevice\) but is called with 2/);
    assert.match(e.message, /o\[0\] = lerp\(1, 2\);\n\s*\^/);
    return true;
  });
  const arr = cuda.jit((o: Float64Array) => { fill(o, 1, 2); });
  assert.throws(() => arr.configure(1, 1)(new Float64Array(2)), (e: unknown) => e instanceof TypingError && /argument 1 of 'fill_from' must be an array of float32 \(passed as a pointer to its first element\); got array\(float64, 1d, C\)/.test(e.message));
  const scalarForArray = cuda.jit((o: Float32Array) => { o[0] = lerp(o, 1, 2); });
  assert.throws(() => scalarForArray.configure(1, 1)(new Float32Array(2)), (e: unknown) => e instanceof TypingError && /argument 1 of 'lerp_f32' is an array; its parameter is float32/.test(e.message));
});

test("a declaration the linker could not meet is a TypeError naming what is wrong", () => {
  const bad = (name: unknown, sig: unknown, options?: object) => () => declareDevice(name as string, sig as string, options as never);
  assert.throws(bad("my-fn", "float32(float32)"), /the name must be a C identifier \(the function's symbol\); got "my-fn"/);
  assert.throws(bad("f", "complex64(float32)"), /cuda\.declareDevice\('f', "complex64\(float32\)"\): the result is complex64; a declared device function takes and returns bool, int8/);
  assert.throws(bad("f", "float32(float16)"), /parameter 1 is float16/);
  assert.throws(bad("f", "void(float32, UniTuple(int32, 2))"), /parameter 2 is/);
  assert.throws(bad("f", "void(complex64[:])"), /parameter 1 is array\(complex64, 1d, A\)/);
  assert.throws(bad("f", "float32 float32"), TypeError);
  assert.throws(bad("f", 3), /the signature must be a Numba signature string/);
  assert.throws(bad("f", "void()", { simulate: () => 0 }), /cuda\.declareDevice: unknown option 'simulate'/);
  assert.throws(bad("f", "void()", { sim: 1 }), /options\.sim must be a function; got number/);
});

test("a link entry numbats cannot read is a TypeError naming it, when the kernel is made", () => {
  const k = (o: Float32Array) => { o[0] = 1; };
  assert.throws(() => cuda.jit(k, { link: ["missing/lib.ptx"] }), /cuda\.jit: link entry 'missing\/lib\.ptx' cannot be read: ENOENT/);
  assert.throws(() => cuda.jit(k, { link: ["lib.so"] }), /link entry 'lib\.so' is not a file numbats can link: its extension must be one of \.ptx, \.cu, \.cubin, \.fatbin, \.o, \.a, \.ltoir/);
  assert.throws(() => cuda.jit(k, { link: [{ code: "x" }] as never }), /cuda\.jit: link entry 1 is \{"code":"x"\}; an entry is a file/);
  assert.throws(() => cuda.jit(k, { link: "lib.ptx" as never }), /option 'link' must be an array/);
  // readable entries are taken; on the simulator they are not used
  const linked = cuda.jit(k, { link: [{ source: 'extern "C" __device__ int one() { return 1; }', name: "one.cu" }, { ptx: "// nothing", name: "empty.ptx" }] });
  const o = new Float32Array(1);
  linked.configure(1, 1)(o);
  assert.equal(o[0], 1);
});

test("the sanitizer treats a call as opaque: what the stand-in writes through a pointer is no finding", () => {
  const before = simChecks();
  setSimChecks({ tools: ["memcheck", "racecheck", "synccheck"] });
  try {
    const k = cuda.jit((m: Float32Array) => {
      const r = cuda.grid(1);
      if (r < 4) fill(m.subarray(r * 2, r * 2 + 2), 2, r);
    });
    const m = new Float32Array(8);
    k.forall(4)(m);
    assert.deepEqual([...m], [0, 1, 1, 2, 2, 3, 3, 4]);
  } finally {
    setSimChecks(before);
  }
});

test("the webgpu target refuses a call of a declared function: a CompileError naming the target, the function and the line", () => {
  const ir = compileToIR((o: Float32Array) => {
    o[0] = lerp(1, 2, 0.5);
  }, [arrayType("float32", 1, "C")], { name: "k", resolveDeviceFunction });
  assert.throws(() => emitWgsl(ir, ADAPTERS.lavapipe), (e: unknown) => e instanceof CompileError
    && /^a call of 'lerp_f32', a device function declared with cuda\.declareDevice is not available on the webgpu target \(WebGPU cannot link device code compiled elsewhere/.test(e.message)
    && /o\[0\] = lerp\(1, 2, 0\.5\);/.test(e.sourceLine));
});

test("the PTX calls the symbol with nvcc's ABI, with no GPU: inspectAsm", () => {
  const k = cuda.jit((x: Float32Array, o8: Int8Array, ob: Uint8Array) => {
    x[0] = lerp(x[1], x[2], 0.5);
    o8[0] = wrap8(o8[1]);
    ob[0] = odd(3) ? 1 : 0;
    fill(x, 2, 1);
  }, { signature: "void(float32[::1], int8[::1], uint8[::1])" });
  const ptx = k.inspectAsm(undefined, { computeCapability: [9, 0] });
  assert.match(ptx, /^\.extern \.func \(\.param \.b32 func_retval0\) lerp_f32\(\.param \.b32 lerp_f32_param_0, \.param \.b32 lerp_f32_param_1, \.param \.b32 lerp_f32_param_2\);$/m);
  assert.match(ptx, /^\.extern \.func \(\.param \.b32 func_retval0\) wrap_i8\(\.param \.b32 wrap_i8_param_0\);$/m);
  assert.match(ptx, /^\.extern \.func fill_from\(\.param \.b64 fill_from_param_0, \.param \.b32 fill_from_param_1, \.param \.b32 fill_from_param_2\);$/m);
  assert.match(ptx, /call\.uni \(retval0\), lerp_f32, \(param0, param1, param2\);\n\s*ld\.param\.f32 %f\d+, \[retval0\];/);
  assert.match(ptx, /call\.uni fill_from, \(param0, param1, param2\);/);
  assert.match(ptx, /cvta\.global\.u64 %rd\d+, %rd\d+;[\s\S]*st\.param\.b64 \[param0\], %rd\d+;/);
  if (hasPtxas()) {
    // an object to link: the declared functions are defined by another input
    for (const { arch, computeCapability } of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(undefined, { computeCapability }), arch, true);
  }
});

const noLto = (() => {
  try {
    nvrtc();
    nvJitLink();
    return false;
  } catch (e) {
    return `NVRTC or nvJitLink is not installed: ${(e as Error).message.split("\n")[0]}`;
  }
})();
if (noLto) console.log(`# test/host/link.test.ts: the LTO link skipped: ${noLto}`);

test("with LTO-IR among the link entries, the kernel, its CUDA C++ (compiled to LTO-IR) and the rest link through nvJitLink, no GPU", { skip: noLto }, () => {
  const k = cuda.jit((x: Float32Array) => { x[0] = lerp(x[1], x[2], 0.5) + hyp(x[3], x[4]); }, { signature: "void(float32[::1])" });
  const text = k.inspectAsm(undefined, { computeCapability: [9, 0] });
  const entry = /^\.visible \.entry (\w+)\(/m.exec(text)![1]!;
  const lto = compileCuda({ source: 'extern "C" __device__ float lerp_f32(float a, float b, float t) { return a + (b - a) * t; }', name: "lerp.cu" }, { computeCapability: [9, 0], output: "ltoir" });
  // only the compute capability of the device is asked of it: nvJitLink needs no driver
  const owner = { device: { computeCapability: [9, 0] } } as unknown as DeviceContext;
  const cubin = linkKernel(owner, { text, entry }, [
    { kind: "ltoir", name: "lerp.ltoir", data: lto.code },
    { kind: "cuda-c++", name: "hyp.cu", data: 'extern "C" __device__ double hyp_f64(double x, double y) { return sqrt(x * x + y * y); }' },
  ]);
  const defined = elfSymbols(cubin).filter((sym) => sym.defined && sym.type === "func").map((sym) => sym.name);
  for (const name of [entry, "lerp_f32", "hyp_f64"]) assert.ok(defined.includes(name), `${name} is defined in the cubin (functions: ${defined.join(", ")})`);
});
