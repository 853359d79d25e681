// Runs one example (argv: FILE SIZE) with every kernel launch recorded, then replays the first
// launches of each specialisation from snapshots of their inputs: the PTX through ptxas (sm_80,
// sm_90) and on ptxsim, the simulator beside it; prints one JSON report line at the end.
// Used by test/product/examples.test.ts, in a child process per example (examples set process.exitCode).

process.env.NUMBATS_TARGET = "sim";

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { FunctionIR } from "../../src/compiler/ir.js";
import { convertScalar, isArrayType, type ScalarName } from "../../src/dtypes.js";
import { Kernel } from "../../src/kernel.js";
import type { Backend, KernelArg, LaunchDims } from "../../src/abi/backend.js";
import type { SimBuffer } from "../../src/backends/sim/runtime/buffer.js";
import { DeviceArray } from "../../src/runtime/devicearray.js";
import { isNDArrayLike } from "../../src/ndarray.js";
import { getBackend } from "../../src/runtime/select.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { hasPtxas, ptxasCheck } from "./ptxas.js";
import { runOnPtxsim } from "./ptxsim.js";
import { recordFields } from "./records.js";
import { FieldArgument } from "../../src/runtime/records.js";
import { complexKernelArg } from "../../src/complex.js";

/** Launches of one specialisation replayed at most this often (later ones repeat the same code). */
const REPLAYS = 2;
/** ptxsim interprets every thread: bigger launches are only assembled. */
const MAX_PTXSIM_THREADS = 1 << 17;

interface Launch { readonly ir: FunctionIR; readonly dims: LaunchDims; readonly snapshot: () => KernelArg[] }
interface Report { kernel: string; launch: string; ptxas: string; ptxsim: string }

const copyBuffer = (bytes: Uint8Array): SimBuffer => {
  const copy = new Uint8Array(bytes);
  return { kind: "sim", bytes: copy.buffer, byteOffset: 0, byteLength: copy.byteLength, freed: false };
};

/** The launch's arguments as KernelArgs over copies of their current contents. */
function snapshotOf(ir: FunctionIR, args: readonly unknown[]): () => KernelArg[] {
  const frozen = recordFields(args).map((a, i): KernelArg => {
    const arg = snapshotArg(ir, a, i);
    const t = ir.params[i]!.type;
    // a complex array arrives as its interleaved float parts: the (re, im) pairs become the last dimension
    return isArrayType(t) && t.complex && arg.kind === "array" ? complexKernelArg(arg, t, i) : arg;
  });
  // each call: fresh copies, so two runs cannot see each other's writes
  return () => frozen.map((a) => (a.kind === "array" ? { ...a, buffer: copyBuffer(new Uint8Array(a.buffer.bytes as ArrayBuffer)) } : a));
}

/** Argument `i` as a KernelArg over a copy of its current contents. */
function snapshotArg(ir: FunctionIR, a: unknown, i: number): KernelArg {
  const t = ir.params[i]!.type, name = ir.params[i]!.name;
  if (!isArrayType(t)) return { kind: "scalar", dtype: t as ScalarName, value: convertScalar(t as ScalarName, (a as { valueOf(): number }).valueOf()) };
  if (a instanceof FieldArgument) {
    const k = a.toKernelArg(name), b = k.buffer as SimBuffer;
    return { ...k, buffer: copyBuffer(new Uint8Array(b.bytes, b.byteOffset, b.byteLength)) };
  }
  if (a instanceof DeviceArray) {
    const b = a.buffer as SimBuffer;
    return { kind: "array", buffer: copyBuffer(new Uint8Array(b.bytes, b.byteOffset, b.byteLength)), byteOffset: a.byteOffset, dtype: t.dtype, shape: a.shape, strides: a.elementStrides, name };
  }
  const nd = isNDArrayLike(a) ? a : undefined;
  const v = (nd ? nd.data : a) as ArrayBufferView & { length: number; BYTES_PER_ELEMENT: number };
  const buffer = copyBuffer(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  return nd
    ? { kind: "array", buffer, byteOffset: nd.offset * v.BYTES_PER_ELEMENT, dtype: t.dtype, shape: nd.shape, strides: nd.stride, name }
    : { kind: "array", buffer, byteOffset: 0, dtype: t.dtype, shape: [v.length], strides: [1], name };
}

const launches: Launch[] = [];
const replays = new Map<unknown, number>();
// the general launch, as the steps a launcher runs (blocking) or its `async` awaits
type LaunchSteps = (dims: LaunchDims, args: unknown[], stream: unknown) => Generator<unknown, void, unknown>;
const proto = Kernel.prototype as unknown as { launchSteps: LaunchSteps; specialisationFor(args: unknown[], backend: Backend): { ir: FunctionIR } };
const launchSteps = proto.launchSteps;
proto.launchSteps = function (this: typeof proto, dims, args, stream) {
  const spec = this.specialisationFor(args, getBackend());
  const n = replays.get(spec) ?? 0;
  replays.set(spec, n + 1);
  if (n < REPLAYS) launches.push({ ir: spec.ir, dims, snapshot: snapshotOf(spec.ir, args) });
  return launchSteps.call(this, dims, args, stream);
};

const [file, size] = process.argv.slice(2);
process.argv.splice(2, process.argv.length - 2, size!);
await import(pathToFileURL(resolve(file!)).href);
const exampleExitCode = process.exitCode;

const reports: Report[] = [];
for (const { ir, dims, snapshot } of launches) {
  const mod = emitPtx(ir, { computeCapability: [8, 0] });
  const report: Report = { kernel: ir.name, launch: `grid ${dims.grid} block ${dims.block}`, ptxas: "skipped", ptxsim: "skipped" };
  reports.push(report);
  if (hasPtxas()) {
    try { ptxasCheck(mod.text, "sm_80"); ptxasCheck(mod.text, "sm_90"); report.ptxas = "ok"; } catch (e) { report.ptxas = String(e).slice(0, 400); }
  }
  const threads = dims.grid.reduce((p, q) => p * q, 1) * dims.block.reduce((p, q) => p * q, 1);
  if (threads > MAX_PTXSIM_THREADS) continue;
  const onSim = snapshot(), onPtx = snapshot();
  compileSim(ir).launch(dims, onSim, getBackend().defaultStream(), ir.features.gridSync);
  try {
    await runOnPtxsim(mod, dims, onPtx);
  } catch (e) {
    report.ptxsim = `failed: ${String(e).slice(0, 400)}`;
    continue;
  }
  const differ = onSim.findIndex((a, i) => a.kind === "array" && Buffer.compare(Buffer.from(a.buffer.bytes as ArrayBuffer), Buffer.from((onPtx[i] as typeof a).buffer.bytes as ArrayBuffer)) !== 0);
  report.ptxsim = differ < 0 ? "ok" : `argument ${differ + 1} ('${ir.params[differ]!.name}') differs from the simulator's`;
}
process.exitCode = 0;
console.log(JSON.stringify({ exampleExitCode: exampleExitCode ?? 0, reports }));
