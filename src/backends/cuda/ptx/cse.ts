// Common subexpressions within a basic block, after LICM and before LSR.
//
// The copies of an unrolled loop's body (unroll.ts) each compute their own
// loop-invariant address parts; LICM moves them all to the preheader, one
// after another. Merging identical pure instructions there gives the copies one
// base register, so LSR makes one pointer per array access instead of one per
// copy. An instruction merges with an earlier one of the same opcode and
// sources in the same basic block (nothing jumps in between: no label) when
// its result register is written only there and no source was written in
// between; its readers then read the earlier result (`rename` says which).

import { defsOf, isPure, regKey, type Inst, type Line, type Operand, type Reg } from "./insts.js";

export function mergeCommonSubexpressions(lines: readonly Line[]): { lines: Line[]; rename: (r: Reg) => Reg } {
  const defCount = new Map<string, number>();
  for (const l of lines) for (const d of defsOf(l)) defCount.set(regKey(d), (defCount.get(regKey(d)) ?? 0) + 1);

  const replaced = new Map<string, Reg>();
  const available = new Map<string, Reg>();
  /** keys of `available` that read each register */
  const readers = new Map<string, string[]>();
  const kept: Line[] = [];
  for (const line of lines) {
    const l = line.k === "inst" ? renameSources(line, replaced) : line;
    if (l.k === "label") { available.clear(); readers.clear(); }
    const key = l.k === "inst" ? mergeKey(l, defCount) : undefined;
    const earlier = key === undefined ? undefined : available.get(key);
    if (earlier && l.k === "inst") { replaced.set(regKey(l.args[0] as Reg), earlier); continue; }
    for (const d of defsOf(l)) for (const k of readers.get(regKey(d)) ?? []) available.delete(k);
    if (key !== undefined && l.k === "inst") {
      available.set(key, l.args[0] as Reg);
      for (const src of l.args.slice(1)) if (src.k === "reg") readers.set(regKey(src), [...(readers.get(regKey(src)) ?? []), key]);
    }
    kept.push(l);
  }
  const rename = (r: Reg) => replaced.get(regKey(r)) ?? r;
  return { lines: kept.map((l) => (l.k === "inst" ? renameSources(l, replaced) : l.k === "raw" ? { ...l, uses: l.uses.map(rename) } : l)), rename };
}

/** opcode and sources of a pure instruction writing one register that nothing else writes */
function mergeKey(l: Inst, defCount: ReadonlyMap<string, number>): string | undefined {
  const [dst, ...srcs] = l.args;
  if (!isPure(l) || l.ndefs !== 1 || dst?.k !== "reg" || defCount.get(regKey(dst)) !== 1) return undefined;
  if (srcs.some((s) => s.k !== "reg" && s.k !== "imm" && s.k !== "sym" && s.k !== "mem")) return undefined;
  return `${l.op} ${dst.cls} ${srcs.map(operandKey).join(" ")}`;
}

const operandKey = (o: Operand): string =>
  o.k === "reg" ? regKey(o) : o.k === "imm" ? `#${o.text}` : o.k === "sym" ? `@${o.name}` : o.k === "mem" ? `[${o.base.k === "reg" ? regKey(o.base) : o.base.name}+${o.offset}]` : "?";

function renameSources(l: Inst, replaced: ReadonlyMap<string, Reg>): Inst {
  if (replaced.size === 0) return l;
  const rename = (o: Operand, i: number): Operand => {
    if (i < l.ndefs && o.k !== "mem") return o;
    if (o.k === "reg") return replaced.get(regKey(o)) ?? o;
    if (o.k === "mem" && o.base.k === "reg") { const b = replaced.get(regKey(o.base)); return b ? { ...o, base: b } : o; }
    if (o.k === "vec") return { ...o, items: o.items.map((r) => replaced.get(regKey(r)) ?? r) };
    return o;
  };
  const guard = l.guard && { ...l.guard, reg: replaced.get(regKey(l.guard.reg)) ?? l.guard.reg };
  return { ...l, args: l.args.map(rename), ...(guard ? { guard } : {}) };
}
