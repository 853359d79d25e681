// Runs one generated kernel three ways — through the public API on the JS
// simulator (cuda.jit with its eager signatures, configure, launch: the
// dispatcher chooses the signature, host arrays, views, tuples and records
// are copied as a user's are), its PTX on the ptxsim interpreter (compiled
// for the signature the reference chose, over the same host memory), and the
// reference evaluator — on the same random inputs, and says where they
// disagree. Every element of every array's whole buffer (a view's gaps
// included) and every field of every record is compared.

import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { arrayType, DTYPE_INFO, parseSignature, parseTypeText, type ScalarName, type Type } from "../../src/dtypes.js";
import type { LaunchDims } from "../../src/abi/backend.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { cuda, LaunchError, RecordArray, type JitOptions, type KernelArgument, type RecordDType, type RecordObject } from "../../src/index.js";
import * as dtypes from "../../src/index.js";
import { kernelArgs, type HostArg } from "../helpers/crosscheck.js";
import { bfloat16Value, doubleToHalf, halfValue, toBfloat16 } from "../helpers/half.js";
import { ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import { ACC_LENGTH, PROBES, seeded, THREADS, type ArrayParam, type FuzzKernel, type FuzzParam, type HostScalar, type HostTuple, type RecordParam, type TupleSpec } from "./generate.js";
import { chooseOverload, launchValue, NotModelled, Reference, tupleValue, type ArrayBinding, type Binding, type Val } from "./reference.js";

type Host = ArrayBufferView & { length: number; [k: number]: number | bigint };

export interface Disagreement {
  /** which runs differ, e.g. "simulator vs PTX" or "compile error" */
  readonly kind: string;
  readonly details: string;
}

const length = (p: ArrayParam) => (p.role === "acc" ? ACC_LENGTH : p.role === "probe" ? THREADS * PROBES : THREADS);
/** An array's whole buffer: THREADS elements, or what a view is cut from. */
const bufferLength = (p: ArrayParam) => p.view?.total ?? length(p);
/** Where a view's element j is in its buffer. */
const position = (p: ArrayParam, j: number) => (p.view ? p.view.offset + j * p.view.stride : j);

// ------------------------------------------------------------------ inputs

/**
 * 64-bit integers just past a tie of bfloat16 and of float32 (2^60 + half a step + 1): rounded to a
 * double first, they would be the tie and round to even, the wrong way.
 */
const ROUNDING_TRAPS = [2n ** 60n + 2n ** 52n + 1n, -(2n ** 60n + 2n ** 52n + 1n), 2n ** 60n + 2n ** 36n + 1n, -(2n ** 60n + 2n ** 36n + 1n), 2n ** 63n + 2n ** 55n + 1n, 2n ** 63n + 2n ** 39n + 1n];

/** Random contents for an array of `dtype`, rich in edge values (zeros, extremes, NaN, infinities, subnormals). */
function randomArray(dtype: ScalarName, n: number, seed: number, as: ScalarName = dtype): Host {
  if (as !== dtype) return new (DTYPE_INFO[as].array as Float64ArrayConstructor)(randomArray(dtype, n, seed) as unknown as ArrayLike<number>) as unknown as Host;
  const r = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const info = DTYPE_INFO[dtype];
  if (dtype === "bool") return Uint8Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0));
  if (dtype === "float16") {
    return Uint16Array.from({ length: n }, () => (r() < 0.2 ? pick([0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x3c00, 0x7bff, 0xbc00]) : doubleToHalf((r() - 0.5) * 2 ** Math.floor(r() * 20 - 6))));
  }
  if (dtype === "bfloat16") {
    return Uint16Array.from({ length: n }, () => (r() < 0.2 ? pick([0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x3f80, 0x7f7f, 0xbf80]) : toBfloat16((r() - 0.5) * 2 ** Math.floor(r() * 80 - 40))));
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
    if (k < 0.25) return pick([0n, 1n, -1n, lo, hi, lo + 1n, hi - 1n, 2n, 31n, 32n, 64n, ...(bits === 64 ? ROUNDING_TRAPS : [])]);
    if (k < 0.6) return BigInt(Math.floor((r() - 0.5) * 64));
    return BigInt(Math.floor(r() * 2 ** 32)) * (bits === 64 ? BigInt(Math.floor(r() * 2 ** 32)) : 1n) - (signed ? 2n ** BigInt(bits - 1) : 0n);
  });
  const C = info.array as unknown as new (n: number) => Host;
  const a = new C(n);
  values.forEach((v, j) => { const w = signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v); a[j] = bits === 64 ? w : Number(w); });
  return a;
}

