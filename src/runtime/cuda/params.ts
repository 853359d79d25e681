// Kernel parameters for cuLaunchKernel: `void *kernelParams[n]`, each entry
// pointing at one argument's value.
//
// The layout is computed once per compiled kernel: every value gets a slot at
// its natural alignment in one native block, and the pointer array is filled
// once. A launch only writes values into the slots.

import koffi from "koffi";
import type { ArrayArg, KernelArg } from "../backend.js";
import type { PtxParam } from "../../targets/ptx/module.js";
import { float16Bits } from "../../dtypes.js";
import { LaunchError } from "../../errors.js";

type Value = number | bigint | boolean;
type Write = (view: DataView, offset: number, x: Value) => void;

/** How each PTX slot type stores a JS value (little-endian, as the GPU reads it). b16 carries float16. */
const WRITE: Readonly<Record<PtxParam["ptxType"], Write>> = {
  u8: (v, o, x) => v.setUint8(o, Number(x)),
  s8: (v, o, x) => v.setInt8(o, Number(x)),
  u16: (v, o, x) => v.setUint16(o, Number(x), true),
  s16: (v, o, x) => v.setInt16(o, Number(x), true),
  u32: (v, o, x) => v.setUint32(o, Number(x), true),
  s32: (v, o, x) => v.setInt32(o, Number(x), true),
  u64: (v, o, x) => v.setBigUint64(o, BigInt.asUintN(64, BigInt(x)), true),
  s64: (v, o, x) => v.setBigInt64(o, BigInt.asIntN(64, BigInt(x)), true),
  f32: (v, o, x) => v.setFloat32(o, Number(x), true),
  f64: (v, o, x) => v.setFloat64(o, Number(x), true),
  b16: (v, o, x) => v.setUint16(o, float16Bits(Number(x)), true),
};

/** The device address of an array argument; the device validates the buffer. */
export type PointerOf = (arg: ArrayArg) => bigint;

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
const nativeBlocks = new FinalizationRegistry<unknown[]>((mem) => mem.forEach((m) => koffi.free(m)));

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

  constructor(params: readonly PtxParam[]) {
    this.params = params;
    const { offsets, byteLength } = paramLayout(params);
    this.offsets = offsets;
    this.byteLength = byteLength;
    const slots = koffi.alloc("uint8_t", Math.max(8, byteLength));
    const pointers = koffi.alloc("void *", Math.max(1, params.length));
    nativeBlocks.register(this, [slots, pointers]);
    this.values = new DataView(koffi.view(slots, byteLength));
    this.valuesAddress = koffi.address(slots);
    const table = new BigUint64Array(koffi.view(pointers, 8 * Math.max(1, params.length)));
    offsets.forEach((o, i) => (table[i] = this.valuesAddress + BigInt(o)));
    this.kernelParams = params.length ? pointers : null;
  }

  /** Writes every slot from the launch arguments. */
  write(args: readonly KernelArg[], pointerOf: PointerOf): void {
    const { params, offsets, values } = this;
    for (let i = 0; i < params.length; i++) {
      const p = params[i]!;
      const arg = args[p.from.arg];
      if (!arg) throw new LaunchError(`kernel parameter '${p.name}' needs argument ${p.from.arg}, but ${args.length} were given`);
      WRITE[p.ptxType](values, offsets[i]!, READ[p.from.part](arg, p.from.dim ?? 0, pointerOf));
    }
  }
}
