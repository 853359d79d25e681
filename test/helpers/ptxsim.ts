// Runs a PtxModule on the PTX interpreter (tools/ptxsim), with the same KernelArg
// list the JS simulator takes: array bytes are copied in from each ArrayArg's
// SimBuffer and copied back after.
import { pathToFileURL } from "node:url";
import type { ScalarName } from "../../src/dtypes.js";
import { bfloat16Bits, float16Bits } from "../../src/half.js";
import type { ArrayArg, KernelArg, LaunchDims } from "../../src/abi/backend.js";
import type { SimBuffer } from "../../src/backends/sim/runtime/buffer.js";
import type { PtxModule } from "../../src/backends/cuda/ptx/module.js";
import { PTXSIM } from "./tools.js";

interface PtxsimMemory { alloc(bytes: number): number; write(addr: number, data: ArrayBufferView): void; read(addr: number, bytes: number): Uint8Array }
interface Ptxsim {
  loadModule(text: string): { compileErrors?: unknown[] };
  createMemory(): PtxsimMemory;
  launch(mod: unknown, name: string, opts: object): { output: string[]; stdout: string; instructions: number };
}

let sim: Ptxsim | undefined;

async function load(): Promise<Ptxsim> {
  if (!sim) sim = (await import(pathToFileURL(PTXSIM).href)) as Ptxsim;
  return sim;
}

export interface PtxsimResult {
  readonly output: readonly string[];
  readonly stdout: string;
  /** thread-instructions the launch ran */
  readonly instructions: number;
}

export interface PtxsimOptions {
  /** thread-instructions after which the launch fails as a runaway loop (ptxsim's default: 5e9) */
  readonly maxInstructions?: number;
}

/** Runs the module's kernel; a module ptxsim cannot read is an Error saying so, a fault in the launch ptxsim's own error. */
export async function runOnPtxsim(mod: PtxModule, dims: LaunchDims, args: readonly KernelArg[], options: PtxsimOptions = {}): Promise<PtxsimResult> {
  const ps = await load();
  let m: { compileErrors?: unknown[] };
  try {
    m = ps.loadModule(mod.text);
  } catch (e) {
    throw new Error(`ptxsim cannot load this module: ${(e as Error).message}`);
  }
  if (m.compileErrors && m.compileErrors.length) throw new Error(`ptxsim cannot run this module: ${JSON.stringify(m.compileErrors)}`);
  const memory = ps.createMemory();
  // one ptxsim allocation per distinct host memory, so views of one memory alias there too (the
  // fields of records are typed arrays of several types over one ArrayBuffer)
  const placed = new Map<ArrayBufferLike, number>();
  const addrOf = (a: ArrayArg): number => {
    const buf = simBuffer(a);
    let addr = placed.get(buf.bytes);
    if (addr === undefined) {
      addr = memory.alloc(Math.max(buf.bytes.byteLength, 1));
      memory.write(addr, new Uint8Array(buf.bytes));
      placed.set(buf.bytes, addr);
    }
    return addr + buf.byteOffset + a.byteOffset;
  };
  const params = mod.params.map((p) => {
    const a = args[p.from.arg];
    if (!a) throw new Error(`runOnPtxsim: missing argument ${p.from.arg}`);
    if (p.from.part === "value") {
      if (a.kind !== "scalar") throw new Error(`runOnPtxsim: argument ${p.from.arg} should be a scalar`);
      return { type: p.ptxType, value: scalarParam(p.ptxType, a.dtype, a.value) };
    }
    if (a.kind !== "array") throw new Error(`runOnPtxsim: argument ${p.from.arg} should be an array`);
    if (p.from.part === "ptr") return { type: "u64", value: addrOf(a) };
    const v = p.from.part === "shape" ? a.shape[p.from.dim!] : a.strides[p.from.dim!];
    return { type: "s32", value: v };
  });
  // a cooperative launch keeps every block resident, as a grid barrier needs
  const res = ps.launch(m, mod.entry, {
    grid: dims.grid, block: dims.block, sharedBytes: dims.sharedMemBytes, memory, params, cooperative: mod.cooperative, maxInstructions: options.maxInstructions,
  });
  for (const [bytes, addr] of placed) new Uint8Array(bytes).set(memory.read(addr, bytes.byteLength));
  return { output: res.output, stdout: res.stdout, instructions: res.instructions };
}

function simBuffer(a: ArrayArg): SimBuffer {
  if (a.buffer.kind !== "sim") throw new Error(`runOnPtxsim: array '${a.name}' is not host (sim) memory`);
  return a.buffer;
}

/** float16 and bfloat16 parameters travel as their bits */
function scalarParam(type: string, dtype: ScalarName, v: number | bigint | boolean): number | bigint | boolean {
  if (type !== "b16") return v;
  return dtype === "bfloat16" ? bfloat16Bits(Number(v)) : float16Bits(Number(v));
}