/** The value of an element as stored (half types decoded from their bits; bool 0/1). */
function stored(dtype: ScalarName, raw: number | bigint): number | bigint {
  if (dtype === "float16") return halfValue(raw as number);
  if (dtype === "bfloat16") return bfloat16Value(raw as number);
  return raw;
}

/** A value as the storage of `dtype` holds it (half types as their bits). */
function storage(dtype: ScalarName, v: number | bigint): number | bigint {
  if (dtype === "float16") return doubleToHalf(v as number);
  if (dtype === "bfloat16") return toBfloat16(v as number);
  return v;
}

/** The record dtype of a records parameter. */
const recordDType = (p: RecordParam): RecordDType => cuda.record(Object.fromEntries(p.fields.map((f) => [f.name, f.dtype])));

/** Random records, each field a value its dtype holds exactly (so packing them changes nothing). */
function randomRecords(p: RecordParam, seed: number): RecordObject[] {
  const columns = p.fields.map((f, j) => {
    const a = randomArray(f.dtype, THREADS, seed * 7 + j);
    const r = seeded(seed * 13 + j);
    return Array.from({ length: THREADS }, (_, i) => {
      const v = stored(f.dtype, a[i]!);
      if (f.dtype === "bool") return v === 1;
      // a 64-bit field may be given as a number when it holds it
      return typeof v === "bigint" && r() < 0.3 && Number.isSafeInteger(Number(v)) ? Number(v) : v;
    });
  });
  return Array.from({ length: THREADS }, (_, i) => Object.fromEntries(p.fields.map((f, j) => [f.name, columns[j]![i]!])) as RecordObject);
}

/** A typed scalar, number, bigint or boolean, as the launch passes it. */
function hostScalar(a: HostScalar): unknown {
  if (a.kind === "typed") return (dtypes[a.dtype] as (v: number) => unknown)(a.v);
  return a.v;
}

/** One run's host memory: what the launch is given, each array's whole buffer, each record array's objects and RecordArray. */
interface HostMemory {
  readonly args: unknown[];
  readonly buffers: Map<string, Host>;
  readonly records: Map<string, { objects: RecordObject[]; array?: RecordArray }>;
}

/** Fresh host arguments for `k` (the same contents every time); `recordArrays`: records always as a RecordArray (for ptxsim). */
function hostMemory(k: FuzzKernel, recordArrays = false): HostMemory {
  const buffers = new Map<string, Host>(), records = new Map<string, { objects: RecordObject[]; array?: RecordArray }>();
  const args = k.params.map((p, j): unknown => {
    switch (p.kind) {
      case "array": {
        // float atomic sums stay exact (so independent of the order) only from small integers
        const exactSums = p.role === "acc" && p.dtype.startsWith("float") && k.atomics.includes("add");
        const data = p.view?.shares ? buffers.get(p.view.shares)! : randomArray(exactSums ? "int8" : p.dtype, bufferLength(p), k.seed * 31 + j, p.dtype);
        buffers.set(p.name, data);
        return p.view ? { data, shape: [THREADS], stride: [p.view.stride], offset: p.view.offset } : data;
      }
      case "scalar": return hostScalar(p.arg);
      case "tuple": return structuredClone(p.value);
      case "records": {
        const objects = randomRecords(p, k.seed * 31 + j);
        const array = recordArrays || p.form === "recordArray" ? cuda.recordArray(recordDType(p), objects) : undefined;
        records.set(p.name, { objects, array });
        return array ?? objects;
      }
    }
  });
  return { args, buffers, records };
}

