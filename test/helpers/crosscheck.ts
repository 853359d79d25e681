// Runs one kernel case everywhere we can check it:
//  1. through the public API (cuda.jit + configure) on the current target —
//     the simulator in CI, the GPU under `npm run test:gpu` — and checks the
//     results against the case's host-computed reference;
//  2. its PTX through ptxas (sm_80, sm_90) when ptxas is installed;
//  3. its PTX text on the ptxsim interpreter, with the same inputs, and
//     requires the bytes to equal the run of step 1 (bit for bit);
//  4. on a GPU, also the simulator directly, again bit for bit.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { complexKernelArg } from "../../src/complex.js";
import { asDeviceFunction, compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { typeOfArgument, type Dim, type JitOptions } from "../../src/kernel.js";
import { convertScalar, isArrayType, parseSignature, type ScalarName, type Type } from "../../src/dtypes.js";
import type { FunctionIR } from "../../src/compiler/ir.js";
import type { KernelArg, LaunchDims } from "../../src/abi/backend.js";
import { wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";
import { isNDArrayLike } from "../../src/ndarray.js";
import { getBackend } from "../../src/runtime/select.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { cuda, type KernelArgument } from "../../src/index.js";
import { hasPtxas, ptxasCheck } from "./ptxas.js";
import { runOnPtxsim } from "./ptxsim.js";
import { recordFields } from "./records.js";
import { RecordArray } from "../../src/records.js";
import { DeviceArray } from "../../src/runtime/devicearray.js";

export type HostArg = ArrayBufferView | number | bigint | boolean | object;

export interface KernelCase {
  readonly name: string;
  readonly kernel: (...args: never[]) => void;
  readonly options?: JitOptions;
  readonly grid: Dim;
  readonly block: Dim;
  readonly sharedMemBytes?: number;
  /** fresh, deterministic inputs (typed arrays and scalars) */
  args(): HostArg[];
  /** asserts the results (the same array objects `args()` returned) against a host reference */
  check(args: HostArg[], printed: readonly string[]): void;
  /** bit-for-bit agreement is not promised (fastmath approximations) */
  readonly approximate?: boolean;
  /** argument positions whose contents depend on thread scheduling (checked by `check` only, not compared across targets) */
  readonly scheduleDependent?: readonly number[];
}

export const dims3 = (d: Dim): [number, number, number] => {
  const l = typeof d === "number" ? [d] : [...d];
  while (l.length < 3) l.push(1);
  return l as [number, number, number];
};

/**
 * The contents of every array argument for comparison: float arrays by
 * value (any NaN equals any NaN: payloads are not promised), others by bytes.
 */
export function arrayContents(args: readonly HostArg[], scheduleDependent: readonly number[] = []): unknown[] {
  return args.map((a, i) => {
    if (scheduleDependent.includes(i)) return "schedule-dependent";
    const v = ArrayBuffer.isView(a) ? a : isNDArrayLike(a) ? a.data : a instanceof RecordArray ? a.bytes : undefined;
    if (!v) return undefined;
    if (v instanceof Float32Array || v instanceof Float64Array) return Array.from(v, (x) => (Number.isNaN(x) ? "NaN" : Object.is(x, -0) ? "-0" : x));
    return new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  });
}

/** The device arrays in an env and in its device functions' envs, each with its contents as they are now. */
export function envArrayContents(env: Readonly<Record<string, unknown>> | undefined, into = new Map<object, ArrayBufferView>(), seen = new Set<object>()): Map<object, ArrayBufferView> {
  if (!env || seen.has(env)) return into;
  seen.add(env);
  for (const v of Object.values(env)) {
    if (v instanceof DeviceArray) { if (!into.has(v)) into.set(v, flat(v.copyToHost())); }
    else envArrayContents(asDeviceFunction(v)?.env, into, seen);
  }
  return into;
}

const flat = (h: ArrayBufferView | { data: ArrayBufferView }): ArrayBufferView => (ArrayBuffer.isView(h) ? h : h.data);

/**
 * For a run that does not go through the API: a fresh host copy of each env array's contents
 * `before` the case ran, as the kernel's hidden parameters take them.
 */
export function envArrayCopies(ir: FunctionIR, before: ReadonlyMap<object, ArrayBufferView>): { arg: KernelArg; data: ArrayBufferView }[] {
  return (ir.envArrays ?? []).map((a) => {
    const data = (before.get(a.array) as unknown as { slice(): ArrayBufferView }).slice();
    const shape = (a.array as DeviceArray).shape;
    const strides = shape.map((_, d) => shape.slice(d + 1).reduce((x, y) => x * y, 1));
    return { arg: { kind: "array", buffer: wrapHostArray(data), byteOffset: 0, dtype: a.type.dtype, shape, strides, name: a.envName }, data };
  });
}

/** The host arguments as KernelArgs over their own memory (for ptxsim and the direct simulator), then the env arrays' copies. */
export function kernelArgs(args: readonly HostArg[], ir: FunctionIR, env: readonly { arg: KernelArg }[] = []): KernelArg[] {
  return [...recordFields(args).map((a, i): KernelArg => {
    const t = ir.params[i]!.type;
    if (isArrayType(t)) {
      const name = ir.params[i]!.name;
      if (isNDArrayLike(a)) {
        const offset = a.offset * (a.data as ArrayBufferView & { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
        return { kind: "array", buffer: wrapHostArray(a.data), byteOffset: offset, dtype: t.dtype, shape: a.shape, strides: a.stride, name };
      }
      const v = a as ArrayBufferView & { length: number };
      const arg: KernelArg = { kind: "array", buffer: wrapHostArray(v), byteOffset: 0, dtype: t.dtype, shape: [v.length], strides: [1], name };
      return t.complex ? complexKernelArg(arg, t, i) : arg;
    }
    const raw = (a as { valueOf(): number | bigint | boolean }).valueOf();
    return { kind: "scalar", dtype: t as ScalarName, value: convertScalar(t as ScalarName, raw) };
  }), ...env.map((e) => e.arg)];
}

/** Captures what a launch prints (console.log in kernels) on this process's stdout. */
export function capture(run: () => void): string[] {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => { lines.push(String(chunk)); return true; }) as typeof process.stdout.write;
  try { run(); } finally { process.stdout.write = write; }
  return lines.join("").split("\n").filter((l) => l !== "");
}

/** The kernel's parameter types: from the case's signature when it has one, else from the arguments. */
export function argumentTypes(c: KernelCase, args: readonly HostArg[]): Type[] {
  const sig = c.options?.signature;
  if (typeof sig === "string") return [...parseSignature(sig).args];
  return args.map((a, i) => typeOfArgument(a, i));
}

/** What the case prints when run on the GPU in a child process (the driver writes printf output to fd 1 itself). */
function printedByChild(c: KernelCase): string[] {
  const script = fileURLToPath(new URL("./run-case.ts", import.meta.url));
  const r = spawnSync(process.execPath, ["--import", "tsx", script, c.name], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${c.name}: the child process failed:\n${r.stderr}`);
  return r.stdout.split("\n").filter((l) => l !== "");
}

export async function runCase(c: KernelCase): Promise<void> {
  const args = c.args();
  const envBefore = envArrayContents(c.options?.env);
  const k = cuda.jit(c.kernel, c.options);
  let printed = capture(() => {
    k.configure(c.grid, c.block, undefined, c.sharedMemBytes ?? 0)(...(args as KernelArgument[]));
    cuda.synchronize();
  });
  if (getBackend().name === "cuda" && printed.length === 0 && /console\.log/.test(c.kernel.toString())) printed = printedByChild(c);
  c.check(args, printed);

  const ir = compileToIR(c.kernel, argumentTypes(c, args), { ...c.options, name: c.name, resolveDeviceFunction });
  const mod = emitPtx(ir, { computeCapability: [8, 0] });
  if (hasPtxas()) { ptxasCheck(mod.text, "sm_80"); ptxasCheck(mod.text, "sm_90"); }

  const dims: LaunchDims = { grid: dims3(c.grid), block: dims3(c.block), sharedMemBytes: c.sharedMemBytes ?? 0 };
  const expected = arrayContents(args, c.scheduleDependent);
  const envExpected = arrayContents((ir.envArrays ?? []).map((a) => flat((a.array as DeviceArray).copyToHost())));

  if (getBackend().name === "cuda") {
    // the GPU ran step 1: the simulator must give the same bits
    const simArgs = c.args();
    const simEnv = envArrayCopies(ir, envBefore);
    const simPrinted = capture(() => compileSim(ir).launch(dims, kernelArgs(simArgs, ir, simEnv), getBackend().defaultStream(), ir.features.gridSync));
    if (!c.approximate) assert.deepEqual(arrayContents(simArgs, c.scheduleDependent), expected, `${c.name}: simulator and GPU differ`);
    if (!c.approximate) assert.deepEqual(arrayContents(simEnv.map((e) => e.data)), envExpected, `${c.name}: simulator and GPU differ in an env array`);
    assert.deepEqual([...simPrinted].sort(), [...printed].sort(), `${c.name}: printed output differs between simulator and GPU`);
    return;
  }
  if (c.approximate) return;
  const ptxArgs = c.args();
  const ptxEnv = envArrayCopies(ir, envBefore);
  const res = await runOnPtxsim(mod, dims, kernelArgs(ptxArgs, ir, ptxEnv));
  assert.deepEqual(arrayContents(ptxArgs, c.scheduleDependent), expected, `${c.name}: PTX (on ptxsim) and simulator differ`);
  assert.deepEqual(arrayContents(ptxEnv.map((e) => e.data)), envExpected, `${c.name}: PTX (on ptxsim) and simulator differ in an env array`);
  // threads print in another order on SIMT hardware (and ptxsim) than on the simulator
  const lines = (xs: readonly string[]) => xs.flatMap((s) => s.split("\n")).filter((l) => l !== "").sort();
  if (ir.features.print) assert.deepEqual(lines(res.output), lines(printed), `${c.name}: printf output differs`);
}

/** A deterministic generator for test inputs (xorshift32). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
}

export function randomFloats<T extends Float32Array | Float64Array>(Ctor: new (n: number) => T, n: number, seed: number, lo = -1, hi = 1): T {
  const r = rng(seed);
  const a = new Ctor(n);
  for (let i = 0; i < n; i++) a[i] = lo + (hi - lo) * r();
  return a;
}

export function randomInts<T extends Int32Array | Uint32Array | Int8Array | Uint8Array | Int16Array | Uint16Array>(Ctor: new (n: number) => T, n: number, seed: number, lo: number, hi: number): T {
  const r = rng(seed);
  const a = new Ctor(n);
  for (let i = 0; i < n; i++) a[i] = Math.floor(lo + (hi - lo) * r());
  return a;
}

let flushing: { backend: object; flushes: boolean } | undefined;

/**
 * Whether the current target flushes float32 subnormals in arithmetic: WGSL allows it (SwiftShader does,
 * lavapipe does not); CUDA and the simulator keep them. Seen by running 1e-40 + 1e-40 there.
 */
export function flushesSubnormals(): boolean {
  const backend = getBackend();
  if (flushing?.backend !== backend) {
    const x = new Float32Array([1e-40, 1e-40, 0]);
    cuda.jit((a: Float32Array) => { if (cuda.grid(1) === 0) a[2] = a[0] + a[1]; }).configure(1, 1)(x);
    flushing = { backend, flushes: x[2] === 0 };
  }
  return flushing.flushes;
}

