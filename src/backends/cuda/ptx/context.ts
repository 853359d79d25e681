// The state every part of the kernel emitter shares, and its low-level helpers: registers, the line
// being written, labels, constants, what the target supports, errors. Each concern is a module of
// functions taking this context (scalar.ts, memory.ts, intrinsics.ts); emit.ts walks the statements and
// implements `value`/`scalar`, the entry points back into expression emission.

import { isBigInt, type ScalarName } from "../../../dtypes.js";
import type { Expr, FunctionIR, Loc } from "../../../compiler/ir.js";
import { CompileError, InternalCompilerError } from "../../../errors.js";
import { isHalfFloat } from "../../../half.js";
import { imm, sym, type Line, type Operand, type Reg, type RegClass, type Scalar } from "./insts.js";
import type { InductionAddress } from "./lsr.js";
import { ValueMemo } from "./memo.js";
import { PTX_SCALAR, floatImm } from "./types.js";
import { MOV, halfHex, type ArrayVal, type PtxValue } from "./values.js";
import { hasCapability, maxVersion, targetName, type Requirement } from "./version.js";

/** a counted loop's counter as one copy of the body sees it: register `reg` = `base + offset`, `base` advancing by `step` at the latch */
export interface InductionCounter { readonly loop: number; readonly reg: Reg; readonly base: Reg; readonly offset: number; readonly step: number }

export abstract class EmitContext {
  readonly counts: Record<RegClass, number> = { pred: 0, b16: 0, b32: 0, b64: 0, f32: 0, f64: 0 };
  readonly prologue: Line[] = [];
  readonly body: Line[] = [];
  /** where instructions go now: the body, or the prologue (`inPrologue`) */
  cur: Line[] = this.body;
  readonly moduleDecls: string[] = [];
  readonly entryDecls: string[] = [];
  readonly vars = new Map<string, PtxValue>();
  readonly memo = new ValueMemo();
  private readonly globalMemo = new Map<string, unknown>();
  /** counters of the enclosing counted loops whose bodies are being emitted (see `countedInductionVar`) */
  readonly inductionVars: InductionCounter[] = [];
  /** addresses lsr.ts may turn into pointers advanced at each latch */
  readonly inductionAddresses: InductionAddress[] = [];
  nLabels = 0;
  nSyms = 0;
  private nTemps = 0;
  /** the oldest PTX ISA that has every instruction emitted so far */
  featureVersion = "1.0";
  /** position of the statement being emitted, for errors */
  loc: Loc | undefined;
  usesPrint = false;
  /** the kernel has a `throw`: the module declares the error record (KERNEL_ERROR_SYMBOL) */
  usesThrow = false;

  constructor(readonly ir: FunctionIR, readonly cc: readonly [number, number]) {}

  /** the value of an expression (emitting what computes it) */
  abstract value(e: Expr): PtxValue;
  /** the value of a scalar expression */
  abstract scalar(e: Expr): Scalar;

  /** true if the target has what `need` describes; `.version` then covers it */
  supports(need: Requirement): boolean {
    if (!hasCapability(this.cc, need)) return false;
    this.featureVersion = maxVersion(this.featureVersion, need.ptx);
    return true;
  }

  require(need: Requirement, what: string, loc?: Loc): void {
    if (!this.supports(need)) throw this.unavailable(need, what, loc);
  }

  unavailable(need: Requirement, what: string, loc?: Loc): CompileError {
    return this.compileError(`${what} needs compute capability ${need.cc!.join(".")} or newer; this kernel is compiled for ${targetName(this.cc)}`, loc);
  }

  /** an error at `loc` in the kernel's source (the signature when unknown) */
  compileError(message: string, loc = this.loc): CompileError {
    return new CompileError(this.ir.name, loc?.source ?? this.ir.source, [{ message, line: loc?.line ?? 1, column: loc?.column ?? 0 }], loc?.source ? undefined : this.ir.origin);
  }

  reg(cls: RegClass): Reg {
    return { k: "reg", cls, id: ++this.counts[cls] };
  }

  ins(op: string, args: readonly Operand[], ndefs = 1, guard?: { reg: Reg; neg: boolean }): void {
    this.cur.push({ k: "inst", op, args, ndefs, guard });
  }

  /** op into a fresh register of class `cls` */
  out(cls: RegClass, op: string, ...srcs: Operand[]): Reg {
    const d = this.reg(cls);
    this.ins(op, [d, ...srcs]);
    return d;
  }

  inPrologue<T>(f: () => T): T {
    const saved = this.cur;
    this.cur = this.prologue;
    try { return f(); } finally { this.cur = saved; }
  }

  /** computed once at kernel entry, shared by every use */
  kernelInvariant<T>(key: string, f: () => T): T {
    if (!this.globalMemo.has(key)) this.globalMemo.set(key, this.inPrologue(f));
    return this.globalMemo.get(key) as T;
  }

  newLabel(): string { return `$L__${this.nLabels++}`; }

  place(label: string): void { this.cur.push({ k: "label", name: label }); }

  bra(label: string, guard?: { reg: Reg; neg: boolean }): void { this.ins("bra", [sym(label)], 0, guard); }

  toReg(s: Scalar, cls: RegClass): Reg {
    return s.k === "reg" ? s : this.out(cls, MOV[cls], s);
  }

  mov(d: Reg, s: Scalar): void { this.ins(MOV[d.cls], [d, s]); }

  mulS32(a: Scalar, b: Scalar): Scalar {
    if (a.k === "imm" && b.k === "imm") return imm(Math.imul(Number(a.text), Number(b.text)));
    if (a.k === "imm" && a.text === "1") return b;
    return this.out("b32", "mul.lo.s32", a, b);
  }

  constant(type: ScalarName, value: number | bigint | boolean): Scalar {
    if (type === "bool") return this.kernelInvariant(`true:${value}`, () => this.out("pred", "mov.pred", imm(value ? 1 : 0)));
    if (isHalfFloat(type)) return this.kernelInvariant(`${type}:${value}`, () => this.out("b16", "mov.b16", imm(halfHex(type, Number(value)))));
    if (type === "float32" || type === "float64") return imm(floatImm(PTX_SCALAR[type].arith as "f32" | "f64", Number(value)));
    return imm(typeof value === "boolean" ? Number(value) : value);
  }

  zero(type: ScalarName): Scalar { return this.constant(type, isBigInt(type) ? 0n : type === "bool" ? false : 0); }

  tempKey(): string { return `$tmp${this.nTemps++}`; }

  /** `e` as a predicate register */
  pred(e: Expr): Reg { return this.toReg(this.scalar(e), "pred"); }

  array(e: Expr): ArrayVal {
    const v = this.value(e);
    if (v === null || v.k !== "array") throw new InternalCompilerError("PTX target: expected an array");
    return v;
  }
}