// ------------------------------------------------------------------ signatures

const tupleText = (spec: TupleSpec): string => {
  const items = spec.map((x) => (typeof x === "string" ? x : tupleText(x)));
  // Numba's two spellings of a tuple of one item type
  if (items.length > 1 && items.every((x) => x === items[0])) return items.length % 2 ? `UniTuple(${items[0]} x ${items.length})` : `UniTuple(${items[0]}, ${items.length})`;
  return `Tuple(${items.join(", ")})`;
};

const tupleSource = (t: HostTuple): string => `[${t.map((x) => (typeof x === "number" ? (Object.is(x, -0) ? "-0" : String(x)) : tupleSource(x))).join(", ")}]`;

/** A parameter's type in a signature string (records have none: they need a signature list). */
function typeText(p: FuzzParam, scalarType: () => ScalarName): string {
  switch (p.kind) {
    case "array": return `${p.dtype}[${p.layout === "C" ? "::1" : ":"}]`;
    case "scalar": return scalarType();
    case "tuple": return tupleText(p.spec);
    case "records": throw new Error("fuzz: a record array has no signature string");
  }
}

/** The kernel's parameter types for overload `j`: what the signature gives (and the PTX run compiles for). */
function parameterTypes(k: FuzzKernel, j: number): Type[] {
  let s = 0;
  const overload = k.overloads[j]!;
  return k.params.map((p): Type => {
    if (p.kind === "records") return recordDType(p).array(1);
    if (p.kind === "array") return arrayType(p.dtype, 1, p.layout);
    return parseTypeText(typeText(p, () => overload[s++]!));
  });
}

/** `options.signature`: a list of strings (a list of types when a record array needs one: then one signature). */
function signatureOption(k: FuzzKernel): NonNullable<JitOptions["signature"]> {
  if (k.params.some((p) => p.kind === "records")) return parameterTypes(k, 0);
  return k.overloads.map((o) => {
    let s = 0;
    return `void(${k.params.map((p) => typeText(p, () => o[s++]!)).join(", ")})`;
  });
}

// ------------------------------------------------------------------ comparing

/** Every element of every buffer and every field of every record, as `[where, comparable value]`. */
type Snapshot = [string, string][];

const floatKey = (x: number) => (Number.isNaN(x) ? "NaN" : Object.is(x, -0) ? "-0" : String(x));

/** A value as compared: floats by value (every NaN alike, -0 apart from 0), bools as 0/1, integers as they are. */
function key(dtype: ScalarName, v: number | bigint | boolean): string {
  if (typeof v === "boolean") return v ? "1" : "0";
  if (DTYPE_INFO[dtype].cls === "float") return floatKey(Number(v));
  return String(v);
}

function snapshot(k: FuzzKernel, m: HostMemory, fromArray: boolean): Snapshot {
  const out: Snapshot = [];
  for (const p of k.params) {
    if (p.kind === "array") {
      const b = m.buffers.get(p.name)!;
      for (let j = 0; j < b.length; j++) out.push([`${p.name}${p.view ? ".data" : ""}[${j}]`, key(p.dtype, stored(p.dtype, b[j]!))]);
    }
    if (p.kind === "records") {
      const r = m.records.get(p.name)!;
      for (let i = 0; i < THREADS; i++) {
        const rec = fromArray ? r.array!.read(i) as RecordObject : r.objects[i]!;
        for (const f of p.fields) out.push([`${p.name}[${i}].${f.name} (${f.dtype})`, key(f.dtype, rec[f.name]!)]);
      }
    }
  }
  return out;
}

