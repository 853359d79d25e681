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

import { DTYPE_INFO, float16Bits, isArrayType, isFloat, isBigInt, sameType, type ArrayType, type ScalarName, type Type } from "../../dtypes.js";
import {
  exprChildren, stmtExprs, walkStmts, type AtomicExpr, type BinaryOp, type CompareOp, type Expr, type FunctionIR, type IntrinsicExpr,
  type IntrinsicName, type LoadExpr, type Loc, type LoopStmt, type Stmt, type StoreStmt, type UnaryOp,
} from "../../compiler/ir.js";
import { CompileError, locateSource } from "../../errors.js";
import {
  imm, mem, printLine, regDecls, regName, sym,
  type Line, type Mem, type Operand, type Reg, type RegClass, type Scalar,
} from "./insts.js";
import { PTX_SCALAR, floatImm, isNarrowInt } from "./types.js";
import { isPow2, signedMagic, unsignedMagic } from "./divconst.js";
import { hoistLoopInvariants } from "./licm.js";
import { mergeCommonSubexpressions } from "./cse.js";
import { reduceInductionAddresses, renameAddress, type InductionAddress } from "./lsr.js";
import { IR_LIMIT_OPS, NUMBER_LIMIT_OPS, UNROLL, mainLoopLimit, mainLoopTest, scaledUpdate, unrollPlan, type UnrollPlan } from "./unroll.js";
import { bfloat16Bits, isHalfFloat } from "../../half.js";
import { chooseVersion, hasCapability, maxVersion, targetName, type Requirement } from "./version.js";
import { KERNEL_ERROR_SYMBOL, KERNEL_ERROR_WORDS, type PtxModule, type PtxParam, type PtxTargetOptions } from "./module.js";

/**
 * An array value: base address plus shape and strides (elements). Where its
 * registers are written decides what may be cached about it:
 * - entry: once, in the prologue (parameters, allocations) — derived values may go there too;
 * - value: once, in the body (a select of arrays, a copy);
 * - home: an array local that is reassigned — every assignment writes its registers.
 */
interface ArrayVal {
  readonly k: "array";
  readonly type: ArrayType;
  /** memo key part: unique per array value (the variable's name for parameters and locals) */
  readonly key: string;
  /** address of element 0 in its space (32-bit for shared/local, else 64-bit) */
  readonly base: Reg;
  readonly shape: readonly Scalar[];
  readonly strides: readonly Scalar[];
  readonly readonly: boolean;
  readonly origin: "entry" | "value" | "home";
}
/** one non-constant `index_d · stride_d` of an element address */
interface AddressTerm {
  readonly idx: Scalar; readonly big: boolean; readonly signed: boolean; readonly stride: Scalar; readonly rank: number; readonly dim: number;
  /** subtracted (32-bit addresses only) */
  readonly sub: boolean;
}
interface TupleVal { readonly k: "tuple"; readonly items: readonly Value[] }
type Value = Scalar | ArrayVal | TupleVal | null;

/** memoised values of one structured scope, and which of their keys read each variable */
interface MemoScope { readonly values: Map<string, unknown>; readonly readers: Map<string, Set<string>> }
const memoScope = (): MemoScope => ({ values: new Map(), readers: new Map() });

const MOV: Record<RegClass, string> = { pred: "mov.pred", b16: "mov.b16", b32: "mov.b32", b64: "mov.b64", f32: "mov.f32", f64: "mov.f64" };
const CANONICAL_NAN: Record<"f32" | "f64", string> = { f32: "0f7FFFFFFF", f64: "0dFFF8000000000000" };
const SPACES_32BIT = new Set(["shared", "local"]);

const FLOAT_BINARY: Partial<Record<BinaryOp, string>> = { add: "add.rn", sub: "sub.rn", mul: "mul.rn", div: "div.rn" };
const INT_BINARY: Partial<Record<BinaryOp, string>> = { add: "add", sub: "sub", mul: "mul.lo", min: "min", max: "max" };
const BIT_BINARY: Partial<Record<BinaryOp, string>> = { and: "and", or: "or", xor: "xor" };
const ROUNDING: Partial<Record<UnaryOp, string>> = { floor: "rmi", ceil: "rpi", trunc: "rzi", rint: "rni" };
const TESTP: Partial<Record<UnaryOp, string>> = { isnan: "notanumber", isinf: "infinite", isfinite: "finite" };
const FLOAT_CMP: Record<CompareOp, string> = { lt: "lt", le: "le", gt: "gt", ge: "ge", eq: "eq", ne: "neu" };
const SHFL_MODE = { shflSync: ["idx", 0x1f], shflUpSync: ["up", 0], shflDownSync: ["down", 0x1f], shflXorSync: ["bfly", 0x1f] } as const;
const VOTE_MODE = { allSync: "all", anySync: "any", eqSync: "uni" } as const;
const FENCE = { threadfence: "membar.gl", threadfenceBlock: "membar.cta", threadfenceSystem: "membar.sys" } as const;
const FAST_UNARY = {
  fastExp2: "ex2.approx.f32", fastLog2: "lg2.approx.f32", fastSin: "sin.approx.f32",
  fastCos: "cos.approx.f32", fastRcp: "rcp.approx.f32", fastTanh: "tanh.approx.f32",
} as const;

// What instructions need beyond the oldest targets (PTX ISA release notes; ptxas 13
// checks each against `.version` and `.target`, also when assembling for a newer GPU).
const WARP_SYNC: Requirement = { ptx: "6.0" };
const SM70_SYNC: Requirement = { ptx: "6.0", cc: [7, 0] };
const INTRINSIC_NEEDS: Partial<Record<IntrinsicName, Requirement>> = {
  syncwarp: WARP_SYNC, shflSync: WARP_SYNC, shflUpSync: WARP_SYNC, shflDownSync: WARP_SYNC, shflXorSync: WARP_SYNC,
  allSync: WARP_SYNC, anySync: WARP_SYNC, eqSync: WARP_SYNC, ballotSync: WARP_SYNC,
  matchAnySync: SM70_SYNC, matchAllSync: SM70_SYNC,
  // barrier.sync (unaligned), atom.release.gpu, ld.acquire.gpu
  gridSync: SM70_SYNC,
  activemask: { ptx: "6.2" },
  // ptxas 13 takes nanosleep from 6.2; the ISA and LLVM say 6.3
  nanosleep: { ptx: "6.3", cc: [7, 0] },
  fastTanh: { ptx: "7.0", cc: [7, 5] },
};
/** how the user calls an intrinsic, for errors (default `cuda.<name>`) */
const INTRINSIC_SPELLING: Partial<Record<IntrinsicName, string>> = { gridSync: "cuda.cg.thisGrid().sync()" };
const DYNAMIC_SMEM_SIZE: Requirement = { ptx: "4.1" };
/** `add/sub/mul/fma.rn.f16` */
const F16_ARITH: Requirement = { ptx: "4.2", cc: [5, 3] };
const F16_NATIVE = new Set<BinaryOp>(["add", "sub", "mul"]);
const BF16_CVT: Requirement = { ptx: "7.0", cc: [8, 0] };
const ATOMIC_ADD_F64: Requirement = { ptx: "5.0", cc: [6, 0] };
const SIGNED_ZERO_MIN_MAX: Requirement = { ptx: "1.0", cc: [8, 0] };
/** kernel parameter space: 4352 bytes, or 32764 from ISA 8.1 on sm_70+ (measured with ptxas, ptx.md §1) */
const SMALL_PARAMS_BYTES = 4352;
const LARGE_PARAMS: Requirement = { ptx: "8.1", cc: [7, 0] };
const MAX_PARAMS_BYTES = 32764;

export function emitPtx(ir: FunctionIR, options: PtxTargetOptions = {}): PtxModule {
  if (ir.kind !== "kernel") throw new Error(`emitPtx: '${ir.name}' is a device function; only kernels are emitted (device functions are inlined)`);
  return new KernelEmitter(ir, options.computeCapability ?? [7, 5]).finish(options);
}

/** `x + c`, `c + x` or `x - c` on int32 with a constant c: x and ±c */
function constantAddend(e: Expr): { rest: Expr; value: number } | undefined {
  if (e.k !== "binary" || e.type !== "int32" || (e.op !== "add" && e.op !== "sub")) return undefined;
  const num = (x: Expr) => (x.k === "const" && typeof x.value === "number" ? x.value : undefined);
  const b = num(e.b), a = num(e.a);
  if (b !== undefined) return { rest: e.a, value: e.op === "add" ? b : -b };
  if (a !== undefined && e.op === "add") return { rest: e.b, value: a };
  return undefined;
}

