// PTX instructions as data, so passes can rewrite them before printing.
//
// An instruction is an opcode string plus operands; the first `ndefs`
// operands are written, the rest read. `effects` marks anything a pass must
// not move (memory, control flow, synchronisation, warp collectives).

export type RegClass = "pred" | "b16" | "b32" | "b64" | "f32" | "f64";

export interface Reg { readonly k: "reg"; readonly cls: RegClass; readonly id: number }
export interface Imm { readonly k: "imm"; readonly text: string }
export interface Sym { readonly k: "sym"; readonly name: string }
/** `[base+offset]` */
export interface Mem { readonly k: "mem"; readonly base: Reg | Sym; readonly offset: number }
/** `{a, b}` (mov.b64 pack/unpack) */
export interface Vec { readonly k: "vec"; readonly items: readonly Reg[] }
/** `d|p` (shfl.up / match.all predicate output) */
export interface PredPair { readonly k: "pair"; readonly d: Reg; readonly p: Reg }

export type Operand = Reg | Imm | Sym | Mem | Vec | PredPair;
export type Scalar = Reg | Imm;

export interface Inst {
  readonly k: "inst";
  readonly op: string;
  readonly args: readonly Operand[];
  readonly ndefs: number;
  readonly guard?: { readonly reg: Reg; readonly neg: boolean };
}
export interface LabelLine { readonly k: "label"; readonly name: string }
/**
 * verbatim text (call sequences in their own `{ }` scope, `.loc`); touches no outer registers except
 * `uses`, which the text names as `{0}`, `{1}`, … (so a pass that renames a register renames it there too),
 * and `defs`, which it writes, named `{=0}`, `{=1}`, …
 */
export interface RawLine { readonly k: "raw"; readonly text: string; readonly uses: readonly Reg[]; readonly defs?: readonly Reg[] }
/** brackets a loop: instructions hoisted out of it go right before `begin`; `latch` follows the counter's update */
export interface LoopMark { readonly k: "loop"; readonly id: number; readonly edge: "begin" | "latch" | "end" }

export type Line = Inst | LabelLine | RawLine | LoopMark;

export const imm = (text: string | number | bigint): Imm => ({ k: "imm", text: String(text) });
export const sym = (name: string): Sym => ({ k: "sym", name });
export const mem = (base: Reg | Sym, offset = 0): Mem => ({ k: "mem", base, offset });

const PREFIX: Record<RegClass, string> = { pred: "%p", b16: "%h", b32: "%r", b64: "%rd", f32: "%f", f64: "%fd" };

export const regName = (r: Reg): string => `${PREFIX[r.cls]}${r.id}`;

function operandText(o: Operand): string {
  switch (o.k) {
    case "reg": return regName(o);
    case "imm": return o.text;
    case "sym": return o.name;
    case "mem": {
      const base = o.base.k === "reg" ? regName(o.base) : o.base.name;
      // ptxas parses `[%rd1+-4]` (as nvcc writes it) but not `[%rd1-4]`
      return o.offset === 0 ? `[${base}]` : `[${base}+${o.offset}]`;
    }
    case "vec": return `{${o.items.map(regName).join(", ")}}`;
    case "pair": return `${regName(o.d)}|${regName(o.p)}`;
  }
}

/** appends the registers operand `o` names to `out` */
function pushOperandRegs(o: Operand, out: Reg[]): void {
  switch (o.k) {
    case "reg": out.push(o); break;
    case "mem": if (o.base.k === "reg") out.push(o.base); break;
    case "vec": out.push(...o.items); break;
    case "pair": out.push(o.d, o.p); break;
  }
}

export function defsOf(l: Line): Reg[] {
  const regs: Reg[] = [];
  if (l.k === "inst") for (let i = 0; i < l.ndefs; i++) if (l.args[i]!.k !== "mem") pushOperandRegs(l.args[i]!, regs);
  if (l.k === "raw" && l.defs) regs.push(...l.defs);
  return regs;
}

export function usesOf(l: Line): Reg[] {
  if (l.k === "raw") return [...l.uses];
  const regs: Reg[] = [];
  if (l.k !== "inst") return regs;
  // every source, and the base register of a memory destination (st/atom)
  for (let i = 0; i < l.args.length; i++) if (i >= l.ndefs || l.args[i]!.k === "mem") pushOperandRegs(l.args[i]!, regs);
  if (l.guard) regs.push(l.guard.reg);
  return regs;
}

export const regKey = (r: Reg): string => regName(r);

// Opcode roots (text before the first '.') that read or write memory, branch,
// synchronise or depend on which lanes are converged.
const EFFECT_ROOTS = new Set([
  "ld", "st", "atom", "red", "bar", "barrier", "membar", "fence", "call", "bra", "trap", "ret", "exit",
  "vote", "shfl", "match", "activemask", "nanosleep", "redux",
]);

/** true if the instruction may be moved or merged with an identical one */
export function isPure(l: Inst): boolean {
  if (l.guard) return false;
  if (l.op.startsWith("ld.param.")) return true;
  return !EFFECT_ROOTS.has(l.op.split(".")[0]!);
}

export function printLine(l: Line): string {
  switch (l.k) {
    case "label": return `${l.name}:`;
    case "raw": return l.text.replace(/\{(=?)(\d+)\}/g, (_, def: string, i: string) => regName((def ? l.defs! : l.uses)[Number(i)]!));
    case "loop": return `\t// loop ${l.id} ${l.edge}`;
    case "inst": {
      const g = l.guard ? `@${l.guard.neg ? "!" : ""}${regName(l.guard.reg)} ` : "";
      const args = l.args.map(operandText).join(", ");
      return `\t${g}${l.op}${args ? " " + args : ""};`;
    }
  }
}

/** `.reg` declarations covering every register id used */
export function regDecls(counts: Readonly<Record<RegClass, number>>): string[] {
  const type: Record<RegClass, string> = { pred: ".pred", b16: ".b16", b32: ".b32", b64: ".b64", f32: ".f32", f64: ".f64" };
  return (Object.keys(type) as RegClass[])
    .filter((c) => counts[c] > 0)
    .map((c) => `\t.reg ${type[c]} \t${PREFIX[c]}<${counts[c] + 1}>;`);
}