/** The first places where two runs differ, or "" when none do. */
function differences(x: Snapshot, y: Snapshot, names: [string, string]): string {
  const lines: string[] = [];
  for (let j = 0; j < x.length && lines.length < 6; j++) {
    if (x[j]![1] !== y[j]![1]) lines.push(`  ${x[j]![0]}: ${names[0]} ${x[j]![1]}, ${names[1]} ${y[j]![1]}`);
  }
  return lines.join("\n");
}

// ------------------------------------------------------------------ the three runs

/** The reference's result, as a snapshot over the same host memory; undefined when the kernel does what the reference does not model. */
export function referenceRun(k: FuzzKernel, overload: number, source = k.source): Snapshot | undefined {
  const m = hostMemory(k);
  const overloadTypes = k.overloads[overload]!;
  let s = 0;
  const element = (dtype: ScalarName, raw: number | bigint): Val => ({ t: dtype, v: dtype === "bool" ? Number(raw) : stored(dtype, raw) });
  const params = new Map<string, Binding>(k.params.map((p): [string, Binding] => {
    switch (p.kind) {
      case "array": {
        const b = m.buffers.get(p.name)!;
        return [p.name, { kind: "array", dtype: p.dtype, data: Array.from({ length: length(p) }, (_, j) => element(p.dtype, b[position(p, j)]!)) }];
      }
      case "scalar": return [p.name, { kind: "val", val: launchValue(p.arg, overloadTypes[s++]!) }];
      case "tuple": return [p.name, { kind: "tuple", val: tupleValue(p.value, p.spec) }];
      case "records": {
        const objects = m.records.get(p.name)!.objects;
        const value = (dtype: ScalarName, v: number | bigint | boolean): Val => ({ t: dtype, v: typeof v === "boolean" ? Number(v) : DTYPE_INFO[dtype].size === 8 && DTYPE_INFO[dtype].cls !== "float" ? BigInt(v) : v });
        return [p.name, { kind: "records", fields: new Map(p.fields.map((f) => [f.name, { kind: "array", dtype: f.dtype, data: objects.map((o) => value(f.dtype, o[f.name]!)) }])) }];
      }
    }
  }));
  try { new Reference(k, params).run(THREADS, source); } catch (e) {
    if (e instanceof NotModelled) return undefined;
    throw e;
  }
  // write the results back where the host memory has them: a view's elements into its buffer, records' fields into their objects
  for (const p of k.params) {
    if (p.kind === "array") {
      const b = m.buffers.get(p.name)!, data = (params.get(p.name) as ArrayBinding).data;
      data.forEach((v, j) => { b[position(p, j)] = storage(p.dtype, v.v); });
    }
    if (p.kind === "records") {
      const fields = (params.get(p.name) as { fields: ReadonlyMap<string, ArrayBinding> }).fields;
      m.records.get(p.name)!.objects.forEach((o, i) => { for (const f of p.fields) o[f.name] = fields.get(f.name)!.data[i]!.v; });
    }
  }
  return snapshot(k, m, false);
}

export interface CheckOptions {
  /** run the PTX through ptxas too */
  readonly ptxas?: boolean;
  /** the kernel's text to run instead of k.source (the minimiser's variants) */
  readonly source?: string;
}

/** What one kernel's check found: a disagreement, and whether the reference took part. */
export interface CheckResult {
  readonly disagreement?: Disagreement;
  /** the reference compared its results (not an fma or math-library kernel, nothing unmodelled) */
  readonly referenceCompared: boolean;
}

/** Runs `k` through the API on the simulator, as PTX on ptxsim and on the reference; a disagreement, or undefined when all agree. */
export async function checkKernel(k: FuzzKernel, opts: CheckOptions = {}): Promise<Disagreement | undefined> {
  return (await check(k, opts)).disagreement;
}

