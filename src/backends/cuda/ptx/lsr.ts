// Loop strength reduction of induction-variable addresses, after LICM.
//
// ptxas keeps `base + sext(k)·stride·size` as a multiply per iteration (and
// per unrolled copy) when the stride is a register, as in `B[k][x]`; nvcc's
// LLVM carries a pointer instead. The emitter records every address
// `inv + sext(k + offset)·stride·size` whose index is the induction variable of
// a counted loop (k += step, tested against a bound before each iteration, so k
// never wraps: see `countedInductionVar` in emit.ts; offset is nonzero in the
// copies of a loop unrolled by unroll.ts, where k + offset cannot wrap either);
// here, when `inv` and the stride are loop-invariant registers, that address
// becomes a 64-bit pointer set in the preheader and advanced by
// step·stride·size at the latch (right after `k += step`), plus the copy's
// offset·stride·size, so it equals the original sum at every point of the body.

import { defsOf, imm, isPure, regKey, usesOf, type Inst, type Line, type LoopMark, type Reg, type RegClass, type Scalar } from "./insts.js";

/** `sum = inv + sext(iv + offset)·stride·size`, inside loop `loop` whose counter `iv` advances by `step` at its latch */
export interface InductionAddress {
  readonly loop: number;
  readonly iv: Reg;
  readonly offset: number;
  readonly step: number;
  readonly inv: Reg;
  readonly stride: Scalar;
  readonly size: number;
  readonly sum: Reg;
}

/** `a` with its registers renamed (after merging common subexpressions, cse.ts) */
export function renameAddress(a: InductionAddress, rename: (r: Reg) => Reg): InductionAddress {
  return { ...a, iv: rename(a.iv), inv: rename(a.inv), sum: rename(a.sum), stride: a.stride.k === "reg" ? rename(a.stride) : a.stride };
}

const inst = (op: string, ...args: (Reg | Scalar)[]): Inst => ({ k: "inst", op, args, ndefs: 1 });

export function reduceInductionAddresses(lines: readonly Line[], addresses: readonly InductionAddress[], newReg: (cls: RegClass) => Reg): Line[] {
  if (addresses.length === 0) return [...lines];
  let out = [...lines];
  const pointers = new Map<string, Reg>();
  for (const a of addresses) {
    const begin = markIndex(out, a.loop, "begin"), end = markIndex(out, a.loop, "end");
    const writtenInside = new Set(out.slice(begin + 1, end).flatMap(defsOf).map(regKey));
    if (writtenInside.has(regKey(a.inv)) || (a.stride.k === "reg" && writtenInside.has(regKey(a.stride)))) continue;
    const key = `${a.loop} ${regKey(a.inv)} ${a.stride.k === "reg" ? regKey(a.stride) : a.stride.text} ${a.size}`;
    let pointer = pointers.get(key);
    if (!pointer) {
      pointer = newReg("b64");
      pointers.set(key, pointer);
      const { init, advance } = pointerCode(a, pointer, newReg);
      const latch = markIndex(out, a.loop, "latch");
      out = [...out.slice(0, begin), ...init, ...out.slice(begin, latch + 1), advance, ...out.slice(latch + 1)];
    }
    const { preheader, sum } = offsetCode(a, pointer, newReg);
    const at = markIndex(out, a.loop, "begin");
    out = [...out.slice(0, at), ...preheader, ...out.slice(at)];
    out = out.map((l) => (l.k === "inst" && defsOf(l).some((d) => regKey(d) === regKey(a.sum)) ? sum : l));
  }
  return removeDeadCode(out);
}

/** preheader code setting `pointer = inv + sext(iv)·stride·size`, and the latch's `pointer += step·stride·size` */
function pointerCode(a: InductionAddress, pointer: Reg, newReg: (cls: RegClass) => Reg): { init: Inst[]; advance: Inst } {
  const offset = newReg("b64");
  if (a.stride.k === "imm") {
    const bytes = Number(a.stride.text) * a.size;
    return {
      init: [inst("mul.wide.s32", offset, a.iv, imm(bytes)), inst("add.s64", pointer, a.inv, offset)],
      advance: inst("add.s64", pointer, pointer, imm(a.step * bytes)),
    };
  }
  const elements = newReg("b64"), delta = newReg("b64");
  return {
    init: [
      inst("mul.wide.s32", elements, a.iv, a.stride),
      inst("shl.b64", offset, elements, imm(Math.log2(a.size))),
      inst("add.s64", pointer, a.inv, offset),
      inst("mul.wide.s32", delta, a.stride, imm(a.step * a.size)),
    ],
    advance: inst("add.s64", pointer, pointer, delta),
  };
}

/** `sum = pointer + offset·stride·size`, with what the preheader computes for it */
function offsetCode(a: InductionAddress, pointer: Reg, newReg: (cls: RegClass) => Reg): { preheader: Inst[]; sum: Inst } {
  if (a.offset === 0) return { preheader: [], sum: inst("mov.b64", a.sum, pointer) };
  if (a.stride.k === "imm") return { preheader: [], sum: inst("add.s64", a.sum, pointer, imm(a.offset * Number(a.stride.text) * a.size)) };
  const bytes = newReg("b64");
  return { preheader: [inst("mul.wide.s32", bytes, a.stride, imm(a.offset * a.size))], sum: inst("add.s64", a.sum, pointer, bytes) };
}

function markIndex(lines: readonly Line[], id: number, edge: LoopMark["edge"]): number {
  return lines.findIndex((l) => l.k === "loop" && l.id === id && l.edge === edge);
}

/** drops pure instructions whose results nothing reads (the multiplies the pointers replaced) */
function removeDeadCode(lines: readonly Line[]): Line[] {
  let out = [...lines];
  for (;;) {
    const used = new Set(out.flatMap(usesOf).map(regKey));
    const kept = out.filter((l) => !(l.k === "inst" && isPure(l) && l.ndefs > 0 && defsOf(l).every((d) => !used.has(regKey(d)))));
    if (kept.length === out.length) return out;
    out = kept;
  }
}
