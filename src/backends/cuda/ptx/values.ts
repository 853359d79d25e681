// What an IR value is while the emitter works: a scalar (register or immediate), an array's registers,
// a tuple of values, or nothing (void); and small helpers on them shared by the emitter's modules.

import type { ArrayType, ScalarName } from "../../../dtypes.js";
import type { Expr } from "../../../compiler/ir.js";
import type { Strided } from "../../../abi/launch-abi.js";
import { HALF_FLOAT } from "../../../half.js";
import { imm, type Reg, type RegClass, type Scalar } from "./insts.js";

/**
 * An array value: base address plus shape and strides (elements). Where its
 * registers are written decides what may be cached about it:
 * - entry: once, in the prologue (parameters, allocations) — derived values may go there too;
 * - value: once, in the body (a select of arrays, a copy);
 * - home: an array local that is reassigned — every assignment writes its registers.
 */
export interface ArrayVal extends Strided<Scalar> {
  readonly k: "array";
  readonly type: ArrayType;
  /** memo key part: unique per array value (the variable's name for parameters and locals) */
  readonly key: string;
  /** address of element 0 in its space (32-bit for shared/local, else 64-bit) */
  readonly base: Reg;
  readonly readonly: boolean;
  readonly origin: "entry" | "value" | "home";
}
export interface TupleVal { readonly k: "tuple"; readonly items: readonly PtxValue[] }
/** what an expression is in the PTX being emitted: a scalar (register or immediate), an array's registers, a tuple's, or nothing (void) */
export type PtxValue = Scalar | ArrayVal | TupleVal | null;

export const MOV: Record<RegClass, string> = { pred: "mov.pred", b16: "mov.b16", b32: "mov.b32", b64: "mov.b64", f32: "mov.f32", f64: "mov.f64" };
export const SPACES_32BIT = new Set(["shared", "local"]);

export const scalarTypeOf = (e: Expr): ScalarName => e.type as ScalarName;

export const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** register class of an array's base address: a 32-bit window address for shared/local, else 64-bit */
export const baseClass = (t: ArrayType): "b32" | "b64" => (SPACES_32BIT.has(t.space) ? "b32" : "b64");

/** keys of the array homes inside a local's registers (assigning the local invalidates what was cached about them) */
export function homeKeys(v: PtxValue): string[] {
  if (v === null || v.k === "reg" || v.k === "imm") return [];
  if (v.k === "tuple") return v.items.flatMap(homeKeys);
  return v.origin === "home" ? [v.key] : [];
}

/** C-order strides from a shape (last is 1) */
export function contiguousStrides(shape: readonly Scalar[], mul: (a: Scalar, b: Scalar) => Scalar): Scalar[] {
  const out: Scalar[] = new Array(shape.length);
  let s: Scalar = imm(1);
  for (let d = shape.length - 1; d >= 0; d--) {
    out[d] = s;
    if (d > 0) {
      const dim = shape[d]!;
      s = s.k === "imm" && dim.k === "imm" ? imm(Number(s.text) * Number(dim.text)) : mul(s, dim);
    }
  }
  return out;
}

export function halfHex(t: "float16" | "bfloat16", x: number): string {
  return "0x" + HALF_FLOAT[t].toBits(x).toString(16).toUpperCase().padStart(4, "0");
}