export async function check(k: FuzzKernel, opts: CheckOptions = {}): Promise<CheckResult> {
  const source = opts.source ?? k.source;
  const fail = (kind: string, e: unknown): CheckResult => ({ disagreement: { kind, details: e instanceof Error ? e.message.slice(0, 2000) : String(e) }, referenceCompared: false });
  const fn = new Function(`return (${source});`)() as (...a: never[]) => void;
  const env = Object.fromEntries(k.devices.map((d) => [d.name, new Function(`return ${d.source};`)()]));
  const options: JitOptions = { name: `fuzz${k.seed}`, env, fma: k.fma, signature: signatureOption(k) };

  // the reference's choice of signature, by the documented rule
  const scalars = k.params.filter((p) => p.kind === "scalar").map((p) => p.arg);
  const overload = chooseOverload(scalars, k.overloads);

  // 1. the public API on the simulator: the dispatcher chooses, host memory is copied in and back
  let kernel;
  try { kernel = cuda.jit(fn, options); } catch (e) { return fail("compile error", e); }
  const sim = hostMemory(k);
  try {
    kernel.configure(THREADS / k.block, k.block)(...(sim.args as KernelArgument[]));
    cuda.synchronize();
  } catch (e) {
    if (overload === undefined && e instanceof LaunchError) return { referenceCompared: false };
    return fail("simulator error", e);
  }
  if (overload === undefined) return fail("simulator vs reference", "the launch ran; the reference expects a LaunchError (no signature holds the scalar arguments)");

  // 2. the PTX for the signature the reference chose, on ptxsim over the same host memory
  const types = parameterTypes(k, overload);
  let ir, mod;
  try {
    ir = compileToIR(fn, types, { ...options, signature: undefined, resolveDeviceFunction });
    mod = emitPtx(ir, { computeCapability: [8, 0] });
  } catch (e) { return fail("compile error", e); }
  if (opts.ptxas) {
    try { ptxasCheck(mod.text, "sm_80"); } catch (e) { return fail("ptxas error", e); }
  }
  const ptx = hostMemory(k, true);
  const dims: LaunchDims = { grid: [THREADS / k.block, 1, 1], block: [k.block, 1, 1], sharedMemBytes: 0 };
  try { await runOnPtxsim(mod, dims, kernelArgs(ptx.args as HostArg[], ir)); } catch (e) { return fail("ptxsim error", e); }
  const simSnapshot = snapshot(k, sim, false);
  const d = differences(simSnapshot, snapshot(k, ptx, true), ["simulator", "PTX"]);
  if (d) return { disagreement: { kind: "simulator vs PTX", details: d }, referenceCompared: false };

  // 3. the reference
  if (k.fma || k.transcendental) return { referenceCompared: false };
  let ref: Snapshot | undefined;
  try { ref = referenceRun(k, overload, source); } catch (e) { return fail("reference error", (e as Error).stack ?? e); }
  if (!ref) return { referenceCompared: false };
  const r = differences(simSnapshot, ref, ["simulator and PTX", "reference"]);
  return { disagreement: r ? { kind: "targets vs reference", details: r } : undefined, referenceCompared: true };
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

/** How the kernel's launch reads (for disagreement reports): its signatures and scalar, tuple and view arguments. */
export function describeLaunch(k: FuzzKernel): string {
  const sig = signatureOption(k);
  const lines = [`signature: ${typeof sig[0] === "string" ? (sig as string[]).join("; ") : "a list of types (records)"}`];
  for (const p of k.params) {
    if (p.kind === "scalar") lines.push(`${p.name} = ${p.arg.kind === "typed" ? `${p.arg.dtype}(${p.arg.v})` : p.arg.kind === "bigint" ? `${p.arg.v}n` : String(p.arg.v)}`);
    if (p.kind === "tuple") lines.push(`${p.name} = ${tupleSource(p.value)} as ${tupleText(p.spec)}`);
    if (p.kind === "array" && p.view) lines.push(`${p.name}: view of ${p.view.shares ? `${p.view.shares}'s buffer` : `${p.view.total} elements`}, offset ${p.view.offset}, stride ${p.view.stride}`);
    if (p.kind === "records") lines.push(`${p.name}: ${p.form} of ${String(recordDType(p))}`);
  }
  return lines.join("\n");
}
