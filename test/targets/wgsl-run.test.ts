// The WGSL target's kernels run: every kernel case (test/cases) that fits the WebGPU subset runs on
// Dawn's CPU adapters (lavapipe, SwiftShader) from its WGSL, its buffers bound as the layout says, and
// the case's own host reference checks the results and the printed lines (decodeStatus). Dawn runs in
// a child process; without the adapters (VK_ICD_FILENAMES, LD_LIBRARY_PATH) the test is skipped.
// Arguments that view one buffer (record fields) are bound once (emitWgsl's sharedBuffers), as WebGPU
// cannot bind a written buffer twice.

import { test } from "node:test";
import assert from "node:assert/strict";
import { API_CASES } from "../cases/api.js";
import { HALF_CASES } from "../cases/half.js";
import { COMPLEX_CASES } from "../cases/complex.js";
import { LANGUAGE_CASES } from "../cases/language.js";
import { LITERAL_CASES } from "../cases/literals.js";
import { RECORD_CASES } from "../cases/records.js";
import { argumentTypes, dims3, envArrayContents, envArrayCopies, kernelArgs, type HostArg, type KernelCase } from "../helpers/crosscheck.js";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { DTYPE_INFO, isArrayType, isTupleType } from "../../src/dtypes.js";
import { parseThrowSite } from "../../src/abi/launch-abi.js";
import type { KernelArg } from "../../src/abi/backend.js";
import type { SimBuffer } from "../../src/backends/sim/runtime/buffer.js";
import { decodeStatus, emitWgsl, type ParamField, type WgslKernel } from "../../src/backends/webgpu/wgsl/index.js";
import { ADAPTERS, dawnSetup, runWgsl, type WgslJob } from "./wgsl-dawn.js";
import { cuda, int8, int32, int64, type RecordArray } from "../../src/index.js";

/** an int64 field among narrower ones: its elements are two words of the record's one binding, at a computed index */
const Wide = cuda.record({ k: int64, n: int32, b: int8 });
const wideRecords = () => cuda.recordArray(Wide, Array.from({ length: 40 }, (_, i) => ({ k: BigInt(i) * 3_000_000_007n - 5n, n: i * 7 - 100, b: i - 20 })));

const WIDE_CASES: readonly KernelCase[] = [{
  name: "records with an int64 field and an int64 scalar parameter",
  kernel: ((a: any, s: bigint) => {
    const i = cuda.grid(1);
    if (i < a.length) { a[i].k = a[i].k * 6364136223846793005n + s + BigInt(a[i].n); a[i].b = int8(a[i].k >> 56n); a[i].n = int32(a[i].k >> 20n); }
  }) as (...args: never[]) => void,
  grid: 2, block: 32,
  args: () => [wideRecords(), -77n],
  check: ([ra]) => {
    const want = wideRecords().toObjects().map((o, i) => {
      const k = BigInt.asIntN(64, BigInt(o.k as bigint) * 6364136223846793005n - 77n + BigInt(i * 7 - 100));
      return { k, n: Number(BigInt.asIntN(32, k >> 20n)), b: Number(BigInt.asIntN(8, k >> 56n)) };
    });
    assert.deepEqual((ra as RecordArray).toObjects(), want);
  },
}];

const CASES: readonly KernelCase[] = [...LANGUAGE_CASES, ...LITERAL_CASES, ...API_CASES, ...RECORD_CASES, ...HALF_CASES, ...COMPLEX_CASES, ...WIDE_CASES];

interface Prepared {
  readonly c: KernelCase;
  readonly args: HostArg[];
  readonly kernel: WgslKernel;
  readonly kargs: KernelArg[];
  readonly strings: readonly string[];
  /** each array binding's bytes as sent */
  readonly sent: Uint8Array[];
}

/** the parameter block: each field's 4 bytes from its launch argument */
function paramBytes(fields: readonly ParamField[], kargs: readonly KernelArg[]): Uint8Array {
  const bytes = new Uint8Array(Math.max(16, Math.ceil((fields.length * 4) / 16) * 16));
  const view = new DataView(bytes.buffer);
  fields.forEach((f, k) => {
    const a = kargs[f.arg]!;
    if (f.what === "value") {
      if (a.kind !== "scalar") throw new Error("a value field of an array argument");
      const v = a.value;
      if (f.word !== undefined) view.setUint32(4 * k, Number(BigInt.asUintN(32, BigInt.asUintN(64, BigInt(v as bigint)) >> BigInt(32 * f.word))), true);
      else if (f.dtype === "float32" || f.dtype === "float16") view.setFloat32(4 * k, Number(v), true);
      else if (f.dtype === "bool") view.setUint32(4 * k, v ? 1 : 0, true);
      else view.setInt32(4 * k, Number(v) | 0, true);
      return;
    }
    if (a.kind !== "array") throw new Error("an array field of a scalar argument");
    const n = f.what === "offset" ? a.byteOffset / DTYPE_INFO[a.dtype].size : f.what === "shape" ? a.shape[f.dim]! : a.strides[f.dim]!;
    view.setInt32(4 * k, n, true);
  });
  return bytes;
}

/** an array argument's whole buffer, padded to whole words */
function arrayBytes(a: KernelArg): Uint8Array {
  if (a.kind !== "array") throw new Error("a binding of a scalar argument");
  const buf = a.buffer as SimBuffer;
  const out = new Uint8Array(Math.ceil(buf.byteLength / 4) * 4);
  out.set(new Uint8Array(buf.bytes, buf.byteOffset, buf.byteLength));
  return out;
}

