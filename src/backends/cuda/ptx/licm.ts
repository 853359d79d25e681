// Loop-invariant code motion over the flat instruction list.
//
// ptxas neither hoists address arithmetic, parameter loads nor divisions out
// of loops (measured, docs/ptx-target.md), so we do. The emitter brackets every
// loop with LoopMarks placed after the guard, so the code right before
// `begin` is the preheader: it runs only when the body will. A pure,
// unguarded instruction whose register is written exactly once in the whole
// kernel and whose operands are not written inside the loop moves there.
// Innermost loops go first, so an instruction can climb several levels.

import { defsOf, isPure, regKey, usesOf, type Line } from "./insts.js";

export function hoistLoopInvariants(lines: readonly Line[]): Line[] {
  const defCount = new Map<string, number>();
  for (const l of lines) for (const d of defsOf(l)) defCount.set(regKey(d), (defCount.get(regKey(d)) ?? 0) + 1);

  let out = [...lines];
  for (const id of loopsInnermostFirst(out)) {
    const begin = out.findIndex((l) => l.k === "loop" && l.id === id && l.edge === "begin");
    const end = out.findIndex((l) => l.k === "loop" && l.id === id && l.edge === "end");
    const body = out.slice(begin + 1, end);
    const writtenInside = new Set(body.flatMap(defsOf).map(regKey));
    const hoisted: Line[] = [];
    const kept: Line[] = [];
    for (const l of body) {
      const movable = l.k === "inst" && isPure(l) &&
        defsOf(l).every((d) => defCount.get(regKey(d)) === 1) &&
        usesOf(l).every((u) => !writtenInside.has(regKey(u)));
      if (movable) {
        hoisted.push(l);
        for (const d of defsOf(l)) writtenInside.delete(regKey(d));
      } else kept.push(l);
    }
    out = [...out.slice(0, begin), ...hoisted, out[begin]!, ...kept, ...out.slice(end)];
  }
  return out;
}

/** loop ids in the order their `end` marks appear: inner loops close first */
function loopsInnermostFirst(lines: readonly Line[]): number[] {
  return lines.flatMap((l) => (l.k === "loop" && l.edge === "end" ? [l.id] : []));
}
