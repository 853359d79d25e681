// Element-wise reductions of the ranks' buffers, in rank order, with the dtype's own arithmetic
// (wrap-around for integers, rounding to the dtype after every step for floats), as NCCL computes
// them on the GPU. The simulator's engine uses them; so do the tests' references, independently.

import { DTYPE_INFO, type ScalarName, type TypedArray } from "../dtypes.js";
import { float16Bits, float16FromBits } from "../half.js";
import type { ReduceOp } from "../runtime/communicator.js";

/** The dtypes NCCL has (ncclInt8 … ncclFloat64; no bool, int16 or uint16). */
export const NCCL_DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"] as const satisfies readonly ScalarName[];
export type NcclDType = (typeof NCCL_DTYPES)[number];
export const isNcclDType = (d: ScalarName): d is NcclDType => (NCCL_DTYPES as readonly string[]).includes(d);

export const REDUCE_OPS = ["sum", "prod", "min", "max", "avg"] as const satisfies readonly ReduceOp[];

type Scalar = number | bigint;

/** Reads and writes elements as values: float16 through its bits, the rest as the TypedArray stores them. */
function elementAccess(dtype: NcclDType): { read(a: TypedArray, i: number): Scalar; write(a: TypedArray, i: number, v: Scalar): void } {
  if (dtype === "float16") return { read: (a, i) => float16FromBits(a[i] as number), write: (a, i, v) => { a[i] = float16Bits(v as number); } };
  return { read: (a, i) => a[i]!, write: (a, i, v) => { (a as unknown as Scalar[])[i] = v; } };
}

/** a op b before rounding to the dtype (the store into the TypedArray wraps or rounds). */
function combine(dtype: NcclDType, op: Exclude<ReduceOp, "avg">): (a: Scalar, b: Scalar) => Scalar {
  switch (op) {
    case "sum": return (a, b) => (a as number) + (b as number);
    // a 32-bit product exceeds 2^53: Math.imul keeps its low 32 bits exactly
    case "prod": return dtype === "int32" || dtype === "uint32" ? (a, b) => Math.imul(a as number, b as number) : (a, b) => (a as number) * (b as number);
    case "min": return (a, b) => (b < a ? b : a);
    case "max": return (a, b) => (b > a ? b : a);
  }
}

/** A TypedArray of `dtype` over `bytes` (over a copy when they are not aligned for it). */
export function typedView(dtype: ScalarName, bytes: Uint8Array): TypedArray {
  const copy = bytes.byteOffset % DTYPE_INFO[dtype].size === 0 ? bytes : bytes.slice();
  return new DTYPE_INFO[dtype].array(copy.buffer as ArrayBuffer, copy.byteOffset, copy.byteLength / DTYPE_INFO[dtype].size);
}

/**
 * parts[0] op parts[1] op … (rank order), element by element. avg: floats scale each part by
 * 1/worldSize before summing, integers sum then divide (truncating), as NCCL's ncclAvg does.
 */
export function reduceParts(dtype: NcclDType, op: ReduceOp, parts: readonly Uint8Array[]): Uint8Array {
  const { read, write } = elementAccess(dtype);
  const views = parts.map((p) => typedView(dtype, p));
  const n = views[0]!.length;
  const out = new DTYPE_INFO[dtype].array(n);
  const f = combine(dtype, op === "avg" ? "sum" : op);
  const float = DTYPE_INFO[dtype].cls === "float";
  // the scaling of avg is rounded to the dtype too: the factor, then each product
  const scratch = new DTYPE_INFO[dtype].array(1);
  const round = (v: Scalar) => { write(scratch, 0, v); return read(scratch, 0) as number; };
  const scale = float ? round(1 / parts.length) : 1;
  const pre = (v: Scalar) => (op === "avg" && float ? round((v as number) * scale) : v);
  for (let i = 0; i < n; i++) {
    write(out, i, pre(read(views[0]!, i)));
    // each step rounds (or wraps) to the dtype, as the GPU's arithmetic does
    for (let r = 1; r < views.length; r++) write(out, i, f(read(out, i), pre(read(views[r]!, i))));
    if (op === "avg" && !float) {
      const s = read(out, i);
      write(out, i, typeof s === "bigint" ? s / BigInt(parts.length) : Math.trunc(s / parts.length));
    }
  }
  return new Uint8Array(out.buffer);
}
