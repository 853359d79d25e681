// Runs one generated kernel three ways — the JS simulator, its PTX on the
// ptxsim interpreter, and the reference evaluator — on the same random
// inputs, and says where they disagree.

import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { arrayType, DTYPE_INFO, float16Bits, float16FromBits, type ScalarName } from "../../src/dtypes.js";
import type { FunctionIR } from "../../src/compiler/ir.js";
import type { KernelArg, LaunchDims } from "../../src/runtime/backend.js";
import { wrapHostArray } from "../../src/runtime/sim-backend.js";
import { getBackend } from "../../src/runtime/select.js";
import { compileSim } from "../../src/runtime/sim-kernel.js";
import { emitPtx } from "../../src/targets/ptx/index.js";
import { rng } from "../helpers/crosscheck.js";
import { ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import { ACC_LENGTH, THREADS, type FuzzKernel, type FuzzParam } from "./generate.js";
import { convert, Reference } from "./reference.js";

type Host = ArrayBufferView & { length: number; [k: number]: number | bigint };

export interface Disagreement {
  /** which runs differ, e.g. "simulator vs PTX" or "compile error" */
  readonly kind: string;
  readonly details: string;
}

const length = (p: FuzzParam) => (p.role === "acc" ? ACC_LENGTH : THREADS);

/** Random contents for an array of `dtype`, rich in edge values (zeros, extremes, NaN, infinities, subnormals). */
function randomArray(dtype: ScalarName, n: number, seed: number, as: ScalarName = dtype): Host {
  if (as !== dtype) return new (DTYPE_INFO[as].array as Float64ArrayConstructor)(randomArray(dtype, n, seed) as unknown as ArrayLike<number>) as unknown as Host;
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const info = DTYPE_INFO[dtype];
  if (dtype === "bool") return Uint8Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0));
  if (dtype === "float16") {
    return Uint16Array.from({ length: n }, () => (r() < 0.2 ? pick([0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x3c00, 0x7bff, 0xbc00]) : float16Bits((r() - 0.5) * 2 ** Math.floor(r() * 20 - 6))));
  }
  if (dtype === "float32" || dtype === "float64") {
    const specials = [0, -0, NaN, Infinity, -Infinity, 1, -1, 0.5, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 63, 1e-45, 1e-310, 3.4e38, 1.7e308, 255.5, -128.5];
    const a = dtype === "float32" ? new Float32Array(n) : new Float64Array(n);
    for (let j = 0; j < n; j++) a[j] = r() < 0.25 ? pick(specials) : r() < 0.5 ? Math.floor((r() - 0.5) * 200) : (r() - 0.5) * 2 ** Math.floor(r() * 80 - 40);
    return a as unknown as Host;
  }
  const bits = info.size * 8, signed = info.cls === "int";
  const lo = signed ? -(2n ** BigInt(bits - 1)) : 0n, hi = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
  const values = Array.from({ length: n }, () => {
    const k = r();
    if (k < 0.25) return pick([0n, 1n, -1n, lo, hi, lo + 1n, hi - 1n, 2n, 31n, 32n, 64n]);
    if (k < 0.6) return BigInt(Math.floor((r() - 0.5) * 64));
    return BigInt(Math.floor(r() * 2 ** 32)) * (bits === 64 ? BigInt(Math.floor(r() * 2 ** 32)) : 1n) - (signed ? 2n ** BigInt(bits - 1) : 0n);
  });
  const C = info.array as unknown as new (n: number) => Host;
  const a = new C(n);
  values.forEach((v, j) => { const w = signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v); a[j] = bits === 64 ? w : Number(w); });
  return a;
}

export function inputs(k: FuzzKernel): Host[] {
  return k.params.map((p, j) => {
    // float atomic sums stay exact (so independent of the order) only from small integers
    const exactSums = p.role === "acc" && p.dtype.startsWith("float") && k.atomics.includes("add");
    return randomArray(exactSums ? "int8" : p.dtype, length(p), k.seed * 31 + j, p.dtype);
  });
}

/** The kernel and its device functions as functions whose text is the generated source. */
function compile(k: FuzzKernel, source: string): FunctionIR {
  const fn = new Function(`return (${source});`)() as (...a: never[]) => void;
  const env = Object.fromEntries(k.devices.map((d) => [d.name, new Function(`return ${d.source};`)()]));
  const types = k.params.map((p) => arrayType(p.dtype, 1, "C"));
  return compileToIR(fn, types, { name: `fuzz${k.seed}`, env, fma: k.fma, resolveDeviceFunction });
}