/** the array arguments that view one buffer (a record array's fields), as groups of their indices */
function sharedBuffers(kargs: readonly KernelArg[]): number[][] {
  const groups = new Map<unknown, number[]>();
  kargs.forEach((a, i) => {
    if (a.kind !== "array") return;
    const buf = a.buffer as SimBuffer;
    const same = [...groups.entries()].find(([b]) => (b as SimBuffer).bytes === buf.bytes && (b as SimBuffer).byteOffset === buf.byteOffset);
    if (same) same[1].push(i);
    else groups.set(buf, [i]);
  });
  return [...groups.values()].filter((g) => g.length > 1);
}

function prepare(c: KernelCase, adapter: keyof typeof ADAPTERS): Prepared | undefined {
  const args = c.args();
  const ir = compileToIR(c.kernel, argumentTypes(c, args), { ...c.options, name: c.name, resolveDeviceFunction });
  if (ir.params.some((p) => isTupleType(p.type))) return undefined; // tuple arguments: not marshalled here
  const kargs = kernelArgs(args, ir, envArrayCopies(ir, envArrayContents(c.options?.env)));
  if (ir.params.some((p, i) => isArrayType(p.type) !== (kargs[i]?.kind === "array"))) return undefined;
  let kernel: WgslKernel;
  try { kernel = emitWgsl(ir, ADAPTERS[adapter], { sharedBuffers: sharedBuffers(kargs) }); } catch { return undefined; }
  return { c, args, kernel, kargs, strings: ir.strings, sent: kernel.arrays.map((b) => arrayBytes(kargs[b.arg]!)) };
}

function job(p: Prepared): WgslJob {
  const { c, kernel, kargs } = p;
  return {
    code: kernel.code, entryPoint: kernel.entryPoint, params: paramBytes(kernel.params, kargs),
    arrays: kernel.arrays.map((b, j) => ({ binding: b.binding, readOnly: b.readOnly, data: p.sent[j]! })),
    statusWords: kernel.statusWords, grid: dims3(c.grid), block: dims3(c.block),
    ...(kernel.dynamicShared ? { dynamicSharedBytes: c.sharedMemBytes ?? 0 } : {}),
  };
}

/**
 * Where an adapter's float results leave what the simulator computes, as WGSL permits (measured): the
 * case (by the start of its name), and why. The case must fail there, with its float result only.
 */
const ADAPTER_FLOATS: Readonly<Record<keyof typeof ADAPTERS, Readonly<Record<string, string>>>> = {
  lavapipe: {},
  swiftshader: { "32-bit atomic max/min on all-negative int32": "SwiftShader flushes float32 subnormals in arithmetic (results and operands, wherever the values live; loads and stores keep them, as WGSL allows), so the shared-memory sum of 32 × 1e-40 is 0" },
};

for (const adapter of Object.keys(ADAPTERS) as (keyof typeof ADAPTERS)[]) {
  test(`the kernel cases that fit run on ${adapter} from their WGSL and pass their host references`, (t) => {
    const setup = dawnSetup(adapter);
    if (typeof setup === "string") { t.skip(setup); return; }
    const prepared = CASES.map((c) => prepare(c, adapter)).filter((p): p is Prepared => p !== undefined);
    const runs = runWgsl(setup, prepared.map(job));
    const failures: string[] = [];
    prepared.forEach((p, k) => {
      const run = runs[k]!;
      if ("error" in run) { failures.push(`${p.c.name}: ${run.error}`); return; }
      // bindings may view one buffer (a record array's fields): each brings back only the bytes it changed
      p.kernel.arrays.forEach((b, j) => {
        const buf = (p.kargs[b.arg] as { buffer: SimBuffer }).buffer;
        const host = new Uint8Array(buf.bytes, buf.byteOffset, buf.byteLength), sent = p.sent[j]!, got = run.arrays[j]!;
        for (let x = 0; x < host.length; x++) if (got[x] !== sent[x]) host[x] = got[x]!;
      });
      const status = decodeStatus(p.kernel, p.strings, run.status);
      if (status.thrown) { failures.push(`${p.c.name}: threw ${parseThrowSite(p.strings[status.thrown.site]!).message}`); return; }
      if (status.fault) { failures.push(`${p.c.name}: ${status.fault.message}`); return; }
      try {
        p.c.check(p.args, status.lines);
      } catch (e) {
        failures.push(`${p.c.name}: ${(e as Error).message.split("\n").slice(0, 12).join("\n")}`);
      }
    });
    t.diagnostic(`${adapter}: ${prepared.length - failures.length} of ${prepared.length} cases pass`);
    const shared = prepared.filter((p) => p.kernel.arrays.some((b) => (b.args?.length ?? 0) > 1));
    t.diagnostic(`  ${shared.length} of them bind a buffer that several arrays view (record fields) once`);
    assert.ok(shared.some((p) => p.kernel.arrays.some((b) => b.args && !b.readOnly)), "a case writes a record array");
    const known = Object.entries(ADAPTER_FLOATS[adapter]);
    for (const [name, why] of known) t.diagnostic(`  ${name}…: ${why}`);
    assert.deepEqual(failures.filter((f) => !known.some(([name]) => f.startsWith(name))), []);
    assert.equal(failures.length, known.length, "a known float difference no longer shows: remove it from ADAPTER_FLOATS");
  });
}
