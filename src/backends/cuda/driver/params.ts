// Kernel parameters for cuLaunchKernel: `void *kernelParams[n]`, each entry
// pointing at one argument's value.
//
// The layout is computed once per compiled kernel: every value gets a slot at
// its natural alignment in one native block, and the pointer array is filled
// once. A launch only writes values into the slots.

import { koffi } from "./ffi.js";
import type { ArrayArg, KernelArg, ScalarSlots } from "../../../abi/backend.js";
import type { PtxParam } from "../ptx/module.js";
import { bfloat16Bits, float16Bits } from "../../../half.js";
import { LaunchError } from "../../../errors.js";

type Value = number | bigint | boolean;

/**
 * The device address of an array argument, as a Number (exact: device and host addresses are below
 * 2^53); the device validates the buffer.
 */
export type PointerOf = (arg: ArrayArg) => number;

type Read = (arg: KernelArg, dim: number, pointerOf: PointerOf) => Value;

const READ: Readonly<Record<PtxParam["from"]["part"], Read>> = {
  ptr: (a, _dim, pointerOf) => pointerOf(asArray(a)),
  shape: (a, dim) => asArray(a).shape[dim]!,
  stride: (a, dim) => asArray(a).strides[dim]!,
  value: (a) => {
    if (a.kind !== "scalar") throw new LaunchError(`expected a scalar argument, got an array ('${a.name}')`);
    return a.value;
  },
};

function asArray(a: KernelArg): ArrayArg {
  if (a.kind !== "array") throw new LaunchError(`expected an array argument, got a ${a.dtype} scalar`);
  return a;
}

/** Byte offset of each slot (natural alignment, in order) and the block's total size. */
export function paramLayout(params: readonly PtxParam[]): { offsets: number[]; byteLength: number } {
  const offsets: number[] = [];
  let end = 0;
  for (const p of params) {
    const at = Math.ceil(end / p.size) * p.size;
    offsets.push(at);
    end = at + p.size;
  }
  return { offsets, byteLength: Math.ceil(end / 8) * 8 };
}

// native memory of blocks that were garbage-collected
const nativeBlocks = new FinalizationRegistry<unknown[]>((mem) => mem.forEach((m) => koffi().free(m)));

/** `bytes` of zeroed native memory, freed once `owner` is garbage-collected. */
export function nativeMemory(owner: object, bytes: number): unknown {
  const mem = koffi().alloc("uint8_t", bytes);
  new Uint8Array(koffi().view(mem, bytes)).fill(0);
  nativeBlocks.register(owner, [mem]);
  return mem;
}

export class ParamBlock {
  readonly params: readonly PtxParam[];
  readonly offsets: readonly number[];
  readonly byteLength: number;
  /** the slots, in native memory */
  readonly values: DataView;
  /** native address of the slots */
  readonly valuesAddress: bigint;
  /** `void *kernelParams[n]` for cuLaunchKernel (null when the kernel has no parameters) */
  readonly kernelParams: unknown;
  /** the address of kernelParams as a Number (0 when null), for cuLaunchKernelEx */
  readonly kernelParamsAddress: number;

  constructor(params: readonly PtxParam[]) {
    this.params = params;
    const { offsets, byteLength } = paramLayout(params);
    this.offsets = offsets;
    this.byteLength = byteLength;
    const ffi = koffi();
    const slots = ffi.alloc("uint8_t", Math.max(8, byteLength));
    const pointers = ffi.alloc("void *", Math.max(1, params.length));
    nativeBlocks.register(this, [slots, pointers]);
    this.values = new DataView(ffi.view(slots, byteLength));
    this.valuesAddress = ffi.address(slots);
    const table = new BigUint64Array(ffi.view(pointers, 8 * Math.max(1, params.length)));
    offsets.forEach((o, i) => (table[i] = this.valuesAddress + BigInt(o)));
    this.kernelParams = params.length ? pointers : null;
    this.kernelParamsAddress = params.length ? Number(ffi.address(pointers)) : 0;
    const buffer = this.values.buffer as ArrayBuffer;
    this.writeAll = compileWriter(params, offsets, buffer);
    this.writeArrays = compileWriter(params.map((p) => (p.from.part === "value" ? undefined : p)), offsets, buffer);
    this.scalarSlots = { buffer, offsets: scalarOffsets(params, offsets) };
  }

  /** The scalar slots, for launches that store their numbers directly. */
  readonly scalarSlots: ScalarSlots;

