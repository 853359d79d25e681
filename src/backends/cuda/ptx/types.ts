// Per-dtype PTX facts in one table: register class, arithmetic suffix, memory
// type and parameter type. Every instruction selector reads from here.

import type { ScalarName } from "../../../dtypes.js";
import type { PtxParam } from "./module.js";
import type { RegClass } from "./insts.js";

export interface PtxScalar {
  /** register class holding values of this dtype */
  readonly reg: RegClass;
  /** suffix for arithmetic, compares and conversions (`s32`, `f64`, …); narrow ints compute in 32 bits */
  readonly arith: string;
  /** `arith` with unsigned ints as signed: `neg` exists only for signed types (same two's-complement bits) */
  readonly signedArith: string;
  /** suffix for ld/st (bool is a byte) */
  readonly mem: string;
  /** type of a by-value kernel parameter slot */
  readonly param: PtxParam["ptxType"];
  /** suffix of the untyped bit type of the register (`b32`, …) */
  readonly bits: "pred" | "b16" | "b32" | "b64";
  /** width of the value in bits (for wrapping, shifts, clz) */
  readonly width: number;
  readonly signed: boolean;
}

const row = (reg: RegClass, arith: string, mem: string, param: PtxParam["ptxType"], width: number, signed: boolean): PtxScalar => ({
  reg, arith, mem, param, width, signed,
  signedArith: arith.replace(/^u/, "s"),
  bits: reg === "pred" ? "pred" : reg === "b16" ? "b16" : reg === "b64" || reg === "f64" ? "b64" : "b32",
});

export const PTX_SCALAR: Readonly<Record<ScalarName, PtxScalar>> = {
  bool: row("pred", "pred", "u8", "u8", 1, false),
  int8: row("b32", "s32", "s8", "s8", 8, true),
  int16: row("b32", "s32", "s16", "s16", 16, true),
  int32: row("b32", "s32", "s32", "s32", 32, true),
  int64: row("b64", "s64", "s64", "s64", 64, true),
  uint8: row("b32", "u32", "u8", "u8", 8, false),
  uint16: row("b32", "u32", "u16", "u16", 16, false),
  uint32: row("b32", "u32", "u32", "u32", 32, false),
  uint64: row("b64", "u64", "u64", "u64", 64, false),
  float16: row("b16", "f16", "b16", "b16", 16, true),
  bfloat16: row("b16", "bf16", "b16", "b16", 16, true),
  float32: row("f32", "f32", "f32", "f32", 32, true),
  float64: row("f64", "f64", "f64", "f64", 64, true),
};

export const isNarrowInt = (t: ScalarName): boolean => {
  const p = PTX_SCALAR[t];
  return (p.reg === "b32") && p.width < 32;
};

/** the unsigned integer suffix of a width (for bit manipulation of floats) */
export const uintOfWidth = (width: number): string => `u${width}`;

/** f32/f64 immediate text (exact bits) */
export function floatImm(type: "f32" | "f64", value: number): string {
  if (type === "f32") {
    const b = new DataView(new ArrayBuffer(4));
    b.setFloat32(0, value);
    return "0f" + b.getUint32(0).toString(16).toUpperCase().padStart(8, "0");
  }
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, value);
  return "0d" + b.getBigUint64(0).toString(16).toUpperCase().padStart(16, "0");
}