const sanitize = (s: string) => s.replace(/[^A-Za-z0-9_]/g, "_");
/** text inside a PTX string: ptxas rejects any non-ASCII byte in the module, even inside a string */
const ptxString = (s: string) => s.replace(/[^ -~]|["\\]/g, "_");
const scalarTypeOf = (e: Expr): ScalarName => e.type as ScalarName;

class KernelEmitter {
  private readonly counts: Record<RegClass, number> = { pred: 0, b16: 0, b32: 0, b64: 0, f32: 0, f64: 0 };
  private readonly prologue: Line[] = [];
  private readonly body: Line[] = [];
  private cur: Line[] = this.body;
  private readonly moduleDecls: string[] = [];
  private readonly entryDecls: string[] = [];
  private readonly params: PtxParam[] = [];
  private readonly vars = new Map<string, Value>();
  private readonly globalMemo = new Map<string, unknown>();
  private readonly memo: MemoScope[] = [memoScope()];
  /** variables assigned in each enclosing loop, outermost first */
  private readonly loopVars: Set<string>[] = [];
  /** counters of the enclosing counted loops whose bodies are being emitted (see `countedInductionVar`) */
  private readonly inductionVars: InductionCounter[] = [];
  /** addresses lsr.ts may turn into pointers advanced at each latch */
  private readonly inductionAddresses: InductionAddress[] = [];
  private readonly jumps = new Map<string, { brk: string; cont?: string }>();
  private readonly keys = new WeakMap<Expr, string | null>();
  private nLabels = 0;
  private nLoops = 0;
  private nSyms = 0;
  private nTemps = 0;
  /** locals assigned after their declaration (array locals among them need registers of their own) */
  private readonly reassigned = new Set<string>();
  private featureVersion = "1.0";
  /** `.file` numbers of the files `.loc` refers to */
  private readonly lineFiles = new Map<string, number>();
  /** position of the statement being emitted, for errors */
  private loc: Loc | undefined;
  private staticShared = 0;
  private usesPrint = false;
  /** the kernel has a `throw`: the module declares the error record (KERNEL_ERROR_SYMBOL) */
  private usesThrow = false;
  private readonly entry: string;

  constructor(private readonly ir: FunctionIR, private readonly cc: readonly [number, number]) {
    // a PTX identifier: letters first, and not WARP_SZ, PTX's one predefined plain name
    const entry = sanitize(ir.name);
    this.entry = /^[A-Za-z]/.test(entry) && entry !== "WARP_SZ" ? entry : `k_${entry}`;
  }

  // -------------------------------------------------------------------------
  // module assembly

  finish(options: PtxTargetOptions): PtxModule {
    walkStmts(this.ir.body, (s) => { if (s.k === "assign") this.reassigned.add(s.name); });
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

  // -------------------------------------------------------------------------
  // what the target compute capability has

  /** true if the target has what `need` describes; `.version` then covers it */
  private supports(need: Requirement): boolean {
    if (!hasCapability(this.cc, need)) return false;
    this.featureVersion = maxVersion(this.featureVersion, need.ptx);
    return true;
  }

  private require(need: Requirement, what: string, loc?: Loc): void {
    if (!this.supports(need)) throw this.unavailable(need, what, loc);
  }

  private unavailable(need: Requirement, what: string, loc?: Loc): CompileError {
    return this.compileError(`${what} needs compute capability ${need.cc!.join(".")} or newer; this kernel is compiled for ${targetName(this.cc)}`, loc);
  }

  private checkParamSpace(): void {
    const bytes = this.params.reduce((end, p) => Math.ceil(end / p.size) * p.size + p.size, 0);
    if (bytes > MAX_PARAMS_BYTES) throw this.compileError(`the kernel's parameters take ${bytes} bytes; PTX allows at most ${MAX_PARAMS_BYTES}`);
    if (bytes > SMALL_PARAMS_BYTES) this.require(LARGE_PARAMS, `more than ${SMALL_PARAMS_BYTES} bytes of kernel parameters (${bytes})`);
  }

  /** an error at `loc` in the kernel's source (the signature when unknown) */
  private compileError(message: string, loc = this.loc): CompileError {
    return new CompileError(this.ir.name, loc?.source ?? this.ir.source, [{ message, line: loc?.line ?? 1, column: loc?.column ?? 0 }], loc?.source ? undefined : this.ir.origin);
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
      if (typeof type !== "string" || type === "void") throw new Error(`PTX target: kernel parameter '${name}' has unsupported type ${JSON.stringify(type)}`);
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
    this.vars.set(name, { k: "array", type, key: name, base, shape: dims, strides: contiguousStrides(dims, () => { throw new Error("unreachable"); }), readonly: false, origin: "entry" });
  }

  // -------------------------------------------------------------------------
  // low-level emission helpers

  private reg(cls: RegClass): Reg {
    return { k: "reg", cls, id: ++this.counts[cls] };
  }

  private ins(op: string, args: readonly Operand[], ndefs = 1, guard?: { reg: Reg; neg: boolean }): void {
    this.cur.push({ k: "inst", op, args, ndefs, guard });
  }

  /** op into a fresh register of class `cls` */
  private out(cls: RegClass, op: string, ...srcs: Operand[]): Reg {
    const d = this.reg(cls);
    this.ins(op, [d, ...srcs]);
    return d;
  }

  private inPrologue<T>(f: () => T): T {
    const saved = this.cur;
    this.cur = this.prologue;
    try { return f(); } finally { this.cur = saved; }
  }

  /** computed once at kernel entry, shared by every use */
  private kernelInvariant<T>(key: string, f: () => T): T {
    if (!this.globalMemo.has(key)) this.globalMemo.set(key, this.inPrologue(f));
    return this.globalMemo.get(key) as T;
  }

  private newLabel(): string { return `$L__${this.nLabels++}`; }
  private place(label: string): void { this.cur.push({ k: "label", name: label }); }
  private bra(label: string, guard?: { reg: Reg; neg: boolean }): void { this.ins("bra", [sym(label)], 0, guard); }

  private toReg(s: Scalar, cls: RegClass): Reg {
    return s.k === "reg" ? s : this.out(cls, MOV[cls], s);
  }

  private mov(d: Reg, s: Scalar): void { this.ins(MOV[d.cls], [d, s]); }

  private mulS32(a: Scalar, b: Scalar): Scalar {
    if (a.k === "imm" && b.k === "imm") return imm(Math.imul(Number(a.text), Number(b.text)));
    if (a.k === "imm" && a.text === "1") return b;
    return this.out("b32", "mul.lo.s32", a, b);
  }

  private constant(type: ScalarName, value: number | bigint | boolean): Scalar {
    if (type === "bool") return this.kernelInvariant(`true:${value}`, () => this.out("pred", "mov.pred", imm(value ? 1 : 0)));
    if (isHalfFloat(type)) return this.kernelInvariant(`${type}:${value}`, () => this.out("b16", "mov.b16", imm(halfHex(type, Number(value)))));
    if (type === "float32" || type === "float64") return imm(floatImm(PTX_SCALAR[type].arith as "f32" | "f64", Number(value)));
    return imm(typeof value === "boolean" ? Number(value) : value);
  }

  private zero(type: ScalarName): Scalar { return this.constant(type, isBigInt(type) ? 0n : type === "bool" ? false : 0); }

  // -------------------------------------------------------------------------
  // memo (scoped CSE of pure expressions)

  private pushScope(): void { this.memo.push(memoScope()); }
  private popScope(): void { this.memo.pop(); }

  private memoized<T>(key: string | null, deps: () => ReadonlySet<string>, compute: () => T): T {
    if (key === null) return compute();
    for (let i = this.memo.length - 1; i >= 0; i--) {
      const values = this.memo[i]!.values;
      if (values.has(key)) return values.get(key) as T;
    }
    const value = compute();
    const scope = this.memo[this.memo.length - 1]!;
    scope.values.set(key, value);
    for (const d of deps()) {
      let keys = scope.readers.get(d);
      if (!keys) scope.readers.set(d, (keys = new Set()));
      keys.add(key);
    }
    return value;
  }

  /** forgets what was memoised about `names` (a key left in another variable's readers only costs a recompute) */
  private invalidate(names: Iterable<string>): void {
    for (const name of names) {
      for (const scope of this.memo) {
        const keys = scope.readers.get(name);
        if (!keys) continue;
        for (const k of keys) scope.values.delete(k);
        scope.readers.delete(name);
      }
    }
  }

  /** structural key of a pure expression, null if it reads memory or has effects */
  private key(e: Expr): string | null {
    const cached = this.keys.get(e);
    if (cached !== undefined) return cached;
    const kids = (xs: readonly Expr[]) => {
      const ks = xs.map((x) => this.key(x));
      return ks.some((k) => k === null) ? null : ks.join(",");
    };
    const wrap = (head: string, xs: readonly Expr[]) => { const k = kids(xs); return k === null ? null : `${head}(${k})`; };
    let k: string | null;
    switch (e.k) {
      case "const": k = `c:${e.type}:${String(e.value)}`; break;
      case "var": k = `v:${e.name}`; break;
      case "special": k = `s:${e.reg}`; break;
      case "unary": k = wrap(`u:${e.op}:${e.type}`, [e.x]); break;
      case "binary": k = wrap(`b:${e.op}:${e.type}`, [e.a, e.b]); break;
      case "fma": k = wrap(`fma:${e.type}`, [e.a, e.b, e.c]); break;
      case "compare": k = wrap(`cmp:${e.op}`, [e.a, e.b]); break;
      case "cast": k = wrap(`cast:${e.type}`, [e.x]); break;
      case "bitcast": k = wrap(`bitcast:${e.type}`, [e.x]); break;
      case "words": k = wrap(`w:${e.op}`, e.args); break;
      case "arrayAttr": k = wrap(`attr:${e.attr}:${e.dim}`, [e.array]); break;
      case "tupleGet": k = wrap(`tg:${e.index}`, [e.tuple]); break;
      case "tuple": k = wrap("tuple", e.items); break;
      default: k = null;
    }
    this.keys.set(e, k);
    return k;
  }

  private deps(es: readonly Expr[]): Set<string> {
    const out = new Set<string>();
    const visit = (e: Expr): void => {
      if (e.k === "var") out.add(e.name);
      else for (const c of exprChildren(e)) visit(c);
    };
    es.forEach(visit);
    return out;
  }

  /** how deep in the loop nest the value of `es` changes (0: invariant in every enclosing loop) */
  private rank(es: readonly Expr[]): number {
    if (es.some((e) => this.key(e) === null)) return this.loopVars.length + 1;
    const d = this.deps(es);
    for (let i = this.loopVars.length - 1; i >= 0; i--) if ([...d].some((v) => this.loopVars[i]!.has(v))) return i + 1;
    return 0;
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
        if (home === undefined) throw new Error(`PTX target: assignment to undeclared '${s.name}'`);
        this.assignInto(home, this.value(s.value));
        this.invalidate([s.name, ...homeKeys(home)]);
        break;
      }
      case "store": this.store(s.array, s.index, s.value); break;
      case "expr": this.value(s.expr); break;
      case "if": this.ifStmt(s.cond, s.then, s.else); break;
      case "loop": this.loop(s); break;
      case "block": {
        const brk = this.newLabel();
        this.jumps.set(s.label, { brk });
        this.pushScope(); this.stmts(s.body); this.popScope();
        this.place(brk);
        break;
      }
      case "break": this.bra(this.jump(s.label).brk); break;
      case "continue": {
        const cont = this.jump(s.label).cont;
        if (!cont) throw new Error(`PTX target: 'continue ${s.label}' names a block, not a loop`);
        this.bra(cont);
        break;
      }
      case "return": this.ins("ret", [], 0); break;
      case "alloc": this.alloc(s.name, s.type, s.shape); break;
    }
  }

  private jump(label: string) {
    const j = this.jumps.get(label);
    if (!j) throw new Error(`PTX target: unknown label '${label}'`);
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
    this.pushScope(); this.stmts(body); this.popScope();
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
    const assigned = assignedVars([...then, ...els]);
    const unchanged = (acc: Access) => ![...this.deps([acc.array, ...acc.index])].some((v) => assigned.has(v));
    if (!els.length) {
      for (const acc of unconditionalAccesses(then)) if (unchanged(acc) && acc.index.every(isSpeculatable)) this.address(this.array(acc.array), acc.index);
      return;
    }
    const keyOf = (acc: Access) => {
      const keys = [acc.array, ...acc.index].map((e) => this.key(e));
      return keys.includes(null) ? null : keys.join(",");
    };
    const inElse = new Set(unconditionalAccesses(els).map(keyOf));
    for (const acc of unconditionalAccesses(then)) {
      const key = keyOf(acc);
      if (key === null || !inElse.has(key) || !unchanged(acc)) continue;
      inElse.delete(key);
      if (acc.k === "load") this.load(acc.array, acc.index, acc.type);
      else this.address(this.array(acc.array), acc.index);
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
    if (k?.k !== "reg") throw new Error(`PTX target: loop counter '${plan.counter}' has no register`);
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
    const assigned = assignedVars([...s.body, ...s.update]);
    this.invalidate(assigned);
    this.loopVars.push(assigned);
    const id = this.nLoops++;
    this.cur.push({ k: "loop", id, edge: "begin" });
    this.place(top);
    // ptxas unrolls a loop unless told not to in its header block
    if (opts.nounroll) this.cur.push({ k: "raw", text: '	.pragma "nounroll";', uses: [] });
    this.jumps.set(s.label, { brk, cont });
    const { counter, copies } = opts;
    const home = counter && this.vars.get(counter.name);
    const iv = home?.k === "reg" && home.cls === "b32" ? { loop: id, reg: home, base: home, offset: 0, step: counter!.step } : null;
    if (copies > 1 && !iv) throw new Error(`PTX target: unrolled loop '${s.label}' has no int32 counter register`);
    for (let copy = 0; copy < copies; copy++) {
      const ivCopy = iv && copy > 0 ? this.offsetCounter(counter!.name, iv, (copy * iv.step) / copies) : iv;
      if (ivCopy) this.inductionVars.push(ivCopy);
      this.pushScope(); this.stmts(s.body); this.popScope();
      if (ivCopy) this.inductionVars.pop();
    }
    if (iv && copies > 1) { this.vars.set(counter!.name, iv.reg); this.invalidate([counter!.name]); }
    this.place(cont);
    this.pushScope();
    this.stmts(update);
    this.cur.push({ k: "loop", id, edge: "latch" });
    const p = test();
    if (p) this.bra(top, { reg: p, neg: false });
    else this.bra(top);
    this.popScope();
    this.cur.push({ k: "loop", id, edge: "end" });
    this.place(brk);
    this.loopVars.pop();
  }

  /** the counter of an unrolled copy: `k + offset` (no wrap: see unroll.ts), bound to the counter's name */
  private offsetCounter(name: string, iv: InductionCounter, offset: number): InductionCounter {
    const reg = this.out("b32", "add.s32", iv.base, imm(offset));
    this.vars.set(name, reg);
    this.invalidate([name]);
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
      this.invalidate([counter.name]);
      this.pushScope(); this.stmts(counter.body); this.popScope();
      this.place(cont);
    }
    this.vars.set(counter.name, home);
    this.invalidate([counter.name]);
    this.assignInto(home, imm(counter.final));
    this.place(brk);
  }

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
    if (shape.some((n) => n <= 0)) throw new Error(`PTX target: ${type.space} array '${name}' has shape [${shape}]`);
    const bytes = shape.reduce((a, b) => a * b, 1) * size;
    const s = `${sanitize(name)}_${type.space}${this.nSyms++}`;
    if (type.space === "shared") {
      this.moduleDecls.push(`.shared .align 16 .b8 ${s}[${bytes}];`);
      this.staticShared = Math.ceil(this.staticShared / 16) * 16 + bytes;
    } else if (type.space === "local") {
      this.entryDecls.push(`\t.local .align 16 .b8 ${s}[${bytes}];`);
    } else throw new Error(`PTX target: cannot allocate a ${type.space} array ('${name}')`);
    const base = this.inPrologue(() => this.out("b32", "mov.u32", sym(s)));
    this.bindFixedArray(name, type, base, shape);
  }

  /** registers of a local named `key` (array homes in a tuple are named `key#i`), set to `v` */
  private homeWith(key: string, t: Type, v: Value): Value {
    const home = this.allocValue(t, key);
    this.assignInto(home, v);
    this.invalidate([key, ...homeKeys(home)]);
    return home;
  }

  private allocValue(t: Type, key: string): Value {
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

  private zeroValue(t: Type): Value {
    if (t === "void") return null;
    if (typeof t === "string") return this.zero(t);
    if (t.kind === "tuple") return { k: "tuple", items: t.items.map((i) => this.zeroValue(i)) };
    // an array local declared without a value (the inliner's result of an array-returning function): null pointer, empty
    const base = this.out(baseClass(t), MOV[baseClass(t)], imm(0));
    return { k: "array", type: t, key: this.tempKey(), base, shape: range(t.ndim).map(() => imm(0)), strides: range(t.ndim).map(() => imm(0)), readonly: true, origin: "value" };
  }

  private assignInto(home: Value, v: Value): void {
    if (home === null) return;
    if (home.k === "reg") { this.mov(home, v as Scalar); return; }
    if (home.k === "tuple") {
      const items = (v as TupleVal).items;
      home.items.forEach((h, i) => this.assignInto(h, items[i]!));
      return;
    }
    if (home.k === "imm") throw new Error("PTX target: cannot assign to a constant");
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

  private tempKey(): string { return `$tmp${this.nTemps++}`; }

  // -------------------------------------------------------------------------
  // expressions

  private value(e: Expr): Value {
    switch (e.k) {
      case "var": {
        const v = this.vars.get(e.name);
        if (v === undefined) throw new Error(`PTX target: unknown variable '${e.name}'`);
        return v;
      }
      case "tuple": return { k: "tuple", items: e.items.map((x) => this.value(x)) };
      case "tupleGet": return (this.value(e.tuple) as TupleVal).items[e.index]!;
      case "select": return this.select(e.cond, e.a, e.b, e.type, e.eager ?? false);
      case "intrinsic": return this.intrinsic(e);
      case "call": throw new Error(`PTX target: call of '${e.fn.name}' was not inlined`);
      default: return this.scalar(e);
    }
  }

  private scalar(e: Expr): Scalar {
    switch (e.k) {
      case "const": return this.constant(e.type, e.value);
      case "special": {
        const name = e.reg === "laneid" ? "%laneid" : `%${e.reg}`;
        return this.kernelInvariant(`special:${e.reg}`, () => this.out("b32", "mov.u32", sym(name)));
      }
      case "unary": return this.memoized(this.key(e), () => this.deps([e]), () => this.unary(e.op, e.type, e.x));
      case "binary": return this.memoized(this.key(e), () => this.deps([e]), () => this.binary(e.op, e.type, e.a, e.b));
      case "fma": return this.memoized(this.key(e), () => this.deps([e]), () => this.fma(e.type, e.a, e.b, e.c));
      case "compare": return this.memoized(this.key(e), () => this.deps([e]), () => this.compare(e.op, e.a, e.b));
      case "cast": return this.memoized(this.key(e), () => this.deps([e]), () => this.convert(scalarTypeOf(e.x), e.type, this.scalar(e.x)));
      case "bitcast": return this.memoized(this.key(e), () => this.deps([e]), () => this.bitcast(scalarTypeOf(e.x), e.type, this.scalar(e.x)));
      case "words": return this.memoized(this.key(e), () => this.deps([e]), () => this.words(e.op, e.args));
      case "arrayAttr": return this.arrayAttr(this.array(e.array), e.attr, e.dim);
      case "logical": return this.logical(e.op, e.a, e.b);
      case "load": return this.load(e.array, e.index, e.type);
      case "atomic": return this.atomic(e);
      default: {
        const v = this.value(e);
        if (v === null || v.k === "array" || v.k === "tuple") throw new Error(`PTX target: expected a scalar, got ${e.k}`);
        return v;
      }
    }
  }

  private pred(e: Expr): Reg { return this.toReg(this.scalar(e), "pred"); }

  private array(e: Expr): ArrayVal {
    const v = this.value(e);
    if (v === null || v.k !== "array") throw new Error("PTX target: expected an array");
    return v;
  }

  /** a float16/bfloat16 value as float32 (exact) */
  private halfTo32(t: ScalarName, s: Scalar): Reg {
    const h = this.toReg(s, "b16");
    if (t === "float16") return this.out("f32", "cvt.f32.f16", h);
    // a bfloat16 is the upper half of a float32 (cvt.f32.bf16 needs sm_90)
    return this.out("f32", "mov.b32", this.out("b32", "shl.b32", this.out("b32", "cvt.u32.u16", h), imm(16)));
  }

  /** a float32 rounded once to float16/bfloat16 */
  private f32ToHalf(t: ScalarName, s: Scalar): Reg {
    if (t === "float16") return this.out("b16", "cvt.rn.f16.f32", s);
    if (this.supports(BF16_CVT)) return this.out("b16", "cvt.rn.bf16.f32", s);
    // before sm_80: round the float32's bits to nearest even at bit 16 (a carry into the exponent is right,
    // up to infinity); a NaN becomes 0x7FC0
    const bits = this.out("b32", "mov.b32", s);
    const lsb = this.out("b32", "and.b32", this.out("b32", "shr.u32", bits, imm(16)), imm(1));
    const up = this.out("b32", "add.u32", this.out("b32", "add.u32", bits, imm(0x7fff)), lsb);
    const nan = this.out("pred", "testp.notanumber.f32", s);
    return this.out("b16", "cvt.u16.u32", this.out("b32", "selp.b32", imm(0x7fc0), this.out("b32", "shr.u32", up, imm(16)), nan));
  }

  /**
   * A float64 or integer as float32 rounded to odd (toward zero, then the last bit set if inexact), so
   * that rounding it to bfloat16 rounds as once from the exact value (24 ≥ 8 + 2 bits); float16 exactly.
   */
  private toF32Odd(from: ScalarName, v: Scalar): Reg {
    if (from === "float16") return this.halfTo32(from, v);
    const F = PTX_SCALAR[from];
    const y = this.out("f32", `cvt.rz.f32.${F.arith}`, v);
    const back = from === "float64" ? this.out("f64", "cvt.f64.f32", y) : this.out(F.reg, `cvt.rzi.${F.arith}.f32`, y);
    const inexact = this.out("pred", `setp.${from === "float64" ? "neu" : "ne"}.${F.arith}`, back, v);
    const sticky = this.out("b32", "selp.b32", imm(1), imm(0), inexact);
    return this.out("f32", "mov.b32", this.out("b32", "or.b32", this.out("b32", "mov.b32", y), sticky));
  }

  /** evaluates float16/bfloat16 arithmetic in float32 (exact for + − × ÷ √ and friends: 24 ≥ 2·11+2 bits) */
  private viaF32(t: ScalarName, args: readonly Expr[], f: (xs: Scalar[]) => Scalar): Scalar {
    return this.f32ToHalf(t, f(args.map((a) => this.halfTo32(t, this.scalar(a)))));
  }

  /** re-wraps an 8/16-bit int held sign/zero-extended in a 32-bit register */
  private wrap(t: ScalarName, s: Scalar): Scalar {
    if (!isNarrowInt(t)) return s;
    const P = PTX_SCALAR[t];
    return P.signed
      ? this.out("b32", `cvt.s32.s${P.width}`, s)
      : this.out("b32", "and.b32", s, imm((1 << P.width) - 1));
  }

  private unary(op: UnaryOp, t: ScalarName, xe: Expr): Scalar {
    const xt = scalarTypeOf(xe);
    const P = PTX_SCALAR[xt];
    const x = () => this.scalar(xe);
    if (TESTP[op]) {
      const v = isHalfFloat(xt) ? this.halfTo32(xt, x()) : x();
      return this.out("pred", `testp.${TESTP[op]}.${isHalfFloat(xt) ? "f32" : P.arith}`, v);
    }
    if (isHalfFloat(xt)) {
      if (op === "neg") return this.out("b16", "xor.b16", this.toReg(x(), "b16"), imm("0x8000"));
      if (op === "abs") return this.out("b16", "and.b16", this.toReg(x(), "b16"), imm("0x7FFF"));
      return this.viaF32(xt, [xe], ([v]) => this.floatUnary(op, "f32", v!));
    }
    if (isFloat(xt)) return this.floatUnary(op, P.arith as "f32" | "f64", x());
    switch (op) {
      case "not": return this.out("pred", "not.pred", this.toReg(x(), "pred"));
      case "neg": return this.wrap(t, this.out(P.reg, `neg.${P.signedArith}`, x()));
      case "bitnot": return this.wrap(t, this.out(P.reg, `not.${P.bits}`, x()));
      case "abs": return P.signed ? this.wrap(t, this.out(P.reg, `abs.${P.arith}`, x())) : x();
      case "popc": return this.out("b32", `popc.${P.bits}`, this.lowBits(xt, x()));
      case "clz": {
        const n = this.out("b32", `clz.${P.bits}`, this.lowBits(xt, x()));
        return P.width < 32 ? this.out("b32", "sub.s32", n, imm(32 - P.width)) : n;
      }
      case "brev": {
        const r = this.out(P.reg, `brev.${P.bits}`, x());
        return P.width < 32 ? this.wrap(t, this.out("b32", "shr.u32", r, imm(32 - P.width))) : r;
      }
      case "ffs": {
        const b = this.out(P.reg, `brev.${P.bits}`, x());
        const f = this.out("b32", `bfind.shiftamt.u${P.bits === "b64" ? 64 : 32}`, b);
        return this.out("b32", "add.s32", f, imm(1));
      }
      default: throw new Error(`PTX target: unary '${op}' on ${xt}`);
    }
  }

  /** the value's own bits, zero-extended (narrow signed ints are held sign-extended) */
  private lowBits(t: ScalarName, s: Scalar): Scalar {
    const P = PTX_SCALAR[t];
    return P.width < 32 ? this.out("b32", "and.b32", s, imm((1 << P.width) - 1)) : s;
  }

  private floatUnary(op: UnaryOp, f: "f32" | "f64", x: Scalar): Scalar {
    const cls = f;
    if (ROUNDING[op]) return this.out(cls, `cvt.${ROUNDING[op]}.${f}.${f}`, x);
    switch (op) {
      case "neg": return this.out(cls, `neg.${f}`, x);
      case "abs": return this.out(cls, `abs.${f}`, x);
      case "sqrt": return this.out(cls, `sqrt.rn.${f}`, x);
      case "round": {
        // JS Math.round: floor(x) + (x − floor(x) >= 0.5), with the sign of x (−0.4 → −0)
        const fl = this.out(cls, `cvt.rmi.${f}.${f}`, x);
        const frac = this.out(cls, `sub.rn.${f}`, x, fl);
        const up = this.out("pred", `setp.ge.${f}`, frac, imm(floatImm(f, 0.5)));
        const fl1 = this.out(cls, `add.rn.${f}`, fl, imm(floatImm(f, 1)));
        const r = this.out(cls, `selp.${f}`, fl1, fl, up);
        return this.out(cls, `copysign.${f}`, x, r);
      }
      default: throw new Error(`PTX target: unary '${op}' on a float`);
    }
  }

  private binary(op: BinaryOp, t: ScalarName, ae: Expr, be: Expr): Scalar {
    const P = PTX_SCALAR[t];
    if (isHalfFloat(t)) {
      // one rounding either way: the native instruction where the target has it
      if (t === "float16" && F16_NATIVE.has(op) && this.supports(F16_ARITH)) {
        return this.out("b16", `${op}.rn.f16`, this.toReg(this.scalar(ae), "b16"), this.toReg(this.scalar(be), "b16"));
      }
      return this.viaF32(t, [ae, be], ([a, b]) => this.floatBinary(op, "f32", a!, b!));
    }
    if (isFloat(t)) return this.floatBinary(op, P.arith as "f32" | "f64", this.scalar(ae), this.scalar(be));
    const a = this.scalar(ae), b = this.scalar(be);
    if (t === "bool") {
      if (!BIT_BINARY[op]) throw new Error(`PTX target: '${op}' on bool`);
      return this.out("pred", `${BIT_BINARY[op]}.pred`, this.toReg(a, "pred"), this.toReg(b, "pred"));
    }
    if (INT_BINARY[op]) return this.wrap(t, this.out(P.reg, `${INT_BINARY[op]}.${P.arith}`, a, b));
    if (BIT_BINARY[op]) return this.out(P.reg, `${BIT_BINARY[op]}.${P.bits}`, a, b);
    if (op === "shl" || op === "shr") {
      const amount = b.k === "imm" ? imm(Number(b.text) & (P.width - 1)) : this.out("b32", "and.b32", b, imm(P.width - 1));
      if (op === "shl") return this.wrap(t, this.out(P.reg, `shl.${P.bits}`, a, amount));
      return this.out(P.reg, `shr.${P.arith}`, a, amount);
    }
    if (op === "div" || op === "rem" || op === "floordiv") return this.wrap(t, this.intDivision(op, t, a, b));
    throw new Error(`PTX target: binary '${op}' on ${t}`);
  }

  private floatBinary(op: BinaryOp, f: "f32" | "f64", a: Scalar, b: Scalar): Scalar {
    const simple = FLOAT_BINARY[op];
    if (simple) return this.out(f, `${simple}.${f}`, a, b);
    switch (op) {
      case "min": case "max": return this.jsMinMax(op, f, a, b);
      case "copysign": return this.out(f, `copysign.${f}`, b, a);
      case "rem": return this.fmod(f, a, b);
      default: throw new Error(`PTX target: binary '${op}' on a float`);
    }
  }

  /**
   * JS Math.min/max: NaN if either is NaN; −0 < +0. On sm_80 and newer, plain min/max order −0 below +0 (PTX ISA),
   * so a select of NaN for unordered operands completes them; older targets also fix the sign of equal zeros.
   */
  private jsMinMax(op: "min" | "max", f: "f32" | "f64", a: Scalar, b: Scalar): Reg {
    const nan = () => this.out("pred", `setp.nan.${f}`, a, b);
    if (this.supports(SIGNED_ZERO_MIN_MAX)) return this.out(f, `selp.${f}`, imm(CANONICAL_NAN[f]), this.out(f, `${op}.${f}`, a, b), nan());
    const bits = f === "f32" ? "b32" : "b64";
    const m = this.out(f, `${op}.${f}`, a, b);
    // equal operands differ at most in the sign of zero: min ORs the sign bits, max ANDs them
    const ia = this.out(bits, `mov.${bits}`, this.toReg(a, f)), ib = this.out(bits, `mov.${bits}`, this.toReg(b, f));
    const z = this.out(f, `mov.${bits}`, this.out(bits, `${op === "min" ? "or" : "and"}.${bits}`, ia, ib));
    const eq = this.out("pred", `setp.eq.${f}`, a, b);
    const m2 = this.out(f, `selp.${f}`, z, m, eq);
    return this.out(f, `selp.${f}`, imm(CANONICAL_NAN[f]), m2, nan());
  }

  /**
   * Exact fmod (JS `%`) by binary long division: t = |y|·2^k with t ≤ |x| < 2t,
   * then subtract-and-halve down to |y|. Every subtraction is exact (Sterbenz),
   * every doubling/halving is exact. The result has the sign of x.
   */
  private fmod(f: "f32" | "f64", xs: Scalar, ys: Scalar): Reg {
    const x = this.toReg(xs, f), y = this.toReg(ys, f);
    const res = this.reg(f), r = this.reg(f), t = this.reg(f);
    const done = this.newLabel(), dbl = this.newLabel(), red = this.newLabel(), fin = this.newLabel(), notSpecial = this.newLabel();
    const ax = this.out(f, `abs.${f}`, x), ay = this.out(f, `abs.${f}`, y);
    const bad1 = this.out("pred", `setp.nan.${f}`, x, y);
    const bad2 = this.out("pred", `testp.infinite.${f}`, x);
    const bad3 = this.out("pred", `setp.eq.${f}`, y, imm(floatImm(f, 0)));
    const bad = this.out("pred", "or.pred", this.out("pred", "or.pred", bad1, bad2), bad3);
    this.bra(notSpecial, { reg: bad, neg: true });
    this.mov(res, imm(CANONICAL_NAN[f]));
    this.bra(done);
    this.place(notSpecial);
    this.mov(res, x);
    this.bra(done, { reg: this.out("pred", `setp.lt.${f}`, ax, ay), neg: false });
    this.mov(r, ax);
    this.mov(t, ay);
    this.place(dbl);
    const t2 = this.out(f, `mul.rn.${f}`, t, imm(floatImm(f, 2)));
    this.bra(red, { reg: this.out("pred", `setp.le.${f}`, t2, r), neg: true });
    this.mov(t, t2);
    this.bra(dbl);
    this.place(red);
    this.ins(`sub.rn.${f}`, [r, r, t], 1, { reg: this.out("pred", `setp.ge.${f}`, r, t), neg: false });
    this.bra(fin, { reg: this.out("pred", `setp.eq.${f}`, t, ay), neg: false });
    this.ins(`mul.rn.${f}`, [t, t, imm(floatImm(f, 0.5))]);
    this.bra(red);
    this.place(fin);
    this.ins(`copysign.${f}`, [res, x, r]);
    this.place(done);
    return res;
  }

  /** integer div / rem / floordiv: by 0 → 0; INT_MIN / −1 wraps; constants use multiply-high */
  private intDivision(op: "div" | "rem" | "floordiv", t: ScalarName, a: Scalar, b: Scalar): Scalar {
    const P = PTX_SCALAR[t];
    if (b.k === "imm") return this.divByConstant(op, t, a, BigInt(b.text));
    const ty = P.arith;
    const isZero = this.out("pred", `setp.eq.${ty}`, b, imm(0));
    // a divisor of −1 is replaced by 1 (and the quotient negated) so INT_MIN / −1 cannot overflow
    const isMinus1 = P.signed ? this.out("pred", `setp.eq.${ty}`, b, imm(-1)) : null;
    const avoid = isMinus1 ? this.out("pred", "or.pred", isZero, isMinus1) : isZero;
    const safeB = this.out(P.reg, `selp.${ty}`, imm(1), b, avoid);
    let r: Scalar;
    if (op === "rem") r = this.out(P.reg, `rem.${ty}`, a, safeB);
    else {
      let q: Scalar = this.out(P.reg, `div.${ty}`, a, safeB);
      if (isMinus1) q = this.out(P.reg, `selp.${ty}`, this.out(P.reg, `neg.${ty}`, a), q, isMinus1);
      if (op === "floordiv" && P.signed) q = this.floorFix(t, q, this.out(P.reg, `rem.${ty}`, a, safeB), b);
      r = q;
    }
    return this.out(P.reg, `selp.${ty}`, imm(0), r, isZero);
  }

  /** truncated quotient → floor quotient: q − 1 when the remainder is nonzero and its sign differs from the divisor's */
  private floorFix(t: ScalarName, q: Scalar, rem: Scalar, b: Scalar): Scalar {
    const P = PTX_SCALAR[t];
    const nz = this.out("pred", `setp.ne.${P.arith}`, rem, imm(0));
    const signs = this.out(P.reg, `xor.${P.bits}`, rem, b);
    const differ = this.out("pred", `setp.lt.${P.arith}`, signs, imm(0));
    const adjust = this.out("pred", "and.pred", nz, differ);
    return this.out(P.reg, `selp.${P.arith}`, this.out(P.reg, `add.${P.arith}`, q, imm(-1)), q, adjust);
  }

  private divByConstant(op: "div" | "rem" | "floordiv", t: ScalarName, a: Scalar, d: bigint): Scalar {
    const P = PTX_SCALAR[t];
    if (d === 0n) return imm(0);
    const w = P.bits === "b64" ? 64 : 32;
    const ty = P.arith, sfx = w === 64 ? "64" : "32";
    const cls = P.reg;
    if (op === "rem" && !P.signed && isPow2(d)) return this.out(cls, `and.b${sfx}`, a, imm(d - 1n));
    const q = P.signed ? this.signedDivConst(a, d, w, cls) : this.unsignedDivConst(a, d, w, cls);
    if (op === "div" || (op === "floordiv" && !P.signed)) return q;
    const rem = this.out(cls, `sub.${ty}`, a, this.out(cls, `mul.lo.${ty}`, q, imm(d)));
    if (op === "rem") return rem;
    // floor: adjust when the remainder's sign is opposite to the (known) divisor's
    const adjust = this.out("pred", `setp.${d > 0n ? "lt" : "gt"}.${ty}`, rem, imm(0));
    return this.out(cls, `selp.${ty}`, this.out(cls, `add.${ty}`, q, imm(-1)), q, adjust);
  }

  private signedDivConst(a: Scalar, d: bigint, w: number, cls: RegClass): Scalar {
    const s = `s${w}`, u = `u${w}`;
    if (d === 1n) return a;
    if (d === -1n) return this.out(cls, `neg.${s}`, a);
    const ad = d < 0n ? -d : d;
    let q: Scalar;
    if (isPow2(ad)) {
      const k = ad.toString(2).length - 1;
      // bias negative dividends by 2^k − 1 so the arithmetic shift truncates toward zero
      const sign = k === 1 ? a : this.out(cls, `shr.${s}`, a, imm(k - 1));
      const bias = this.out(cls, `shr.${u}`, sign, imm(w - k));
      q = this.out(cls, `shr.${s}`, this.out(cls, `add.${s}`, a, bias), imm(k));
    } else {
      const m = signedMagic(d, w);
      let h: Scalar = this.out(cls, `mul.hi.${s}`, a, imm(m.m));
      if (m.add > 0) h = this.out(cls, `add.${s}`, h, a);
      if (m.add < 0) h = this.out(cls, `sub.${s}`, h, a);
      if (m.shift > 0) h = this.out(cls, `shr.${s}`, h, imm(m.shift));
      return this.out(cls, `add.${s}`, h, this.out(cls, `shr.${u}`, h, imm(w - 1)));
    }
    return d < 0n ? this.out(cls, `neg.${s}`, q) : q;
  }

  private unsignedDivConst(a: Scalar, d: bigint, w: number, cls: RegClass): Scalar {
    const u = `u${w}`;
    if (d === 1n) return a;
    if (isPow2(d)) return this.out(cls, `shr.${u}`, a, imm(d.toString(2).length - 1));
    const m = unsignedMagic(d, w);
    const t1 = this.out(cls, `mul.hi.${u}`, a, imm(m.m));
    const half = this.out(cls, `shr.${u}`, this.out(cls, `sub.${u}`, a, t1), imm(1));
    return this.out(cls, `shr.${u}`, this.out(cls, `add.${u}`, t1, half), imm(m.l - 1));
  }

  private fma(t: ScalarName, ae: Expr, be: Expr, ce: Expr): Scalar {
    const f = PTX_SCALAR[t].arith;
    if (t === "float16") {
      const [a, b, c] = [ae, be, ce].map((x) => this.toReg(this.scalar(x), "b16"));
      this.require(F16_ARITH, "fma on float16 (cuda.fma, cuda.fp16.hfma)");
      return this.out("b16", "fma.rn.f16", a!, b!, c!);
    }
    return this.out(PTX_SCALAR[t].reg, `fma.rn.${f}`, this.scalar(ae), this.scalar(be), this.scalar(ce));
  }

  private compare(op: CompareOp, ae: Expr, be: Expr): Reg {
    const t = scalarTypeOf(ae);
    const operand = (e: Expr): Scalar => {
      const v = this.scalar(e);
      if (t === "bool") return this.out("b32", "selp.u32", imm(1), imm(0), this.toReg(v, "pred"));
      return isHalfFloat(t) ? this.halfTo32(t, v) : v;
    };
    const a = operand(ae), b = operand(be);
    if (t === "bool") return this.out("pred", `setp.${op}.u32`, a, b);
    if (isFloat(t)) return this.out("pred", `setp.${FLOAT_CMP[op]}.${isHalfFloat(t) ? "f32" : PTX_SCALAR[t].arith}`, a, b);
    return this.out("pred", `setp.${op}.${PTX_SCALAR[t].arith}`, a, b);
  }

  /** C/CUDA value conversion (ir.ts CastExpr) */
  private convert(from: ScalarName, to: ScalarName, v: Scalar): Scalar {
    if (from === to) return v;
    const F = PTX_SCALAR[from], T = PTX_SCALAR[to];
    if (to === "bool") {
      if (isHalfFloat(from)) return this.out("pred", "setp.neu.f32", this.halfTo32(from, v), imm(floatImm("f32", 0)));
      if (isFloat(from)) return this.out("pred", `setp.neu.${F.arith}`, v, imm(floatImm(F.arith as "f32", 0)));
      return this.out("pred", `setp.ne.${F.arith}`, v, imm(0));
    }
    if (from === "bool") {
      const p = this.toReg(v, "pred");
      if (isHalfFloat(to)) return this.out("b16", "selp.b16", imm(halfHex(to, 1)), imm("0x0000"), p);
      if (isFloat(to)) return this.out(T.reg, `selp.${T.arith}`, imm(floatImm(T.arith as "f32", 1)), imm(floatImm(T.arith as "f32", 0)), p);
      return this.out(T.reg, `selp.${T.arith}`, imm(1), imm(0), p);
    }
    if (from === "bfloat16") {
      const x = this.halfTo32(from, v);
      return to === "float32" ? x : this.convert("float32", to, x);
    }
    if (to === "bfloat16") return this.f32ToHalf(to, from === "float32" ? v : this.toF32Odd(from, v));
    if (isFloat(from) && isFloat(to)) {
      const narrowing = DTYPE_INFO[to].size < DTYPE_INFO[from].size;
      const x = from === "float16" ? this.toReg(v, "b16") : v;
      return this.out(T.reg, `cvt${narrowing ? ".rn" : ""}.${T.arith}.${F.arith}`, x);
    }
    if (!isFloat(from) && isFloat(to)) return this.out(T.reg, `cvt.rn.${T.arith}.${F.arith}`, v);
    if (isFloat(from)) return this.floatToInt(from, to, v);
    // int → int: narrow values are held extended to 32 bits by their own signedness
    if (F.reg === T.reg) return T.width < 32 ? this.wrap(to, v) : v;
    if (T.reg === "b64") return this.out("b64", `cvt.${T.signed ? "s" : "u"}64.${F.signed ? "s" : "u"}32`, v);
    return this.wrap(to, this.out("b32", "cvt.u32.u64", v));
  }

  /** truncating, saturating to the target range; NaN → 0 (PTX gives 1 << (bits−1) from f64 or into 64 bits) */
  private floatToInt(from: ScalarName, to: ScalarName, v: Scalar): Scalar {
    const T = PTX_SCALAR[to];
    let x = v, f = PTX_SCALAR[from].arith;
    if (isHalfFloat(from)) { x = this.halfTo32(from, v); f = "f32"; }
    const wide = T.width < 32 ? (T.signed ? "s32" : "u32") : T.arith;
    let r: Scalar = this.out(T.reg, `cvt.rzi.${wide}.${f}`, x);
    if (f === "f64" || T.width === 64) {
      const nan = this.out("pred", `testp.notanumber.${f}`, this.toReg(x, f as RegClass));
      r = this.out(T.reg, `selp.${wide}`, imm(0), r, nan);
    }
    if (T.width < 32) {
      const lo = T.signed ? -(1 << (T.width - 1)) : 0, hi = T.signed ? (1 << (T.width - 1)) - 1 : (1 << T.width) - 1;
      if (T.signed) r = this.out("b32", "max.s32", r, imm(lo));
      r = this.out("b32", `min.${wide}`, r, imm(hi));
    }
    return r;
  }

  private bitcast(from: ScalarName, to: ScalarName, v: Scalar): Scalar {
    const F = PTX_SCALAR[from], T = PTX_SCALAR[to];
    if (from === to) return v;
    if (isHalfFloat(from) && isHalfFloat(to)) return v;
    if (isHalfFloat(from)) return this.out("b32", `cvt.${T.signed ? "s" : "u"}32.${T.signed ? "s" : "u"}16`, this.toReg(v, "b16"));
    if (isHalfFloat(to)) return this.out("b16", "cvt.u16.u32", v);
    if (F.reg === T.reg) return this.wrap(to, v);
    return this.out(T.reg, `mov.${T.bits}`, v);
  }

  private words(op: "hi" | "lo" | "make", args: readonly Expr[]): Scalar {
    if (op === "make") {
      const hi = this.toReg(this.scalar(args[0]!), "b32"), lo = this.toReg(this.scalar(args[1]!), "b32");
      const d = this.reg("f64");
      this.ins("mov.b64", [d, { k: "vec", items: [lo, hi] }]);
      return d;
    }
    const x = this.toReg(this.scalar(args[0]!), "f64");
    const lo = this.reg("b32"), hi = this.reg("b32");
    this.ins("mov.b64", [{ k: "vec", items: [lo, hi] }, x]);
    return op === "hi" ? hi : lo;
  }

  private logical(op: "and" | "or", ae: Expr, be: Expr): Reg {
    // a right side that cannot fault is cheaper computed than branched around
    if (isSpeculatable(be)) return this.out("pred", `${op}.pred`, this.pred(ae), this.pred(be));
    const d = this.reg("pred");
    const end = this.newLabel();
    this.mov(d, this.scalar(ae));
    this.bra(end, { reg: d, neg: op === "and" });
    this.pushScope(); this.mov(d, this.scalar(be)); this.popScope();
    this.place(end);
    return d;
  }

  /** `c ? a : b`: a `selp` when both sides may be evaluated (`eager`: they must be), else a branch */
  private select(ce: Expr, ae: Expr, be: Expr, t: Type, eager: boolean): Value {
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
    this.pushScope(); this.assignInto(d, this.value(ae)); this.popScope();
    this.bra(end);
    this.place(other);
    this.pushScope(); this.assignInto(d, this.value(be)); this.popScope();
    this.place(end);
    return d;
  }

  /** `a.subarray(begin, end?)`: the bounds taken as JavaScript does (negative from the end, clamped to [0, length]) */
  private subarray(a: ArrayVal, [begin, end]: readonly Scalar[]): ArrayVal {
    const n = this.toReg(a.shape[0]!, "b32");
    const clamp = (x: Scalar): Reg => {
      const fromEnd = this.out("b32", "max.s32", this.out("b32", "add.s32", n, x), imm(0));
      return this.out("b32", "selp.b32", fromEnd, this.out("b32", "min.s32", x, n), this.out("pred", "setp.lt.s32", x, imm(0)));
    };
    const first = clamp(begin!);
    const length = this.out("b32", "max.s32", this.out("b32", "sub.s32", end ? clamp(end) : n, first), imm(0));
    const skipped = this.out("b32", "mul.lo.s32", first, a.strides[0]!);
    const bytes = imm(DTYPE_INFO[a.type.dtype].size);
    const base = SPACES_32BIT.has(a.type.space)
      ? this.out("b32", "mad.lo.s32", skipped, bytes, a.base)
      : this.out("b64", "mad.wide.s32", skipped, bytes, a.base);
    // an array of complex keeps its (re, im) dimension
    return { ...a, key: this.tempKey(), origin: "value", base, shape: [length, ...a.shape.slice(1)] };
  }

  /** `a.view(dtype)` of a contiguous 1-d array: the same bytes, as many whole elements of `type` as they hold */
  private viewAs(a: ArrayVal, type: ArrayType): ArrayVal {
    const from = DTYPE_INFO[a.type.dtype].size, to = DTYPE_INFO[type.dtype].size;
    // element sizes are powers of two; an array of complex is its parts, (re, im) pairs
    const n = a.type.complex ? this.out("b32", "shl.b32", a.shape[0]!, imm(1)) : a.shape[0]!;
    const length = from === to ? n
      : from > to ? this.out("b32", "shl.b32", n, imm(Math.log2(from / to)))
      : this.out("b32", "shr.u32", n, imm(Math.log2(to / from)));
    if (type.complex) return { ...a, type, key: this.tempKey(), origin: "value", shape: [this.out("b32", "shr.u32", length, imm(1)), imm(2)], strides: [imm(2), imm(1)] };
    return { ...a, type, key: this.tempKey(), origin: "value", shape: [length], strides: [imm(1)] };
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

  // -------------------------------------------------------------------------
  // arrays

  private arrayAttr(a: ArrayVal, attr: "shape" | "stride" | "size", dim: number): Scalar {
    if (attr === "shape") return a.shape[dim]!;
    if (attr === "stride") return a.strides[dim]!;
    const size = () => a.shape.reduce<Scalar>((p, s) => this.mulS32(p, s), imm(1));
    const key = `size:${a.key}`;
    return a.origin === "entry" ? this.kernelInvariant(key, size) : this.memoized(key, () => new Set([a.key]), size);
  }

  private space(a: ArrayVal): string {
    return a.type.space === "global" && a.readonly ? "global.nc" : a.type.space;
  }

  /**
   * `base + Σ index_d · stride_d · size` as a memory operand, memoised per array and index: a neighbour of
   * an address already made is that address plus a constant (`neighbour`), any other is a sum of terms.
   */
  private address(a: ArrayVal, index: readonly Expr[]): Mem {
    if (index.length !== a.shape.length) throw new Error(`PTX target: ${index.length} indices for a ${a.shape.length}-d array`);
    if (this.ir.options.debug) this.boundsCheck(a, index);
    return this.memoized(this.accessKey("addr", a, index), () => this.deps(index).add(a.key), () => (!this.ir.options.debug && this.neighbour(a, index)) || this.termsAddress(a, index));
  }

  /** memo key of element `index` of `a` (null unless every index is pure) */
  private accessKey(what: string, a: ArrayVal, index: readonly Expr[]): string | null {
    const keys = index.map((e) => this.key(e));
    return keys.some((k) => k === null) ? null : `${what}:${a.key}[${keys.join(",")}]`;
  }

  /**
   * `base + Σ index_d · stride_d · size`. Terms are added from the least to the most loop-variant, so the
   * invariant partial sum is one register LICM can hoist; constant terms fold into the offset.
   */
  private termsAddress(a: ArrayVal, index: readonly Expr[]): Mem {
    const size = DTYPE_INFO[a.type.dtype].size;
    const narrow = SPACES_32BIT.has(a.type.space);
    let offset = 0;
    let terms: AddressTerm[] = [];
    index.forEach((whole, d) => {
      const stride = a.strides[d]!;
      const parts = narrow ? this.rankParts(whole, false) : [{ e: whole, sub: false }];
      for (const { e, sub } of parts) {
        const idx = this.scalar(e);
        // a constant split off a 32-bit index is added in a register, as the index was (see rankParts)
        if (idx.k === "imm" && stride.k === "imm" && parts.length === 1) offset += Number(idx.text) * Number(stride.text) * size;
        else terms.push({ idx, big: isBigInt(scalarTypeOf(e)), signed: PTX_SCALAR[scalarTypeOf(e)].signed, stride, rank: this.rank([e]), dim: d, sub });
      }
    });
    terms.sort((x, y) => x.rank - y.rank);
    // int64 indices keep 64-bit terms
    if (a.type.layout === "C" && a.type.space === "global" && terms.every((t) => !t.big)) terms = this.linearTerms(terms);
    let acc: Reg = a.base;
    for (const term of terms) {
      const bytes = narrow ? this.termBytes32(term, size) : this.termBytes64(term, size);
      const sum = this.out(acc.cls, narrow ? (term.sub ? "sub.s32" : "add.s32") : "add.s64", acc, bytes);
      const iv = narrow ? undefined : this.inductionVar(term);
      if (iv) this.inductionAddresses.push({ loop: iv.loop, iv: iv.base, offset: iv.offset, step: iv.step, inv: acc, stride: term.stride, size, sum });
      acc = sum;
    }
    return mem(acc, offset);
  }

  /**
   * A 32-bit index `p ± q` whose sides change at different loop depths as separate parts (recursively), so
   * the invariant one joins the hoisted partial sum: in `tile[ty + j][tx]` (loop over j) only `j·132` is
   * added in the loop, and once ptxas unrolls it, it lands in the access's immediate (`[r+0x420]`) as in
   * nvcc's code. Exact: 32-bit (shared, local) addresses are sums modulo 2^32, where (p ± q)·s = p·s ± q·s.
   */
  private rankParts(e: Expr, sub: boolean): { e: Expr; sub: boolean }[] {
    if (e.k !== "binary" || (e.type !== "int32" && e.type !== "uint32") || (e.op !== "add" && e.op !== "sub") || this.rank([e.a]) === this.rank([e.b])) return [{ e, sub }];
    return [...this.rankParts(e.a, sub), ...this.rankParts(e.b, sub !== (e.op === "sub"))];
  }

  private inductionVar(term: AddressTerm): InductionCounter | undefined {
    return term.big || !term.signed ? undefined : this.inductionVars.find((v) => v.reg === term.idx);
  }

  /**
   * A C-contiguous global array's terms as one int32 linear index `Σ index_d · stride_d` (`mad.lo.s32`, as
   * nvcc does): one 64-bit multiply and add per address instead of one per dimension (and a shift per
   * register stride). Launches refuse arrays of 2^31 or more elements, so the index cannot overflow for an
   * in-bounds access. Kept apart, as 64-bit terms: induction variables (for loop strength reduction), and
   * terms with an immediate stride more loop-variant than the least variant term, whose two instructions
   * after the hoisted sum of the others (as `a[row][j]` in a loop over j) beat a linear index's three.
   */
  private linearTerms(terms: readonly AddressTerm[]): AddressTerm[] {
    const lowest = Math.min(...terms.map((t) => t.rank));
    const apart = (t: AddressTerm) => this.inductionVar(t) !== undefined || (t.stride.k === "imm" && t.rank > lowest);
    const linear = terms.filter((t) => !apart(t));
    if (linear.length < 2) return [...terms];
    const rank = Math.max(...linear.map((t) => t.rank));
    const index: AddressTerm = { idx: this.linearIndex(linear), big: false, signed: true, stride: imm(1), rank, dim: linear[0]!.dim, sub: false };
    return [index, ...terms.filter(apart)].sort((x, y) => x.rank - y.rank);
  }

  /**
   * `Σ index_d · stride_d` in int32, the least loop-variant first (its partial sums are hoisted), then the
   * innermost dimension first: `mad.lo.s32 idx, row, ncols, col`
   */
  private linearIndex(terms: readonly AddressTerm[]): Scalar {
    const [first, ...others] = [...terms].sort((x, y) => x.rank - y.rank || y.dim - x.dim);
    let idx = this.mulS32(first!.stride, first!.idx);
    for (const t of others) {
      // the register first: PTX takes an immediate only as the multiplier
      const [x, y] = t.idx.k === "imm" ? [t.stride, t.idx] : [t.idx, t.stride];
      idx = y.k === "imm" && y.text === "1" ? this.out("b32", "add.s32", idx, x) : this.out("b32", "mad.lo.s32", x, y, idx);
    }
    return idx;
  }

  /**
   * `a[…][i ± c][…]` (int32 i, constant c) as `a[…][i][…]`'s address plus c·stride bytes, as nvcc reaches
   * neighbours: with an immediate stride, in the memory operand (`[r+4]`: neighbours share one register);
   * with a register stride (a row of a global array: `a[y ± 1][x]`), `&a[y][x] + stride·(±c·size)` (one
   * IMAD.WIDE) instead of a second linear index and its multiply. Immediate strides go first,
   * so `a[y-1][x+1]` is `a[y-1][x]`'s register plus 4. With 64-bit addresses the sum is not wrapped to int32
   * first; the two differ only where `a[…][i][…]`'s own int32 index wraps: an `i` within c of ±2^31, or an
   * element c rows outside an array within c rows of 2^31 elements. Not under debug: the bounds check is on
   * `i ± c`. Not for 32-bit (shared, local) addresses: `a[i]`'s own address may wrap there (i = -1 at base
   * 0) and the offset would not bring it back.
   */
  private neighbour(a: ArrayVal, index: readonly Expr[]): Mem | undefined {
    if (SPACES_32BIT.has(a.type.space)) return undefined;
    const size = DTYPE_INFO[a.type.dtype].size;
    const shifts = index.flatMap((e, d) => {
      const c = constantAddend(e);
      return c ? [{ d, rest: c.rest, bytes: c.value * size, stride: a.strides[d]! }] : [];
    }).sort((x, y) => Number(x.stride.k === "reg") - Number(y.stride.k === "reg"));
    for (const { d, rest, bytes, stride } of shifts) {
      const at = () => this.address(a, index.map((x, j) => (j === d ? rest : x)));
      if (stride.k === "imm") {
        const { base, offset } = at();
        const moved = offset + bytes * Number(stride.text);
        // the operand's offset is a signed 32-bit immediate
        if (Math.abs(moved) < 2 ** 31) return mem(base, moved);
      } else if (Math.abs(bytes) < 2 ** 31) {
        const { base, offset } = at();
        // ptxas makes one IMAD.WIDE of this pair, but three instructions of a mad.wide.s32 with a negative factor
        return mem(this.out("b64", "add.s64", base, this.out("b64", "mul.wide.s32", stride, imm(bytes))), offset);
      }
    }
    return undefined;
  }

  private termBytes64(t: { idx: Scalar; big: boolean; signed: boolean; stride: Scalar }, size: number): Scalar {
    const shift = Math.log2(size);
    const wide = t.signed ? "mul.wide.s32" : "mul.wide.u32";
    if (t.big) {
      const stride = t.stride.k === "imm" ? imm(BigInt(t.stride.text) * BigInt(size)) : this.out("b64", "shl.b64", this.out("b64", "cvt.s64.s32", t.stride), imm(shift));
      return this.out("b64", "mul.lo.s64", t.idx, stride);
    }
    if (t.stride.k === "imm") return this.out("b64", wide, t.idx, imm(Number(t.stride.text) * size));
    const elems = this.out("b64", wide, t.idx, t.stride);
    return shift ? this.out("b64", "shl.b64", elems, imm(shift)) : elems;
  }

  private termBytes32(t: { idx: Scalar; big: boolean; stride: Scalar }, size: number): Scalar {
    const idx = t.big ? this.out("b32", "cvt.u32.u64", t.idx) : t.idx;
    const scale = t.stride.k === "imm" ? imm(Number(t.stride.text) * size) : this.mulS32(t.stride, imm(size));
    if (idx.k === "imm" && scale.k === "imm") return imm(Math.imul(Number(idx.text), Number(scale.text)));
    // the register first: PTX takes an immediate only as the multiplier
    const [x, y] = idx.k === "imm" ? [scale, idx] : [idx, scale];
    return y.k === "imm" && y.text === "1" ? x : this.out("b32", "mul.lo.s32", x, y);
  }

  /** debug: trap unless 0 <= index < shape in every dimension (unsigned compare catches negatives) */
  private boundsCheck(a: ArrayVal, index: readonly Expr[]): void {
    index.forEach((e, d) => {
      const idx = this.scalar(e);
      const big = isBigInt(scalarTypeOf(e));
      const shape = big ? this.out("b64", "cvt.s64.s32", a.shape[d]!) : a.shape[d]!;
      const bad = this.out("pred", `setp.ge.u${big ? 64 : 32}`, idx, shape);
      this.ins("trap", [], 0, { reg: bad, neg: false });
    });
  }

  /** an element; a read-only array's (`ld.global.nc`: nothing writes it while the kernel runs) is loaded once per scope */
  private load(ae: Expr, index: readonly Expr[], t: ScalarName): Scalar {
    const a = this.array(ae);
    const read = () => {
      const addr = this.address(a, index);
      const P = PTX_SCALAR[t];
      if (t === "bool") return this.out("pred", "setp.ne.u32", this.out("b32", `ld.${this.space(a)}.u8`, addr), imm(0));
      return this.out(P.reg, `ld.${this.space(a)}.${P.mem}`, addr);
    };
    return this.space(a) === "global.nc" ? this.memoized(this.accessKey(`ld.${t}`, a, index), () => this.deps(index).add(a.key), read) : read();
  }

  private store(ae: Expr, index: readonly Expr[], ve: Expr): void {
    const a = this.array(ae);
    const t = a.type.dtype;
    const addr = this.address(a, index);
    let v = this.scalar(ve);
    if (t === "bool") v = this.out("b32", "selp.u32", imm(1), imm(0), this.toReg(v, "pred"));
    this.ins(`st.${a.type.space}.${PTX_SCALAR[t].mem}`, [addr, v], 0);
  }

  // -------------------------------------------------------------------------
  // atomics (ptx.md §2 table)

  private atomic(e: AtomicExpr): Scalar {
    const a = this.array(e.array);
    const t = e.type;
    const P = PTX_SCALAR[t];
    if (a.type.space !== "global" && a.type.space !== "shared") throw new Error(`PTX target: atomics on ${a.type.space} arrays are not supported`);
    if (t === "bool" || isHalfFloat(t) || P.width < 32) throw new Error(`PTX target: atomics on ${t} arrays are not supported`);
    const sp = a.type.space;
    const addr = this.address(a, e.index);
    const v = this.scalar(e.value);
    const float = isFloat(t);
    const w = P.width;
    const atom = (op: string, ...srcs: Scalar[]) => {
      const d = this.reg(P.reg);
      this.ins(`atom.${sp}.${op}`, [d, addr, ...srcs]);
      return d;
    };
    switch (e.op) {
      case "add": case "sub": {
        const addend = e.op === "add" ? v : this.out(P.reg, `neg.${P.signedArith}`, v);
        // before sm_60 (no atom.add.f64), a CAS loop as Numba does
        if (t === "float64" && !this.supports(ATOMIC_ADD_F64)) return this.casLoop(sp, addr, t, (old) => ({ next: this.out("f64", "add.rn.f64", old, addend) }));
        return atom(`add.${float ? P.arith : `u${w}`}`, addend);
      }
      case "and": case "or": case "xor": case "exch": return atom(`${e.op}.${P.bits}`, v);
      case "cas": return atom(`cas.${P.bits}`, this.scalar(e.compare!), v);
      case "max": case "min":
        if (!float) return atom(`${e.op}.${P.arith}`, v);
        return this.casLoop(sp, addr, t, (old) => {
          const skip = this.out("pred", `setp.nan.${P.arith}`, old, v);
          return { next: this.jsMinMax(e.op as "min" | "max", P.arith as "f32", old, v), skip };
        });
      case "nanmax": case "nanmin": {
        if (!float) return atom(`${e.op === "nanmax" ? "max" : "min"}.${P.arith}`, v);
        const f = P.arith as "f32" | "f64";
        return this.casLoop(sp, addr, t, (old) => {
          const m = this.jsMinMax(e.op === "nanmax" ? "max" : "min", f, old, v);
          const keepOld = this.out(f, `selp.${f}`, old, m, this.out("pred", `testp.notanumber.${f}`, this.toReg(v, f)));
          return { next: this.out(f, `selp.${f}`, v, keepOld, this.out("pred", `testp.notanumber.${f}`, old)) };
        });
      }
      case "inc": case "dec":
        if (w === 32) return atom(`${e.op}.u32`, v);
        return this.casLoop(sp, addr, t, (old) => ({ next: this.incDec(e.op as "inc" | "dec", old, v) }));
    }
  }

  /** 64-bit atomic inc/dec values (PTX has them for u32 only) */
  private incDec(op: "inc" | "dec", old: Reg, v: Scalar): Reg {
    if (op === "inc") {
      const wrap = this.out("pred", "setp.ge.u64", old, v);
      return this.out("b64", "selp.b64", imm(0), this.out("b64", "add.u64", old, imm(1)), wrap);
    }
    const reset = this.out("pred", "or.pred", this.out("pred", "setp.eq.u64", old, imm(0)), this.out("pred", "setp.gt.u64", old, v));
    return this.out("b64", "selp.b64", v, this.out("b64", "sub.u64", old, imm(1)), reset);
  }

  /** read, compute, compare-and-swap until no other thread intervened; stores nothing when `skip` or the bits are unchanged */
  private casLoop(sp: string, addr: Mem, t: ScalarName, step: (old: Reg) => { next: Scalar; skip?: Reg }): Reg {
    const P = PTX_SCALAR[t];
    const bits = P.bits as "b32" | "b64";
    const old = this.reg(P.reg);
    const retry = this.newLabel(), done = this.newLabel();
    this.ins(`ld.volatile.${sp}.${P.mem}`, [old, addr]);
    this.place(retry);
    const { next, skip } = step(old);
    if (skip) this.bra(done, { reg: skip, neg: false });
    const ob = this.out(bits, `mov.${bits}`, old), nb = this.out(bits, `mov.${bits}`, this.toReg(next, P.reg));
    this.bra(done, { reg: this.out("pred", `setp.eq.${bits}`, ob, nb), neg: false });
    const got = this.reg(bits);
    this.ins(`atom.${sp}.cas.${bits}`, [got, addr, ob, nb]);
    const again = this.out("pred", `setp.ne.${bits}`, got, ob);
    this.ins(`mov.${bits}`, [old, got]);
    this.bra(retry, { reg: again, neg: false });
    this.place(done);
    return old;
  }

  // -------------------------------------------------------------------------
  // intrinsics

  private intrinsic(e: IntrinsicExpr): Value {
    const arg = (i: number) => this.scalar(e.args[i]!);
    const argType = (i: number) => scalarTypeOf(e.args[i]!);
    const name = e.name;
    const need = INTRINSIC_NEEDS[name];
    if (need && !this.supports(need)) {
      if (name === "fastTanh") return this.tanhWithoutTanhApprox(arg(0));
      throw this.unavailable(need, INTRINSIC_SPELLING[name] ?? `cuda.${name}`, e.loc);
    }
    switch (name) {
      case "syncthreads": this.ins("bar.sync", [imm(0)], 0); return null;
      case "syncthreadsCount": return this.out("b32", "bar.red.popc.u32", imm(0), this.toReg(arg(0), "pred"));
      case "syncthreadsAnd": case "syncthreadsOr": {
        const p = this.out("pred", `bar.red.${name === "syncthreadsAnd" ? "and" : "or"}.pred`, imm(0), this.toReg(arg(0), "pred"));
        return this.out("b32", "selp.s32", imm(1), imm(0), p);
      }
      case "syncwarp": this.ins("bar.warp.sync", [arg(0)], 0); return null;
      case "threadfence": case "threadfenceBlock": case "threadfenceSystem": this.ins(FENCE[name], [], 0); return null;
      case "gridSync": this.gridSync(); return null;
      case "shflSync": case "shflUpSync": case "shflDownSync": case "shflXorSync": {
        const [mode, c] = SHFL_MODE[name];
        const mask = arg(0), lane = arg(2), t = argType(1);
        const words = this.toWords(t, arg(1)).map((wd) => this.out("b32", `shfl.sync.${mode}.b32`, wd, lane, imm(c), mask));
        return this.fromWords(t, words);
      }
      case "allSync": case "anySync": case "eqSync":
        return this.out("pred", `vote.sync.${VOTE_MODE[name]}.pred`, this.toReg(arg(1), "pred"), arg(0));
      case "ballotSync": return this.out("b32", "vote.sync.ballot.b32", this.toReg(arg(1), "pred"), arg(0));
      case "matchAnySync": return this.out("b32", `match.any.sync.${this.matchBits(argType(1))}`, this.matchValue(argType(1), arg(1)), arg(0));
      case "matchAllSync": {
        const d = this.reg("b32"), p = this.reg("pred");
        this.ins(`match.all.sync.${this.matchBits(argType(1))}`, [{ k: "pair", d, p }, this.matchValue(argType(1), arg(1)), arg(0)]);
        return { k: "tuple", items: [d, p] };
      }
      case "activemask": return this.out("b32", "activemask.b32");
      case "lanemaskLt": return this.out("b32", "mov.u32", sym("%lanemask_lt"));
      case "nanosleep": this.ins("nanosleep.u32", [arg(0)], 0); return null;
      case "print": this.print(e.args); return null;
      case "cstring": return this.stringAddress(e.args[0]!);
      case "assert": this.assert(e.args); return null;
      case "throw": this.throwError(e.args); return null;
      case "subarray": return this.subarray(this.array(e.args[0]!), e.args.slice(1).map((x) => this.scalar(x)));
      case "view": return this.viewAs(this.array(e.args[0]!), e.type as ArrayType);
      case "fastDiv": return this.out("f32", "div.approx.ftz.f32", arg(0), arg(1));
      default: return this.out("f32", FAST_UNARY[name], arg(0));
    }
  }

  /**
   * fastmath tanh before sm_75, with the sign of x: x + x³·(2/15·x² − 1/3) for |x| < 0.125 (relative
   * error < 3e-7), else 1 − 2/(e^2|x| + 1) by ex2/rcp.approx (< 2e-6; e^2|x| = ∞ gives 1, NaN stays NaN)
   */
  private tanhWithoutTanhApprox(v: Scalar): Reg {
    const c = (k: number) => imm(floatImm("f32", k));
    const x = this.toReg(v, "f32");
    const ax = this.out("f32", "abs.f32", x);
    const x2 = this.out("f32", "mul.rn.f32", x, x);
    const poly = this.out("f32", "fma.rn.f32", x2, c(2 / 15), c(-1 / 3));
    const small = this.out("f32", "fma.rn.f32", this.out("f32", "mul.rn.f32", x2, x), poly, x);
    const e2x = this.out("f32", "ex2.approx.f32", this.out("f32", "mul.rn.f32", ax, c(2 * Math.LOG2E)));
    const q = this.out("f32", "rcp.approx.f32", this.out("f32", "add.rn.f32", e2x, c(1)));
    const large = this.out("f32", "fma.rn.f32", q, c(-2), c(1));
    return this.out("f32", "copysign.f32", x, this.out("f32", "selp.f32", small, large, this.out("pred", "setp.lt.f32", ax, c(0.125))));
  }

  /** a scalar as 32-bit words for shuffles (64-bit values: lo, hi) */
  private toWords(t: ScalarName, v: Scalar): Reg[] {
    const P = PTX_SCALAR[t];
    if (t === "bool") return [this.out("b32", "selp.u32", imm(1), imm(0), this.toReg(v, "pred"))];
    if (isHalfFloat(t)) return [this.out("b32", "cvt.u32.u16", this.toReg(v, "b16"))];
    if (P.bits === "b64") {
      const lo = this.reg("b32"), hi = this.reg("b32");
      this.ins("mov.b64", [{ k: "vec", items: [lo, hi] }, this.toReg(v, P.reg)]);
      return [lo, hi];
    }
    return [P.reg === "f32" ? this.out("b32", "mov.b32", v) : this.toReg(v, "b32")];
  }

  private fromWords(t: ScalarName, w: Reg[]): Scalar {
    const P = PTX_SCALAR[t];
    if (t === "bool") return this.out("pred", "setp.ne.u32", w[0]!, imm(0));
    if (isHalfFloat(t)) return this.out("b16", "cvt.u16.u32", w[0]!);
    if (P.bits === "b64") { const d = this.reg(P.reg); this.ins("mov.b64", [d, { k: "vec", items: w }]); return d; }
    return P.reg === "f32" ? this.out("f32", "mov.b32", w[0]!) : w[0]!;
  }

  private matchBits(t: ScalarName): "b32" | "b64" { return PTX_SCALAR[t].bits === "b64" ? "b64" : "b32"; }

  private matchValue(t: ScalarName, v: Scalar): Reg {
    const P = PTX_SCALAR[t];
    if (P.bits === "b64") return P.reg === "f64" ? this.out("b64", "mov.b64", v) : this.toReg(v, "b64");
    return this.toWords(t, v)[0]!;
  }

  /** vprintf(format, args): args packed as a C struct, floats promoted to double, small ints and bools to 32 bits */
  private print(args: readonly Expr[]): void {
    this.usesPrint = true;
    let offset = 0;
    const slots = args.slice(1).map((e) => {
      const t = scalarTypeOf(e);
      const size = isFloat(t) || isBigInt(t) ? 8 : 4;
      offset = Math.ceil(offset / size) * size;
      const slot = { e, t, offset };
      offset += size;
      return slot;
    });
    let argPtr: Reg;
    if (slots.length) {
      const buf = `__printbuf${this.nSyms++}`;
      this.entryDecls.push(`\t.local .align 8 .b8 ${buf}[${offset}];`);
      const base = this.out("b64", "mov.u64", sym(buf));
      for (const { e, t, offset: o } of slots) {
        const v = this.scalar(e);
        const [ty, val]: [string, Scalar] =
          t === "bool" ? ["u32", this.out("b32", "selp.u32", imm(1), imm(0), this.toReg(v, "pred"))]
          : isFloat(t) ? ["f64", t === "float64" ? v : this.out("f64", `cvt.f64.${PTX_SCALAR[t].arith}`, this.toReg(v, PTX_SCALAR[t].reg))]
          : [isBigInt(t) ? "u64" : "u32", v];
        this.ins(`st.local.${ty}`, [mem(base, o), val], 0);
      }
      argPtr = this.out("b64", "cvta.local.u64", base);
    } else argPtr = this.out("b64", "mov.u64", imm(0));
    const f = this.stringAddress(args[0]!);
    this.cur.push({
      k: "raw", uses: [f, argPtr],
      text: `\t{\n\t.param .b64 fmt;\n\t.param .b64 args;\n\t.param .b32 rv;\n\tst.param.b64 [fmt], ${regName(f)};\n\tst.param.b64 [args], ${regName(argPtr)};\n\tcall.uni (rv), vprintf, (fmt, args);\n\t}`,
    });
  }

  /** the generic address of string `index` of the function's table (a `.global` byte array) */
  private stringAddress(index: Expr): Reg {
    if (index.k !== "const") throw new Error("PTX target: a string index must be a constant");
    return this.out("b64", "cvta.global.u64", this.out("b64", "mov.u64", sym(`__str${Number(index.value)}`)));
  }

  /** a debug assertion: unless the condition holds, print the message and trap */
  private assert(args: readonly Expr[]): void {
    const holds = this.pred(args[0]!);
    const end = this.newLabel();
    this.bra(end, { reg: holds, neg: false });
    this.pushScope(); this.print(args.slice(1)); this.ins("trap", [], 0); this.popScope();
    this.place(end);
  }

  /**
   * `throw`: the first thread of the launch to throw claims the error record with a compare-and-swap
   * (word 0: the site's string index + 1) and writes its thread and block ids after it; every thrower
   * then exits. No `trap`: that would end the context, and the host reads the record after the launch.
   */
  private throwError(args: readonly Expr[]): void {
    const site = args[0]!;
    if (site.k !== "const") throw new Error("PTX target: a throw site must be a constant");
    this.usesThrow = true;
    const ids = args.slice(1).map((a) => this.toReg(this.scalar(a), "b32"));
    const record = this.out("b64", "mov.u64", sym(KERNEL_ERROR_SYMBOL));
    const old = this.out("b32", "atom.global.cas.b32", mem(record, 0), imm(0), imm(Number(site.value) + 1));
    const first = this.out("pred", "setp.eq.u32", old, imm(0));
    ids.forEach((id, i) => this.ins("st.global.u32", [mem(record, 4 * (i + 1)), id], 0, { reg: first, neg: false }));
    this.ins("ret", [], 0);
  }

  /** this_grid().sync(), as nvcc 13 emits it (ptx.md §2; needs a cooperative launch) */
  private gridSync(): void {
    const n = this.nLabels++;
    const ok = `$L__gs${n}_ok`, spin = `$L__gs${n}_spin`, after = `$L__gs${n}_done`;
    this.cur.push({
      k: "raw", uses: [], text: [
        "\t{",
        "\t.reg .pred %gp<4>;", "\t.reg .b32 %gr<16>;", "\t.reg .b64 %grd<4>;",
        "\tmov.u32 %gr1, %envreg2;", "\tcvt.u64.u32 %grd1, %gr1;", "\tmov.u32 %gr2, %envreg1;", "\tcvt.u64.u32 %grd2, %gr2;",
        "\tbfi.b64 %grd3, %grd2, %grd1, 32, 32;",
        "\tsetp.ne.s64 %gp1, %grd3, 0;", `\t@%gp1 bra ${ok};`, "\ttrap;",
        `${ok}:`,
        "\tbarrier.sync 0;",
        "\tmov.u32 %gr3, %tid.x;", "\tmov.u32 %gr4, %tid.y;", "\tmov.u32 %gr5, %tid.z;",
        "\tor.b32 %gr3, %gr3, %gr4;", "\tor.b32 %gr3, %gr3, %gr5;", "\tsetp.ne.u32 %gp2, %gr3, 0;", `\t@%gp2 bra ${after};`,
        "\tmov.u32 %gr6, %nctaid.x;", "\tmov.u32 %gr7, %nctaid.y;", "\tmul.lo.s32 %gr6, %gr6, %gr7;", "\tmov.u32 %gr7, %nctaid.z;", "\tmul.lo.s32 %gr6, %gr6, %gr7;",
        "\tmov.u32 %gr8, %ctaid.x;", "\tmov.u32 %gr9, %ctaid.y;", "\tmov.u32 %gr10, %ctaid.z;",
        "\tor.b32 %gr8, %gr8, %gr9;", "\tor.b32 %gr8, %gr8, %gr10;", "\tsetp.eq.u32 %gp3, %gr8, 0;",
        "\tsub.s32 %gr11, -2147483647, %gr6;", "\tselp.b32 %gr12, %gr11, 1, %gp3;",
        "\tadd.s64 %grd3, %grd3, 4;",
        "\tatom.add.release.gpu.u32 %gr13, [%grd3], %gr12;",
        `${spin}:`,
        "\tld.acquire.gpu.u32 %gr14, [%grd3];", "\txor.b32 %gr15, %gr14, %gr13;", "\tsetp.gt.s32 %gp1, %gr15, -1;", `\t@%gp1 bra ${spin};`,
        `${after}:`,
        "\tbarrier.sync 0;",
        "\t}",
      ].join("\n"),
    });
  }
}

// ---------------------------------------------------------------------------

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** register class of an array's base address: a 32-bit window address for shared/local, else 64-bit */
const baseClass = (t: ArrayType): "b32" | "b64" => (SPACES_32BIT.has(t.space) ? "b32" : "b64");

/** keys of the array homes inside a local's registers (assigning the local invalidates what was cached about them) */
function homeKeys(v: Value): string[] {
  if (v === null || v.k === "reg" || v.k === "imm") return [];
  if (v.k === "tuple") return v.items.flatMap(homeKeys);
  return v.origin === "home" ? [v.key] : [];
}

/** C-order strides from a shape (last is 1) */
function contiguousStrides(shape: readonly Scalar[], mul: (a: Scalar, b: Scalar) => Scalar): Scalar[] {
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

function byteArrayDecl(head: string, name: string, bytes: readonly number[]): string {
  return `${head} .b8 ${name}[${Math.max(1, bytes.length)}] = {${(bytes.length ? bytes : [0]).join(", ")}};`;
}

function halfHex(t: "float16" | "bfloat16", x: number): string {
  return "0x" + (t === "float16" ? float16Bits(x) : bfloat16Bits(x)).toString(16).toUpperCase().padStart(4, "0");
}


/** pure, cannot fault and cheap enough to evaluate on both sides of a select */
function isSpeculatable(e: Expr): boolean {
  switch (e.k) {
    case "const": case "var": case "special": case "arrayAttr": return true;
    case "unary": case "cast": case "bitcast": case "compare": case "fma": case "words": case "tupleGet": case "select":
      return exprChildren(e).every(isSpeculatable);
    case "binary": return e.op !== "rem" && e.op !== "div" && e.op !== "floordiv" && exprChildren(e).every(isSpeculatable);
    default: return false;
  }
}

/** a counted loop's counter as one copy of the body sees it: register `reg` = `base + offset`, `base` advancing by `step` at the latch */
interface InductionCounter { readonly loop: number; readonly reg: Reg; readonly base: Reg; readonly offset: number; readonly step: number }

interface Counter { readonly name: string; readonly values: readonly number[]; readonly final: number; readonly body: readonly Stmt[] }

/** ptxas unrolls additive counted loops itself, but not these (measured, docs/ptx-target.md) */
const GEOMETRIC: Partial<Record<BinaryOp, (v: number, c: number) => number>> = {
  mul: (v, c) => Math.imul(v, c),
  shl: (v, c) => v << (c & 31),
  shr: (v, c) => v >> (c & 31),
};
const COMPARE: Record<CompareOp, (a: number, b: number) => boolean> = {
  lt: (a, b) => a < b, le: (a, b) => a <= b, gt: (a, b) => a > b, ge: (a, b) => a >= b, eq: (a, b) => a === b, ne: (a, b) => a !== b,
};
const MAX_UNROLL_TRIPS = 32;
/** IR nodes in the unrolled copies together */
const MAX_UNROLL_NODES = 4000;

/**
 * `let c = K; for (; c OP K2; c = c GEO K3) body` over int32 — or a while /
 * do-while loop whose body ends with that update and has no `continue` — where
 * the body never assigns `c` nor breaks out: the values `c` takes, if few.
 */
function geometricCounter(init: Stmt | undefined, s: LoopStmt): Counter | null {
  if (!init || (init.k !== "let" && init.k !== "assign") || !s.cond) return null;
  const name = init.name, start = init.k === "let" ? init.init : init.value;
  let body = s.body, update = s.update;
  if (!update.length && !jumpsTo(body, s.label, "continue")) { update = body.slice(-1); body = body.slice(0, -1); }
  const up = update[0];
  if (start?.k !== "const" || start.type !== "int32" || update.length !== 1 || up?.k !== "assign" || up.name !== name) return null;
  const u = up.value, c = s.cond;
  if (u.k !== "binary" || u.type !== "int32" || !GEOMETRIC[u.op] || u.a.k !== "var" || u.a.name !== name || u.b.k !== "const") return null;
  // the front end may compare in float64 (`float64(c) < 1000`): exact for an int32
  const counterSide = c.k === "compare" && c.a.k === "cast" && c.a.type === "float64" ? c.a.x : c.k === "compare" ? c.a : null;
  if (c.k !== "compare" || counterSide?.k !== "var" || counterSide.name !== name || c.b.k !== "const" || typeof c.b.value !== "number") return null;
  if (assignedVars(body).has(name) || jumpsTo(body, s.label, "break")) return null;
  const step = GEOMETRIC[u.op]!, by = Number(u.b.value), bound = Number(c.b.value), test = COMPARE[c.op];
  const values: number[] = [];
  let v = Number(start.value);
  while (!s.testFirst || test(v, bound)) {
    if (values.length === MAX_UNROLL_TRIPS) return null;
    values.push(v);
    v = step(v, by);
    if (!s.testFirst && !test(v, bound)) break;
  }
  if (values.length * countNodes(body) > MAX_UNROLL_NODES) return null;
  return { name, values, final: v, body };
}

function jumpsTo(body: readonly Stmt[], label: string, kind: "break" | "continue"): boolean {
  let found = false;
  walkStmts(body, (s) => { if (s.k === kind && s.label === label) found = true; });
  return found;
}

function countNodes(body: readonly Stmt[]): number {
  let n = 0;
  const expr = (e: Expr): void => { n++; exprChildren(e).forEach(expr); };
  walkStmts(body, (s) => { n++; stmtExprs(s).forEach(expr); });
  return n;
}

/** names assigned (or declared) anywhere in `body` */
/**
 * `for (…; k < bound; k += step)` (or `>`/`<=`/`>=` with a negative or positive
 * step) over an int32 `k` that only the update assigns. The test before each
 * iteration bounds k, so `k += step` cannot wrap when step is ±1 against any
 * bound, or when a constant bound leaves room for the step: k·stride may then
 * be carried as a pointer (lsr.ts).
 */
function countedInductionVar(s: LoopStmt): { name: string; step: number } | null {
  const [u] = s.update;
  if (!s.testFirst || s.cond?.k !== "compare" || s.update.length !== 1 || u?.k !== "assign") return null;
  const { op, a: k, b: bound } = s.cond, v = u.value;
  if (k.k !== "var" || k.name !== u.name || k.type !== "int32" || bound.type !== "int32" || assignedVars(s.body).has(k.name)) return null;
  if (v.k !== "binary" || (v.op !== "add" && v.op !== "sub") || v.a.k !== "var" || v.a.name !== k.name || v.b.k !== "const") return null;
  const step = v.op === "add" ? Number(v.b.value) : -Number(v.b.value);
  const [lo, hi] = bound.k === "const" ? [Number(bound.value), Number(bound.value)] : [-(2 ** 31), 2 ** 31 - 1];
  if (step > 0) return (op === "lt" && hi - 1 + step <= 2 ** 31 - 1) || (op === "le" && hi + step <= 2 ** 31 - 1) ? { name: k.name, step } : null;
  if (step < 0) return (op === "gt" && lo + 1 + step >= -(2 ** 31)) || (op === "ge" && lo + step >= -(2 ** 31)) ? { name: k.name, step } : null;
  return null;
}

type Access = LoadExpr | StoreStmt | AtomicExpr;

/**
 * The element accesses (loads, stores, atomics) of a named array that `body` makes on every path through
 * it: those of its statements up to the first one that branches, outside `&&`/`||`'s second operand and a
 * select's arms.
 */
function unconditionalAccesses(body: readonly Stmt[]): Access[] {
  const out: Access[] = [];
  const visit = (e: Expr): void => {
    if ((e.k === "load" || e.k === "atomic") && e.array.k === "var") out.push(e);
    (e.k === "logical" ? [e.a] : e.k === "select" ? [e.cond] : exprChildren(e)).forEach(visit);
  };
  for (const s of body) {
    if (s.k !== "let" && s.k !== "assign" && s.k !== "store" && s.k !== "expr") break;
    if (s.k === "store" && s.array.k === "var") out.push(s);
    stmtExprs(s).forEach(visit);
  }
  return out;
}

function assignedVars(body: readonly Stmt[]): Set<string> {
  const out = new Set<string>();
  walkStmts(body, (s) => { if (s.k === "assign" || s.k === "let") out.add(s.name); });
  return out;
}

/** `a === b`, or `||` of such tests. */
function isEqualityTest(e: Expr): boolean {
  if (e.k === "compare") return e.op === "eq";
  return e.k === "logical" && e.op === "or" && isEqualityTest(e.a) && isEqualityTest(e.b);
}