function kernelArgs(k: FuzzKernel, arrays: readonly Host[]): KernelArg[] {
  return k.params.map((p, j) => ({ kind: "array", buffer: wrapHostArray(arrays[j]!), byteOffset: 0, dtype: p.dtype, shape: [length(p)], strides: [1], name: p.name }));
}

/** The element as a comparable value: floats by value (every NaN alike, -0 apart from 0), others as they are stored. */
function element(dtype: ScalarName, a: Host, j: number): string {
  const v = a[j]!;
  if (dtype === "float16") return floatKey(float16FromBits(v as number));
  if (dtype === "float32" || dtype === "float64") return floatKey(v as number);
  return String(v);
}
const floatKey = (x: number) => (Number.isNaN(x) ? "NaN" : Object.is(x, -0) ? "-0" : String(x));

/** The reference's result as host storage of the same dtype. */
export function referenceRun(k: FuzzKernel, arrays: readonly Host[]): Host[] {
  const state = new Map(k.params.map((p, j) => {
    const a = arrays[j]!;
    const data = Array.from({ length: length(p) }, (_, e) => {
      const raw = a[e]!;
      return { t: p.dtype, v: p.dtype === "float16" ? float16FromBits(raw as number) : raw };
    });
    return [p.name, { data, dtype: p.dtype }];
  }));
  new Reference(k, state).run(THREADS);
  return k.params.map((p, j) => {
    const out = inputs(k)[j]!;
    state.get(p.name)!.data.forEach((v, e) => {
      const c = convert(v, p.dtype);
      out[e] = p.dtype === "float16" ? float16Bits(c.v as number) : c.v;
    });
    return out;
  });
}

/** The first elements where two runs' arrays differ, or "" when none do. */
function differences(k: FuzzKernel, x: readonly Host[], y: readonly Host[], names: [string, string]): string {
  const lines: string[] = [];
  k.params.forEach((p, j) => {
    for (let e = 0; e < length(p) && lines.length < 6; e++) {
      const a = element(p.dtype, x[j]!, e), b = element(p.dtype, y[j]!, e);
      if (a !== b) lines.push(`  ${p.name}[${e}] (${p.dtype}): ${names[0]} ${a}, ${names[1]} ${b}`);
    }
  });
  return lines.join("\n");
}

export interface CheckOptions {
  /** run the PTX through ptxas too */
  readonly ptxas?: boolean;
  /** the kernel's text to run instead of k.source (the minimiser's variants) */
  readonly source?: string;
}

/** Runs `k` on the simulator, as PTX on ptxsim and on the reference; undefined when all agree. */
export async function checkKernel(k: FuzzKernel, opts: CheckOptions = {}): Promise<Disagreement | undefined> {
  const source = opts.source ?? k.source;
  let ir: FunctionIR;
  try { ir = compile(k, source); } catch (e) { return { kind: "compile error", details: (e as Error).message }; }
  const mod = emitPtx(ir, { computeCapability: [8, 0] });
  if (opts.ptxas) {
    try { ptxasCheck(mod.text, "sm_80"); } catch (e) { return { kind: "ptxas error", details: (e as Error).message.slice(0, 2000) }; }
  }
  const dims: LaunchDims = { grid: [THREADS / k.block, 1, 1], block: [k.block, 1, 1], sharedMemBytes: 0 };
  const sim = inputs(k);
  try { compileSim(ir).launch(dims, kernelArgs(k, sim), getBackend().defaultStream(), false); } catch (e) { return { kind: "simulator error", details: (e as Error).message }; }
  const ptx = inputs(k);
  try { await runOnPtxsim(mod, dims, kernelArgs(k, ptx)); } catch (e) { return { kind: "ptxsim error", details: (e as Error).message }; }
  const d = differences(k, sim, ptx, ["simulator", "PTX"]);
  if (d) return { kind: "simulator vs PTX", details: d };
  if (k.fma || k.transcendental) return undefined;
  let ref: Host[];
  try { ref = referenceRun({ ...k, source }, inputs(k)); } catch (e) { return { kind: "reference error", details: (e as Error).stack ?? String(e) }; }
  const r = differences(k, sim, ref, ["simulator and PTX", "reference"]);
  return r ? { kind: "targets vs reference", details: r } : undefined;
}

/** Drops top-level statements of the kernel while it still disagrees the same way. */
export async function minimise(k: FuzzKernel, kind: string): Promise<string> {
  let lines = k.source.split("\n");
  for (let j = lines.length - 2; j >= 2; j--) {
    if (/^\s*const (i|sh) = /.test(lines[j]!)) continue;
    const shorter = [...lines.slice(0, j), ...lines.slice(j + 1)];
    const d = await checkKernel(k, { source: shorter.join("\n") });
    if (d?.kind === kind) lines = shorter;
  }
  return lines.join("\n");
}