  /** Writes the slots from the launch arguments: all of them, or, once the scalars are stored, the arrays'. */
  write(args: readonly KernelArg[], pointerOf: PointerOf, scalarsStored = false): void {
    // the dispatcher passes the same argument list on every launch of a specialisation, with
    // the same kinds in each position: check it once
    if (args !== this.checked) this.check(args, pointerOf);
    (scalarsStored ? this.writeArrays : this.writeAll)(args, pointerOf);
  }

  private checked: readonly KernelArg[] | undefined;

  private check(args: readonly KernelArg[], pointerOf: PointerOf): void {
    const { params } = this;
    for (let i = 0; i < params.length; i++) {
      const p = params[i]!;
      const arg = args[p.from.arg];
      if (!arg) throw new LaunchError(`kernel parameter '${p.name}' needs argument ${p.from.arg}, but ${args.length} were given`);
      if (arg.kind !== (p.from.part === "value" ? "scalar" : "array")) {
        // READ raises the precise error
        READ[p.from.part](arg, p.from.dim ?? 0, pointerOf);
      }
    }
    this.checked = args;
  }

  /**
   * The slot writes as one straight-line function, generated once per kernel:
   * a launch with 256 scalars then costs 256 DataView stores, no table lookups.
   */
  private readonly writeAll: Writer;
  /** the same, for the arrays' slots only */
  private readonly writeArrays: Writer;
}

/** Per launch argument, the offset of its scalar's slot. */
function scalarOffsets(params: readonly PtxParam[], offsets: readonly number[]): (number | undefined)[] {
  const byArg: (number | undefined)[] = [];
  params.forEach((p, i) => { if (p.from.part === "value") byArg[p.from.arg] = offsets[i]; });
  return byArg;
}

/**
 * How each PTX slot type stores a JS value: typed-array views of the block
 * (slots are naturally aligned; x86-64 and Arm64 hosts are little-endian, as
 * the GPU reads the block). b16 carries float16 or bfloat16 bits, by the argument's dtype.
 */
const STORE: Readonly<Record<PtxParam["ptxType"], (o: number, x: string, arg: string) => string>> = {
  u8: (o, x) => `u8[${o}] = Number(${x})`,
  s8: (o, x) => `u8[${o}] = Number(${x})`,
  u16: (o, x) => `u16[${o / 2}] = Number(${x})`,
  s16: (o, x) => `u16[${o / 2}] = Number(${x})`,
  u32: (o, x) => `i32[${o / 4}] = Number(${x})`,
  s32: (o, x) => `i32[${o / 4}] = Number(${x})`,
  u64: (o, x) => `i64[${o / 8}] = BigInt.asIntN(64, BigInt(${x}))`,
  s64: (o, x) => `i64[${o / 8}] = BigInt.asIntN(64, BigInt(${x}))`,
  f32: (o, x) => `f32[${o / 4}] = ${x}`,
  f64: (o, x) => `f64[${o / 8}] = ${x}`,
  b16: (o, x, arg) => `u16[${o / 2}] = (${arg}.dtype === "bfloat16" ? bf16 : f16)(Number(${x}))`,
};

type Writer = (args: readonly KernelArg[], pointerOf: PointerOf) => void;

/** The slot writes as straight-line code over views of `buffer`, made once; undefined params are skipped. */
function compileWriter(params: readonly (PtxParam | undefined)[], offsets: readonly number[], buffer: ArrayBuffer): Writer {
  const lines = params.map((p, i) => {
    if (!p) return "";
    const a = `args[${p.from.arg}]`;
    // an address is stored as two 32-bit words: no BigInt made per launch
    if (p.from.part === "ptr") return `    p = pointerOf(${a}); u32[${offsets[i]! / 4}] = p; u32[${offsets[i]! / 4 + 1}] = p / 4294967296;`;
    const x = p.from.part === "shape" ? `${a}.shape[${p.from.dim ?? 0}]`
      : p.from.part === "stride" ? `${a}.strides[${p.from.dim ?? 0}]`
      : `${a}.value`;
    return `    ${STORE[p.ptxType](offsets[i]!, x, a)};`;
  });
  const make = new Function("f16", "bf16", "b", `
  const u8 = new Uint8Array(b), u16 = new Uint16Array(b, 0, b.byteLength >> 1), i32 = new Int32Array(b, 0, b.byteLength >> 2), u32 = new Uint32Array(b, 0, b.byteLength >> 2);
  const f32 = new Float32Array(b, 0, b.byteLength >> 2), f64 = new Float64Array(b, 0, b.byteLength >> 3), i64 = new BigInt64Array(b, 0, b.byteLength >> 3);
  return function writeParams(args, pointerOf) {
    let p;
${lines.join("\n")}
  };`);
  return make(float16Bits, bfloat16Bits, buffer) as Writer;
}
