// What the WebGPU subset leaves out is a CompileError before any launch: one test per construct, each
// checking that the message names the target and the construct, and points at its line.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { arrayType, complexArrayType, type Type } from "../../src/dtypes.js";
import { CompileError, cuda, float16, float32, float64 } from "../../src/index.js";
import { emitWgsl, explainWgslErrors, type WgslTarget } from "../../src/backends/webgpu/wgsl/index.js";
import { ADAPTERS, dawnSetup, validateWgsl } from "./wgsl-dawn.js";

const F32 = arrayType("float32", 1, "C"), F64 = arrayType("float64", 1, "C"), I64 = arrayType("int64", 1, "C");
const I32 = arrayType("int32", 1, "C"), U32 = arrayType("uint32", 1, "C"), F16 = arrayType("float16", 1, "C");

/** compiles `fn` for `target`, expecting the subset error: its message and the source line it points at */
function subsetError(fn: Function, types: Type[], target: WgslTarget = ADAPTERS.lavapipe): { message: string; line: string } {
  const ir = compileToIR(fn, types, { name: "k", resolveDeviceFunction });
  try {
    emitWgsl(ir, target);
  } catch (e) {
    assert.ok(e instanceof CompileError, `a CompileError, not ${(e as Error).name}: ${(e as Error).message}`);
    assert.match(e.message, /is not available on the webgpu target \(/);
    return { message: e.message.split("\n")[0]!, line: e.sourceLine };
  }
  assert.fail("compiled, but the kernel is outside the WebGPU subset");
}

test("float64 values and arrays", () => {
  const e = subsetError((o: Float32Array, x: number) => { const i = cuda.grid(1); o[i] = x * 0.1; }, [F32, "float64"]);
  assert.match(e.message, /^float64 is not available on the webgpu target \(WGSL has no 64-bit floats; .*float32\(x\), Float32Array/);
  assert.match(subsetError((o: Float64Array) => { o[0] = 1; }, [F64]).message, /^float64 /);
});

test("int64 and uint64 are two u32 words; their conversion to float64 is outside", () => {
  const ir = compileToIR((o: BigInt64Array) => { const i = cuda.grid(1); o[i] = o[i]! * 5n; }, [I64], { name: "k", resolveDeviceFunction });
  assert.match(emitWgsl(ir, ADAPTERS.lavapipe).code, /array<vec2<u32>>/);
  const e = subsetError((o: BigInt64Array, f: Float64Array) => { const i = cuda.grid(1); f[i] = float64(o[i]!); }, [I64, F64]);
  assert.match(e.message, /^float64 is not available on the webgpu target/);
});

test("64-bit atomics", () => {
  const e = subsetError((o: BigInt64Array) => { cuda.atomic.add(o, 0, 1n); }, [I64]);
  assert.match(e.message, /^an atomic operation on int64 is not available on the webgpu target \(WGSL has 32-bit atomics only\)/);
  assert.match(e.line, /cuda\.atomic\.add/);
});

test("float16 without the adapter's shader-f16 (and with it, a module that enables f16)", () => {
  const kernel = (a: Uint16Array, o: Float32Array) => { const i = cuda.grid(1); o[i] = float32(a[i]) * 2; };
  const e = subsetError(kernel, [F16, F32], ADAPTERS.swiftshader);
  assert.match(e.message, /^float16 is not available on the webgpu target \(this adapter lacks the shader-f16 feature\)/);
  const ir = compileToIR(kernel, [F16, F32], { name: "k", resolveDeviceFunction });
  const k = emitWgsl(ir, ADAPTERS.lavapipe);
  assert.match(k.code, /^enable f16;$/m);
  assert.deepEqual(k.features, ["shader-f16"]);
  void float16;
});

test("grid-wide synchronisation", () => {
  const e = subsetError((o: Int32Array) => { o[0] = 1; cuda.cg.thisGrid().sync(); }, [I32]);
  assert.match(e.message, /^cuda\.cg\.thisGrid\(\)\.sync\(\) is not available on the webgpu target \(WebGPU has no grid-wide synchronisation\)/);
  assert.match(e.line, /thisGrid\(\)\.sync\(\)/);
});

test("memory fences", () => {
  const e = subsetError((o: Int32Array) => { o[0] = 1; cuda.threadfence(); o[1] = 2; }, [I32]);
  assert.match(e.message, /^cuda\.threadfence is not available on the webgpu target \(WGSL has no memory fence without a barrier\)/);
  assert.match(e.line, /cuda\.threadfence\(\)/);
});

test("complex128", () => {
  const e = subsetError((o: Float32Array, z: Float64Array) => { o[0] = z.length; }, [F32, complexArrayType("complex128", 1, "C")]);
  assert.match(e.message, /^float64 is not available on the webgpu target/);
});

test("warp intrinsics need subgroups; a full mask assumes a warp of 32 where subgroups are smaller", () => {
  const kernel = (o: Uint32Array) => { const i = cuda.grid(1); o[i] = cuda.ballotSync(0xffffffff, i % 2 === 0); };
  const e = subsetError(kernel, [U32]);
  assert.match(e.message, /^cuda\.ballotSync with the full mask is not available on the webgpu target \(.*assumes a warp of 32 threads; WebGPU \(llvmpipe\)'s subgroups have 8: use cuda\.activemask\(\) \/ cuda\.warpsize\)/);
  assert.match(e.line, /ballotSync/);
  const { subgroupSize: _, ...noSubgroups } = ADAPTERS.lavapipe;
  assert.match(subsetError(kernel, [U32], noSubgroups).message, /^warp intrinsics is not available on the webgpu target \(WebGPU \(llvmpipe\) lacks the subgroups feature\)/);
  const wide = (o: Int32Array) => { const i = cuda.grid(1); o[i] = cuda.shflDownSync(cuda.activemask(), i, 16); };
  assert.match(subsetError(wide, [I32]).message, /^cuda\.shflDownSync with the constant 16 is not available on the webgpu target \(.*assumes a warp of 32 threads/);
  // with the active mask the kernel fits
  const fits = compileToIR((o: Uint32Array) => { const i = cuda.grid(1); o[i] = cuda.ballotSync(cuda.activemask(), i % 2 === 0); }, [U32], { name: "k", resolveDeviceFunction });
  assert.match(emitWgsl(fits, ADAPTERS.lavapipe).code, /subgroupBallot/);
});

test("more arrays than the adapter binds storage buffers (one is the status words)", () => {
  const arrays = Array.from({ length: 12 }, () => F32);
  const kernel = new Function("cuda", `return (${arrays.map((_, k) => `a${k}`).join(", ")}) => { const i = cuda.grid(1); a0[i] = ${arrays.map((_, k) => `a${k}[i]`).join(" + ")}; }`)(cuda) as Function;
  const e = subsetError(kernel, arrays, ADAPTERS.swiftshader);
  assert.match(e.message, /^a kernel with more than 11 arrays \(parameters, record fields and env arrays\) is not available on the webgpu target \(WebGPU \(SwiftShader\) binds at most 12 storage buffers/);
  emitWgsl(compileToIR(kernel, arrays, { name: "k", resolveDeviceFunction }), ADAPTERS.lavapipe);
});

test("array locals that may hold different buffers fit: each access tests which", () => {
  const ir = compileToIR((a: Float32Array, b: Float32Array, o: Float32Array) => { const i = cuda.grid(1); let x = a; if (i > 3) x = b; o[i] = x[i]; }, [F32, F32, F32], { name: "k", resolveDeviceFunction });
  assert.match(emitWgsl(ir, ADAPTERS.lavapipe).code, /select\(a\[.*\], b\[.*\], x_sel == 1i\)/);
});

test("a barrier that the block's threads may not reach together: the WGSL compiler's verdict, as a CompileError at the barrier", (t) => {
  const setup = dawnSetup("lavapipe");
  if (typeof setup === "string") { t.skip(setup); return; }
  const divergent = (x: Float32Array, o: Float32Array) => {
    const i = cuda.grid(1);
    const s = cuda.shared.array(64, "float32");
    s[cuda.threadIdx.x] = x[i];
    if (cuda.threadIdx.x < 32) cuda.syncthreads();
    o[i] = s[63 - cuda.threadIdx.x];
  };
  // a thread that returns early stays, skipping all but the barriers: WGSL accepts it
  const early = (x: Float32Array, o: Float32Array) => {
    const i = cuda.grid(1);
    if (i >= o.length) return;
    const s = cuda.shared.array(64, "float32");
    s[cuda.threadIdx.x] = x[i];
    cuda.syncthreads();
    o[i] = s[63 - cuda.threadIdx.x];
  };
  const [irDivergent, irEarly] = [divergent, early].map((k) => compileToIR(k, [F32, F32], { name: "k", resolveDeviceFunction }));
  const kernels = [emitWgsl(irDivergent!, ADAPTERS.lavapipe), emitWgsl(irEarly!, ADAPTERS.lavapipe)];
  const [errors, none] = validateWgsl(setup, kernels);
  assert.deepEqual(none, []);
  const e = explainWgslErrors(irDivergent!, kernels[0]!, errors!);
  assert.ok(e instanceof CompileError);
  assert.match(e.message, /^a barrier \(cuda\.syncthreads\) that not every thread of the block may reach together is not available on the webgpu target/);
  assert.match(e.sourceLine, /cuda\.syncthreads\(\)/);
});
