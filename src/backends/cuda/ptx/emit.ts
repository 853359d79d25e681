// Typed IR → PTX instructions (as data, see insts.ts) → PTX text.
//
// Values live in virtual registers: every expression result gets a fresh
// register (written once), every local variable one register of its own.
// Loops are emitted rotated (guard → preheader → bottom-tested body) so
// ptxas's unroller recognises them; pure expressions are memoised per scope
// (CSE, also of address computations); address terms are summed from the most
// to the least loop-invariant so LICM (licm.ts) can hoist the invariant part;
// integer division by constants becomes multiply-high (divconst.ts).
// Semantics follow the comments in src/compiler/ir.ts bit for bit.
//
// This file is the driver: module assembly (parameters, constant and shared arrays, the module text)
// and the walk over statements and expressions. What it emits is chosen in sibling modules by concern:
// context.ts (state and low-level helpers), memo.ts (the scoped value memo), scalar.ts (instruction
// selection), memory.ts (addresses, loads, stores, atomics), intrinsics.ts; the loop analyses it asks
// are in src/compiler/analysis/.

import { DTYPE_INFO, isArrayType, sameType, type ArrayType, type Type } from "../../../dtypes.js";
import { isEqualityTest, isSpeculatable } from "../../../compiler/analysis/exprs.js";
import { countedInductionVar, geometricCounter, unconditionalAccesses, type Access, type Counter } from "../../../compiler/analysis/loops.js";
import type { Expr, FunctionIR, LoopStmt, Stmt } from "../../../compiler/ir.js";
import { assignedNames, setNames } from "../../../compiler/walk.js";
import { locateSource, InternalCompilerError } from "../../../errors.js";
import { EmitContext, type InductionCounter } from "./context.js";
import { imm, mem, printLine, regDecls, sym, type Reg, type Scalar } from "./insts.js";
import { intrinsic } from "./intrinsics.js";
import { externalCall } from "./external.js";
import { address, arrayAttr, atomic, load, store } from "./memory.js";
import { binary, bitcast, compare, convert, fma, unary, words } from "./scalar.js";
import { PTX_SCALAR } from "./types.js";
import { hoistLoopInvariants } from "./licm.js";
import { mergeCommonSubexpressions } from "./cse.js";
import { reduceInductionAddresses, renameAddress } from "./lsr.js";
import { IR_LIMIT_OPS, NUMBER_LIMIT_OPS, UNROLL, mainLoopLimit, mainLoopTest, scaledUpdate, unrollPlan, type UnrollPlan } from "./unroll.js";
import { MOV, baseClass, contiguousStrides, homeKeys, range, scalarTypeOf, type ArrayVal, type TupleVal, type PtxValue } from "./values.js";
import { chooseVersion, targetName, type Requirement } from "./version.js";
import { KERNEL_ERROR_SYMBOL, KERNEL_ERROR_WORDS, type PtxModule, type PtxParam, type PtxTargetOptions } from "./module.js";

const DYNAMIC_SMEM_SIZE: Requirement = { ptx: "4.1" };
/** kernel parameter space: 4352 bytes, or 32764 from ISA 8.1 on sm_70+ (measured with ptxas, ptx.md §1) */
const SMALL_PARAMS_BYTES = 4352;
const LARGE_PARAMS: Requirement = { ptx: "8.1", cc: [7, 0] };
const MAX_PARAMS_BYTES = 32764;

export function emitPtx(ir: FunctionIR, options: PtxTargetOptions = {}): PtxModule {
  if (ir.kind !== "kernel") throw new InternalCompilerError(`emitPtx: '${ir.name}' is a device function; only kernels are emitted (device functions are inlined)`);
  return new KernelEmitter(ir, options.computeCapability ?? [7, 5]).finish(options);
}

const sanitize = (s: string) => s.replace(/[^A-Za-z0-9_]/g, "_");
/** text inside a PTX string: ptxas rejects any non-ASCII byte in the module, even inside a string */
const ptxString = (s: string) => s.replace(/[^ -~]|["\\]/g, "_");

class KernelEmitter extends EmitContext {
  private readonly params: PtxParam[] = [];
  private readonly jumps = new Map<string, { brk: string; cont?: string }>();
  private nLoops = 0;
  /** locals assigned after their declaration (array locals among them need registers of their own) */
  private readonly reassigned: ReadonlySet<string>;
  /** `.file` numbers of the files `.loc` refers to */
  private readonly lineFiles = new Map<string, number>();
  private staticShared = 0;
  private readonly entry: string;

  constructor(ir: FunctionIR, cc: readonly [number, number]) {
    super(ir, cc);
    this.reassigned = assignedNames(ir.body);
    // a PTX identifier: letters first, and not WARP_SZ, PTX's one predefined plain name
    const entry = sanitize(ir.name);
    this.entry = /^[A-Za-z]/.test(entry) && entry !== "WARP_SZ" ? entry : `k_${entry}`;
  }

  // -------------------------------------------------------------------------
  // module assembly

  finish(options: PtxTargetOptions): PtxModule {
    this.ir.params.forEach((p, i) => this.bindParam(p.name, p.type, i));
    this.checkParamSpace();
    for (const c of this.ir.constArrays) this.bindConstArray(c.name, c.type, c.shape, c.data);
    this.ir.strings.forEach((s, i) => this.moduleDecls.push(byteArrayDecl(".global .align 1", `__str${i}`, [...new TextEncoder().encode(s), 0])));
    this.stmts(this.ir.body);
    this.moduleDecls.unshift(...[...this.lineFiles].map(([file, n]) => `.file ${n} "${ptxString(file)}"`));

    const version = chooseVersion(this.cc, this.featureVersion, options.maxPtxVersion);
    if (this.usesPrint) this.moduleDecls.push(".extern .func (.param .b32 rv) vprintf(.param .b64 fmt, .param .b64 args);");
    if (this.usesThrow) this.moduleDecls.push(`.visible .global .align 4 .u32 ${KERNEL_ERROR_SYMBOL}[${KERNEL_ERROR_WORDS}];`);
    const merged = mergeCommonSubexpressions(hoistLoopInvariants([...this.prologue, ...this.body]));
    const addresses = this.inductionAddresses.map((a) => renameAddress(a, merged.rename));
    const lines = reduceInductionAddresses(merged.lines, addresses, (cls) => this.reg(cls));
    const maxnreg = this.ir.options.maxRegisters ? `.maxnreg ${this.ir.options.maxRegisters}\n` : "";
    const text = [
      "// Generated by numbats",
      `.version ${version}`,
      `.target ${targetName(this.cc)}`,
      ".address_size 64",
      "",
      ...this.moduleDecls,
      "",
      `.visible .entry ${this.entry}(`,
      this.params.map((p) => `\t.param .${p.ptxType} ${p.name}`).join(",\n"),
      `)`,
      `${maxnreg}{`,
      ...regDecls(this.counts),
      ...this.entryDecls,
      ...lines.map(printLine),
      "\tret;",
      "}",
      "",
    ].join("\n");
    return { text, entry: this.entry, params: this.params, staticSharedBytes: this.staticShared, cooperative: this.ir.features.gridSync, throws: this.usesThrow };
  }

  private checkParamSpace(): void {
    const bytes = this.params.reduce((end, p) => Math.ceil(end / p.size) * p.size + p.size, 0);
    if (bytes > MAX_PARAMS_BYTES) throw this.compileError(`the kernel's parameters take ${bytes} bytes; PTX allows at most ${MAX_PARAMS_BYTES}`);
    if (bytes > SMALL_PARAMS_BYTES) this.require(LARGE_PARAMS, `more than ${SMALL_PARAMS_BYTES} bytes of kernel parameters (${bytes})`);
  }

  private bindParam(name: string, type: Type, arg: number): void {
    this.inPrologue(() => {
      if (typeof type === "object" && type.kind === "array") {
        const pname = `${this.entry}_p${arg}`;
        this.params.push({ name: pname, ptxType: "u64", size: 8, from: { arg, part: "ptr" } });
        const raw = this.out("b64", "ld.param.u64", mem(sym(pname)));
        const base = this.out("b64", "cvta.to.global.u64", raw);
        const shape = range(type.ndim).map((d) => {
          const n = `${pname}_shape${d}`;
          this.params.push({ name: n, ptxType: "s32", size: 4, from: { arg, part: "shape", dim: d } });
          return this.out("b32", "ld.param.s32", mem(sym(n)));
        });
        const strides = type.layout === "C" ? contiguousStrides(shape, (a, b) => this.mulS32(a, b)) : range(type.ndim).map((d) => {
          const n = `${pname}_stride${d}`;
          this.params.push({ name: n, ptxType: "s32", size: 4, from: { arg, part: "stride", dim: d } });
          return this.out("b32", "ld.param.s32", mem(sym(n)));
        });
        const param: ArrayVal = { k: "array", type, key: name, base, shape, strides, readonly: !this.ir.writtenParams.has(name), origin: "entry" };
        this.vars.set(name, this.reassigned.has(name) ? this.homeWith(name, type, param) : param);
        return;
      }
      if (typeof type !== "string" || type === "void") throw new InternalCompilerError(`PTX target: kernel parameter '${name}' has unsupported type ${JSON.stringify(type)}`);
      const P = PTX_SCALAR[type];
      const pname = `${this.entry}_p${arg}`;
      this.params.push({ name: pname, ptxType: P.param, size: DTYPE_INFO[type].size as PtxParam["size"], from: { arg, part: "value" } });
      if (type === "bool") {
        const byte = this.out("b32", "ld.param.u8", mem(sym(pname)));
        this.vars.set(name, this.out("pred", "setp.ne.u32", byte, imm(0)));
      } else this.vars.set(name, this.out(P.reg, `ld.param.${P.param}`, mem(sym(pname))));
    });
  }

  private bindConstArray(name: string, type: ArrayType, shape: readonly number[], data: ArrayBufferView): void {
    const s = `${sanitize(name)}_const${this.nSyms++}`;
    this.moduleDecls.push(byteArrayDecl(".const .align 16", s, [...new Uint8Array(data.buffer, data.byteOffset, data.byteLength)]));
    const base = this.inPrologue(() => this.out("b64", "mov.u64", sym(s)));
    this.bindFixedArray(name, { ...type, space: "const" }, base, shape);
  }

  private bindFixedArray(name: string, type: ArrayType, base: Reg, shape: readonly number[]): void {
    const dims = shape.map((n) => imm(n));
    this.vars.set(name, { k: "array", type, key: name, base, shape: dims, strides: contiguousStrides(dims, () => { throw new InternalCompilerError("unreachable"); }), readonly: false, origin: "entry" });
  }

  // -------------------------------------------------------------------------
  // statements

  private stmts(ss: readonly Stmt[]): void {
    ss.forEach((s, i) => {
      const counter = s.k === "loop" ? geometricCounter(ss[i - 1], s) : null;
      const plan = s.k === "loop" && !counter ? unrollPlan(s, ss[i - 1]) : null;
      if (counter) this.unrolled(s as LoopStmt, counter);
      else if (plan) this.unrolledByFour(s as LoopStmt, plan);
      else this.stmt(s);
    });
  }

  /**
   * `.loc` of a statement: its line in the file the user wrote (an inlined device function's in its
   * own), else in the function's text under the pseudo-file `<kernel>.ts`.
   */
  private lineInfo(s: Stmt): void {
    if (!this.ir.options.lineinfo || !s.loc) return;
    const at = locateSource(s.loc.source ?? this.ir.source, s.loc.line, s.loc.column, s.loc.source ? undefined : this.ir.origin);
    const file = at?.file ?? `${this.ir.name}.ts`;
    let n = this.lineFiles.get(file);
    if (n === undefined) this.lineFiles.set(file, (n = this.lineFiles.size + 1));
    const [line, column] = at ? [at.line, at.column] : [s.loc.line, s.loc.column];
    this.cur.push({ k: "raw", text: `\t.loc ${n} ${line} ${column + 1}`, uses: [] });
  }

  private stmt(s: Stmt): void {
    this.loc = s.loc ?? this.loc;
    this.lineInfo(s);
    switch (s.k) {
      case "let": {
        const v = s.init ? this.value(s.init) : this.zeroValue(s.type);
        // an array local that is never reassigned is just another name for its value
        if (isArrayType(s.type) && !this.reassigned.has(s.name)) { this.vars.set(s.name, this.frozen(v as ArrayVal)); break; }
        this.vars.set(s.name, this.homeWith(s.name, s.type, v));
        break;
      }
      case "assign": {
        const home = this.vars.get(s.name);
        if (home === undefined) throw new InternalCompilerError(`PTX target: assignment to undeclared '${s.name}'`);
        this.assignInto(home, this.value(s.value));
        this.memo.invalidate([s.name, ...homeKeys(home)]);
        break;
      }
      case "store": store(this, s.array, s.index, s.value); break;
      case "expr": this.value(s.expr); break;
      case "if": this.ifStmt(s.cond, s.then, s.else); break;
      case "loop": this.loop(s); break;
      case "block": {
        const brk = this.newLabel();
        this.jumps.set(s.label, { brk });
        this.memo.pushScope(); this.stmts(s.body); this.memo.popScope();
        this.place(brk);
        break;
      }
      case "break": this.bra(this.jump(s.label).brk); break;
      case "continue": {
        const cont = this.jump(s.label).cont;
        if (!cont) throw new InternalCompilerError(`PTX target: 'continue ${s.label}' names a block, not a loop`);
        this.bra(cont);
        break;
      }
      case "return": this.ins("ret", [], 0); break;
      case "alloc": this.alloc(s.name, s.type, s.shape); break;
    }
  }

  private jump(label: string) {
    const j = this.jumps.get(label);
    if (!j) throw new InternalCompilerError(`PTX target: unknown label '${label}'`);
    return j;
  }

  /**
   * An if with an else whose test is an equality (or a disjunction of them: a stencil's edge test) lays
   * out the else arm first, as LLVM's branch weights do for nvcc: the equal case is the rare one, and with
   * it placed last ptxas issues the common arm's loads without waiting on the rare arm's predicated store.
   */
  private ifStmt(cond: Expr, then: readonly Stmt[], els: readonly Stmt[]): void {
    const p = this.pred(cond);
    this.addressesBeforeIf(then, els);
    const end = this.newLabel();
    if (!els.length) {
      this.bra(end, { reg: p, neg: true });
      this.arm(then);
    } else {
      const rareThen = isEqualityTest(cond);
      const second = this.newLabel();
      this.bra(second, { reg: p, neg: !rareThen });
      this.arm(rareThen ? els : then);
      this.bra(end);
      this.place(second);
      this.arm(rareThen ? then : els);
    }
    this.place(end);
  }

  private arm(body: readonly Stmt[]): void {
    this.memo.pushScope(); this.stmts(body); this.memo.popScope();
  }

  /**
   * Computes before an if the addresses its arms access on every path through them: those both arms
   * access (a stencil's `out[y][x]`, stored by each arm of its edge test; a read-only array's element is
   * loaded there too), which the arms then share as in nvcc's code; and, for an if without else, those its
   * body accesses through indices that are cheap and cannot fault (`isSpeculatable`), so that ptxas reads
   * the parameters in them once rather than in each predicated copy of the body (a guarded loop unrolled
   * by ptxas, as in transpose). Not those whose variables an arm assigns, nor under debug (the bounds
   * checks stay in the arms).
   */
  private addressesBeforeIf(then: readonly Stmt[], els: readonly Stmt[]): void {
    if (this.ir.options.debug) return;
    const assigned = setNames([...then, ...els]);
    const unchanged = (acc: Access) => ![...this.memo.deps([acc.array, ...acc.index])].some((v) => assigned.has(v));
    if (!els.length) {
      for (const acc of unconditionalAccesses(then)) if (unchanged(acc) && acc.index.every(isSpeculatable)) address(this, this.array(acc.array), acc.index);
      return;
    }
    const keyOf = (acc: Access) => {
      const keys = [acc.array, ...acc.index].map((e) => this.memo.key(e));
      return keys.includes(null) ? null : keys.join(",");
    };
    const inElse = new Set(unconditionalAccesses(els).map(keyOf));
    for (const acc of unconditionalAccesses(then)) {
      const key = keyOf(acc);
      if (key === null || !inElse.has(key) || !unchanged(acc)) continue;
      inElse.delete(key);
      if (acc.k === "load") load(this, acc.array, acc.index, acc.type);
      else address(this, this.array(acc.array), acc.index);
    }
  }

  private loop(s: LoopStmt, nounroll = false): void {
    const guard = s.testFirst && s.cond ? () => this.pred(s.cond!) : null;
    this.rotatedLoop(s, guard, () => (s.cond ? this.pred(s.cond) : null), s.update, { copies: 1, counter: countedInductionVar(s), nounroll });
  }

  /**
   * A counted loop (unroll.ts) as a main loop of UNROLL copies of the body, run while that many iterations
   * remain, copy u seeing the counter as k + u·s and the latch adding UNROLL·s, then the loop as written
   * (not unrolled again by ptxas) for the rest. The main loop's counter cannot wrap, so its addresses may
   * become pointers (lsr.ts) whatever the bound.
   */
  private unrolledByFour(s: LoopStmt, plan: UnrollPlan): void {
    this.loc = s.loc ?? this.loc;
    this.lineInfo(s);
    const k = this.vars.get(plan.counter);
    if (k?.k !== "reg") throw new InternalCompilerError(`PTX target: loop counter '${plan.counter}' has no register`);
    const lim = plan.bound.k === "const"
      ? imm(mainLoopLimit(plan, Number(plan.bound.value), NUMBER_LIMIT_OPS))
      : this.scalar(mainLoopLimit(plan, plan.bound, IR_LIMIT_OPS));
    const test = () => this.out("pred", `setp.${mainLoopTest(plan)}.s32`, k, lim);
    const update = [scaledUpdate(s, UNROLL)];
    this.rotatedLoop(s, test, test, update, { copies: UNROLL, counter: { name: plan.counter, step: UNROLL * plan.step }, nounroll: false });
    this.loop(s, true);
  }

  /**
   * rotated: [guard] → preheader (LoopMark begin) → `copies` × body → continue: update, latch mark, bottom
   * test. `counter`: the loop's counted induction variable (advancing by `step` at the latch), if any: its
   * addresses may become pointers (lsr.ts); with several copies, copy u sees it as k + u·step/copies.
   */
  private rotatedLoop(
    s: LoopStmt, guard: (() => Reg) | null, test: () => Reg | null, update: readonly Stmt[],
    opts: { copies: number; counter: { name: string; step: number } | null; nounroll: boolean },
  ): void {
    const brk = this.newLabel(), cont = this.newLabel(), top = this.newLabel();
    if (guard) this.bra(brk, { reg: guard(), neg: true });
    const assigned = setNames([...s.body, ...s.update]);
    this.memo.invalidate(assigned);
    this.memo.loopVars.push(assigned);
    const id = this.nLoops++;
    this.cur.push({ k: "loop", id, edge: "begin" });
    this.place(top);
    // ptxas unrolls a loop unless told not to in its header block
    if (opts.nounroll) this.cur.push({ k: "raw", text: '	.pragma "nounroll";', uses: [] });
    this.jumps.set(s.label, { brk, cont });
    const { counter, copies } = opts;
    const home = counter && this.vars.get(counter.name);
    const iv = home?.k === "reg" && home.cls === "b32" ? { loop: id, reg: home, base: home, offset: 0, step: counter!.step } : null;
    if (copies > 1 && !iv) throw new InternalCompilerError(`PTX target: unrolled loop '${s.label}' has no int32 counter register`);
    for (let copy = 0; copy < copies; copy++) {
      const ivCopy = iv && copy > 0 ? this.offsetCounter(counter!.name, iv, (copy * iv.step) / copies) : iv;
      if (ivCopy) this.inductionVars.push(ivCopy);
      this.memo.pushScope(); this.stmts(s.body); this.memo.popScope();
      if (ivCopy) this.inductionVars.pop();
    }
    if (iv && copies > 1) { this.vars.set(counter!.name, iv.reg); this.memo.invalidate([counter!.name]); }
    this.place(cont);
    this.memo.pushScope();
    this.stmts(update);
    this.cur.push({ k: "loop", id, edge: "latch" });
    const p = test();
    if (p) this.bra(top, { reg: p, neg: false });
    else this.bra(top);
    this.memo.popScope();
    this.cur.push({ k: "loop", id, edge: "end" });
    this.place(brk);
    this.memo.loopVars.pop();
  }

  /** the counter of an unrolled copy: `k + offset` (no wrap: see unroll.ts), bound to the counter's name */
  private offsetCounter(name: string, iv: InductionCounter, offset: number): InductionCounter {
    const reg = this.out("b32", "add.s32", iv.base, imm(offset));
    this.vars.set(name, reg);
    this.memo.invalidate([name]);
    return { ...iv, reg, offset };
  }

  /**
   * A loop whose counter takes known values is emitted once per value, with
   * the counter an immediate in each copy (so shuffle deltas, shift amounts
   * and address offsets are constants) and its final value stored after.
   */
  private unrolled(s: LoopStmt, counter: Counter): void {
    this.lineInfo(s);
    const home = this.vars.get(counter.name)!;
    const brk = this.newLabel();
    for (const v of counter.values) {
      const cont = this.newLabel();
      this.jumps.set(s.label, { brk, cont });
      this.vars.set(counter.name, imm(v));
      this.memo.invalidate([counter.name]);
      this.memo.pushScope(); this.stmts(counter.body); this.memo.popScope();
      this.place(cont);
    }
    this.vars.set(counter.name, home);
    this.memo.invalidate([counter.name]);
    this.assignInto(home, imm(counter.final));
    this.place(brk);
  }

  // -------------------------------------------------------------------------
  // locals and allocations

  private alloc(name: string, type: ArrayType, shape: readonly number[]): void {
    const size = DTYPE_INFO[type.dtype].size;
    if (type.space === "shared" && shape.length === 1 && shape[0] === 0) {
      const base = this.kernelInvariant("dynsmem", () => {
        this.moduleDecls.push(".extern .shared .align 16 .b8 __dynsmem[];");
        return this.out("b32", "mov.u32", sym("__dynsmem"));
      });
      const n = this.kernelInvariant(`dynsmem/${size}`, () => {
        this.require(DYNAMIC_SMEM_SIZE, "a dynamic shared array");
        const bytes = this.out("b32", "mov.u32", sym("%dynamic_smem_size"));
        return this.out("b32", "shr.u32", bytes, imm(Math.log2(size)));
      });
      this.vars.set(name, { k: "array", type, key: name, base, shape: [n], strides: [imm(1)], readonly: false, origin: "entry" });
      return;
    }
    if (shape.some((n) => n <= 0)) throw new InternalCompilerError(`PTX target: ${type.space} array '${name}' has shape [${shape}]`);
    const bytes = shape.reduce((a, b) => a * b, 1) * size;
    const s = `${sanitize(name)}_${type.space}${this.nSyms++}`;
    if (type.space === "shared") {
      this.moduleDecls.push(`.shared .align 16 .b8 ${s}[${bytes}];`);
      this.staticShared = Math.ceil(this.staticShared / 16) * 16 + bytes;
    } else if (type.space === "local") {
      this.entryDecls.push(`\t.local .align 16 .b8 ${s}[${bytes}];`);
    } else throw new InternalCompilerError(`PTX target: cannot allocate a ${type.space} array ('${name}')`);
    const base = this.inPrologue(() => this.out("b32", "mov.u32", sym(s)));
    this.bindFixedArray(name, type, base, shape);
  }

  /** registers of a local named `key` (array homes in a tuple are named `key#i`), set to `v` */
  private homeWith(key: string, t: Type, v: PtxValue): PtxValue {
    const home = this.allocValue(t, key);
    this.assignInto(home, v);
    this.memo.invalidate([key, ...homeKeys(home)]);
    return home;
  }

  private allocValue(t: Type, key: string): PtxValue {
    if (t === "void") return null;
    if (typeof t === "string") return this.reg(PTX_SCALAR[t].reg);
    if (t.kind === "tuple") return { k: "tuple", items: t.items.map((x, i) => this.allocValue(x, `${key}#${i}`)) };
    const shape = range(t.ndim).map(() => this.reg("b32"));
    // a C-layout array's last stride is 1 whatever it holds
    const strides = range(t.ndim).map((d) => (t.layout === "C" && d === t.ndim - 1 ? imm(1) : this.reg("b32")));
    return { k: "array", type: t, key, base: this.reg(baseClass(t)), shape, strides, readonly: this.neverWritten(t), origin: "home" };
  }

  /**
   * A global array local may hold any parameter of its exact type (the front end
   * allows no other assignment), so it is read-only if all of those are.
   */
  private neverWritten(t: ArrayType): boolean {
    return t.space === "global" && !this.ir.params.some((p) => this.ir.writtenParams.has(p.name) && sameType(p.type, t));
  }

  private zeroValue(t: Type): PtxValue {
    if (t === "void") return null;
    if (typeof t === "string") return this.zero(t);
    if (t.kind === "tuple") return { k: "tuple", items: t.items.map((i) => this.zeroValue(i)) };
    // an array local declared without a value (the inliner's result of an array-returning function): null pointer, empty
    const base = this.out(baseClass(t), MOV[baseClass(t)], imm(0));
    return { k: "array", type: t, key: this.tempKey(), base, shape: range(t.ndim).map(() => imm(0)), strides: range(t.ndim).map(() => imm(0)), readonly: true, origin: "value" };
  }

  private assignInto(home: PtxValue, v: PtxValue): void {
    if (home === null) return;
    if (home.k === "reg") { this.mov(home, v as Scalar); return; }
    if (home.k === "tuple") {
      const items = (v as TupleVal).items;
      home.items.forEach((h, i) => this.assignInto(h, items[i]!));
      return;
    }
    if (home.k === "imm") throw new InternalCompilerError("PTX target: cannot assign to a constant");
    const a = v as ArrayVal;
    this.mov(home.base, a.base);
    home.shape.forEach((r, d) => this.mov(r as Reg, a.shape[d]!));
    home.strides.forEach((r, d) => { if (r.k === "reg") this.mov(r, a.strides[d]!); });
  }

  /** the array value itself, or a copy when it lives in a local's registers that later assignments overwrite */
  private frozen(a: ArrayVal): ArrayVal {
    if (a.origin !== "home") return a;
    const copy = (s: Scalar): Scalar => (s.k === "reg" ? this.out(s.cls, MOV[s.cls], s) : s);
    return { ...a, key: this.tempKey(), base: copy(a.base) as Reg, shape: a.shape.map(copy), strides: a.strides.map(copy), origin: "value" };
  }

  // -------------------------------------------------------------------------
  // expressions

  value(e: Expr): PtxValue {
    switch (e.k) {
      case "var": {
        const v = this.vars.get(e.name);
        if (v === undefined) throw new InternalCompilerError(`PTX target: unknown variable '${e.name}'`);
        return v;
      }
      case "tuple": return { k: "tuple", items: e.items.map((x) => this.value(x)) };
      case "tupleGet": return (this.value(e.tuple) as TupleVal).items[e.index]!;
      case "select": return this.select(e.cond, e.a, e.b, e.type, e.eager ?? false);
      case "intrinsic": return intrinsic(this, e);
      case "call": throw new InternalCompilerError(`PTX target: call of '${e.fn.name}' was not inlined`);
      case "external": return externalCall(this, e);
      default: return this.scalar(e);
    }
  }

  scalar(e: Expr): Scalar {
    switch (e.k) {
      case "const": return this.constant(e.type, e.value);
      case "special": {
        const name = e.reg === "laneid" ? "%laneid" : `%${e.reg}`;
        return this.kernelInvariant(`special:${e.reg}`, () => this.out("b32", "mov.u32", sym(name)));
      }
      case "unary": return this.memo.memoized(this.memo.key(e), () => this.memo.deps([e]), () => unary(this, e.op, e.type, e.x));
      case "binary": return this.memo.memoized(this.memo.key(e), () => this.memo.deps([e]), () => binary(this, e.op, e.type, e.a, e.b));
      case "fma": return this.memo.memoized(this.memo.key(e), () => this.memo.deps([e]), () => fma(this, e.type, e.a, e.b, e.c));
      case "compare": return this.memo.memoized(this.memo.key(e), () => this.memo.deps([e]), () => compare(this, e.op, e.a, e.b));
      case "cast": return this.memo.memoized(this.memo.key(e), () => this.memo.deps([e]), () => convert(this, scalarTypeOf(e.x), e.type, this.scalar(e.x)));
      case "bitcast": return this.memo.memoized(this.memo.key(e), () => this.memo.deps([e]), () => bitcast(this, scalarTypeOf(e.x), e.type, this.scalar(e.x)));
      case "words": return this.memo.memoized(this.memo.key(e), () => this.memo.deps([e]), () => words(this, e.op, e.args));
      case "arrayAttr": return arrayAttr(this, this.array(e.array), e.attr, e.dim);
      case "logical": return this.logical(e.op, e.a, e.b);
      case "load": return load(this, e.array, e.index, e.type);
      case "atomic": return atomic(this, e);
      default: {
        const v = this.value(e);
        if (v === null || v.k === "array" || v.k === "tuple") throw new InternalCompilerError(`PTX target: expected a scalar, got ${e.k}`);
        return v;
      }
    }
  }

  private logical(op: "and" | "or", ae: Expr, be: Expr): Reg {
    // a right side that cannot fault is cheaper computed than branched around
    if (isSpeculatable(be)) return this.out("pred", `${op}.pred`, this.pred(ae), this.pred(be));
    const d = this.reg("pred");
    const end = this.newLabel();
    this.mov(d, this.scalar(ae));
    this.bra(end, { reg: d, neg: op === "and" });
    this.memo.pushScope(); this.mov(d, this.scalar(be)); this.memo.popScope();
    this.place(end);
    return d;
  }

  /** `c ? a : b`: a `selp` when both sides may be evaluated (`eager`: they must be), else a branch */
  private select(ce: Expr, ae: Expr, be: Expr, t: Type, eager: boolean): PtxValue {
    const c = this.pred(ce);
    if (eager && t === "bool") {
      const a = this.pred(ae), b = this.pred(be);
      return this.out("pred", "or.pred", this.out("pred", "and.pred", c, a), this.out("pred", "and.pred", this.out("pred", "not.pred", c), b));
    }
    const speculate = eager || (isSpeculatable(ae) && isSpeculatable(be));
    if (typeof t === "string" && t !== "bool" && t !== "void" && speculate) {
      const P = PTX_SCALAR[t];
      return this.out(P.reg, `selp.${P.reg === "b16" ? "b16" : P.arith}`, this.scalar(ae), this.scalar(be), c);
    }
    if (isArrayType(t) && speculate) return this.selectArray(c, this.array(ae), this.array(be));
    const d = this.allocValue(t, this.tempKey());
    const other = this.newLabel(), end = this.newLabel();
    this.bra(other, { reg: c, neg: true });
    this.memo.pushScope(); this.assignInto(d, this.value(ae)); this.memo.popScope();
    this.bra(end);
    this.place(other);
    this.memo.pushScope(); this.assignInto(d, this.value(be)); this.memo.popScope();
    this.place(end);
    return d;
  }

  /** `c ? a : b` for two arrays of one type: base, shape and strides picked with selp */
  private selectArray(c: Reg, a: ArrayVal, b: ArrayVal): ArrayVal {
    const pick = (x: Scalar, y: Scalar, cls: "b32" | "b64"): Scalar =>
      x.k === "imm" && y.k === "imm" && x.text === y.text ? x : this.out(cls, `selp.${cls}`, x, y, c);
    return {
      ...a, key: this.tempKey(), origin: "value", readonly: a.readonly && b.readonly,
      base: pick(a.base, b.base, baseClass(a.type)) as Reg,
      shape: a.shape.map((s, d) => pick(s, b.shape[d]!, "b32")),
      strides: a.strides.map((s, d) => pick(s, b.strides[d]!, "b32")),
    };
  }
}

function byteArrayDecl(head: string, name: string, bytes: readonly number[]): string {
  return `${head} .b8 ${name}[${Math.max(1, bytes.length)}] = {${(bytes.length ? bytes : [0]).join(", ")}};`;
}
