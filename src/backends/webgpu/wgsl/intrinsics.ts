// Intrinsics, special registers and atomics in WGSL: barriers (workgroupBarrier, with storageBarrier
// where global memory is both written and read; the reducing ones
// through a workgroup atomic), warp operations on the `subgroups` feature, console.log / throw /
// `debug` faults through the status buffer (layout.ts), fastmath built-ins, and atomics (native for
// 32-bit integers, compare-exchange loops for the rest).

import { isFloat, type ScalarName } from "../../../dtypes.js";
import { INTRINSICS } from "../../../compiler/intrinsics.js";
import { exprChildren as exprKids, stmtExprs, walkStmts, type AtomicExpr, type AtomicOp, type Expr, type IntrinsicExpr, type IntrinsicName, type Loc, type SpecialReg, type Stmt } from "../../../compiler/ir.js";
import { InternalCompilerError } from "../../../errors.js";
import { FAULT_ASSERT, FAULT_BOUNDS, PRINT_HEADER, STATUS_TAIL, STATUS_WORDS, type PrintArgKind } from "./layout.js";
import { fromBits, toBits, type Root } from "./memory.js";
import { WGSL_SCALAR } from "./scalar.js";
import { is64 } from "./int64.js";
import type { TupleValue, WgslContext } from "./context.js";

const SPECIAL: Partial<Record<SpecialReg, string>> = {
  "tid.x": "i32(nb_lid.x)", "tid.y": "i32(nb_lid.y)", "tid.z": "i32(nb_lid.z)",
  "ntid.x": "i32(BLOCK_X)", "ntid.y": "i32(BLOCK_Y)", "ntid.z": "i32(BLOCK_Z)",
  "ctaid.x": "i32(nb_wid.x)", "ctaid.y": "i32(nb_wid.y)", "ctaid.z": "i32(nb_wid.z)",
  "nctaid.x": "i32(nb_nwg.x)", "nctaid.y": "i32(nb_nwg.y)", "nctaid.z": "i32(nb_nwg.z)",
};

/** fastmath approximations: WGSL's built-ins */
const FAST_MATH: Partial<Record<IntrinsicName, (a: string[]) => string>> = {
  fastExp2: ([x]) => `exp2(${x})`, fastLog2: ([x]) => `log2(${x})`, fastSin: ([x]) => `sin(${x})`, fastCos: ([x]) => `cos(${x})`,
  fastRcp: ([x]) => `(1.0f / ${x})`, fastTanh: ([x]) => `tanh(${x})`, fastDiv: ([x, y]) => `(${x} / ${y})`,
};

const SHUFFLES = new Set<IntrinsicName>(["shflSync", "shflUpSync", "shflDownSync", "shflXorSync"]);

/** native WGSL atomics on i32/u32 */
const NATIVE_ATOMIC: Partial<Record<AtomicOp, string>> = {
  add: "atomicAdd", sub: "atomicSub", max: "atomicMax", min: "atomicMin", nanmax: "atomicMax", nanmin: "atomicMin",
  and: "atomicAnd", or: "atomicOr", xor: "atomicXor", exch: "atomicExchange",
};

/** why a construct is outside the subset */
const UNSUPPORTED_INTRINSIC: Partial<Record<IntrinsicName, string>> = {
  threadfence: "WGSL has no memory fence without a barrier",
  threadfenceBlock: "WGSL has no memory fence without a barrier",
  threadfenceSystem: "WGSL has no memory fence without a barrier",
  gridSync: "WebGPU has no grid-wide synchronisation",
};

const IDS = "nb_lid_p = nb_lid; nb_wid_p = nb_wid; nb_nwg_p = nb_nwg;";

export class WgslIntrinsics {
  private readonly w: WgslContext;
  private warpSize = 0;
  private reducing = false;
  /** barriers count the phases of a printing kernel (nb_phase) */
  private phases = false;
  private faults = false;

  constructor(w: WgslContext) {
    this.w = w;
  }

  /** checks what the kernel needs of the adapter before the body is emitted */
  prepare(): void {
    if (!this.w.ir.features.warp) return;
    const size = this.w.target.subgroupSize;
    if (!size) throw this.w.unsupported("warp intrinsics", `${this.w.target.adapterName} lacks the subgroups feature`, this.firstWarpLoc());
    this.warpSize = size;
    this.w.useFeature("subgroups");
  }

  private firstWarpLoc(): Loc | undefined {
    let loc: Loc | undefined;
    const find = (e: Expr): void => {
      if (!loc && ((e.k === "intrinsic" && INTRINSICS[e.name].effect === "warp") || (e.k === "special" && e.reg === "laneid"))) loc = e.loc;
    };
    const visit = (e: Expr): void => { find(e); for (const c of exprKids(e)) visit(c); };
    walk(this.w.ir.body, visit);
    return loc;
  }

  builtins(): string[] {
    return this.warpSize ? ["@builtin(subgroup_invocation_id) nb_lane: u32"] : [];
  }

  entryLines(): string[] {
    return [
      ...(this.w.usesStatus ? [IDS] : []),
      ...(this.reducing ? ["if (all(nb_lid == vec3<u32>(0u))) { atomicStore(&nb_red, 0u); }"] : []),
    ];
  }

  moduleHelpers(): string[] {
    const phase = this.phases || this.w.prints.length ? ["var<private> nb_phase: u32;"] : [];
    if (!this.w.usesStatus) return phase;
    const s = STATUS_WORDS;
    const tail = `NB_PRINT_END`;
    const out = [
      "var<private> nb_lid_p: vec3<u32>;",
      "var<private> nb_wid_p: vec3<u32>;",
      "var<private> nb_nwg_p: vec3<u32>;",
      // the first thrower or fault wins the status word, and records where it was
      `fn nb_claim(code: u32) -> bool {
  loop {
    let r = atomicCompareExchangeWeak(&nb_status[${s.thrown}], 0u, code);
    if (r.exchanged) {
      for (var k = 0u; k < 3u; k++) {
        atomicStore(&nb_status[${s.block}u + k], nb_wid_p[k]);
        atomicStore(&nb_status[${s.thread}u + k], nb_lid_p[k]);
      }
      return true;
    }
    if (r.old_value != 0u) { return false; }
  }
}`,
    ];
    if (this.faults) {
      out.push(`fn nb_fault(site: u32, i0: i32, i1: i32, i2: i32, n0: i32, n1: i32, n1_: i32) {
  if (nb_claim(${FAULT_BOUNDS >>> 0}u | site)) {
    let ix = array<i32, 3>(i0, i1, i2);
    let nx = array<i32, 3>(n0, n1, n1_);
    for (var k = 0u; k < 3u; k++) {
      atomicStore(&nb_status[${tail} + ${STATUS_TAIL.index}u + k], bitcast<u32>(ix[k]));
      atomicStore(&nb_status[${tail} + ${STATUS_TAIL.shape}u + k], bitcast<u32>(nx[k]));
    }
  }
}`);
    }
    if (this.w.prints.length) {
      out.push("var<private> nb_seq: u32;", `fn nb_record(site: u32, len: u32) -> u32 {
  let at = atomicAdd(&nb_status[${s.printCursor}], len);
  if (${s.printStart}u + at + len > ${tail}) { atomicAdd(&nb_status[${tail} + ${STATUS_TAIL.dropped}u], 1u); return 0u; }
  let p = ${s.printStart}u + at;
  atomicStore(&nb_status[p], site);
  atomicStore(&nb_status[p + 1u], nb_wid_p.x + nb_nwg_p.x * (nb_wid_p.y + nb_nwg_p.y * nb_wid_p.z));
  atomicStore(&nb_status[p + 2u], nb_phase);
  atomicStore(&nb_status[p + 3u], nb_lid_p.x + BLOCK_X * (nb_lid_p.y + BLOCK_Y * nb_lid_p.z));
  atomicStore(&nb_status[p + 4u], nb_seq);
  nb_seq = nb_seq + 1u;
  return p + ${PRINT_HEADER}u;
}`);
    }
    return [...phase, ...out];
  }

  faultHelper(): string {
    this.faults = true;
    return "nb_fault";
  }

  special(reg: SpecialReg): string {
    if (reg === "laneid") {
      if (!this.warpSize) throw this.w.unsupported("cuda.laneid", `${this.w.target.adapterName} lacks the subgroups feature`);
      return "i32(nb_lane)";
    }
    return SPECIAL[reg]!;
  }

  // ------------------------------------------------------------------ statements

  /** an intrinsic evaluated for its effect */
  statement(e: IntrinsicExpr): void {
    const why = UNSUPPORTED_INTRINSIC[e.name];
    if (why) throw this.w.unsupported(INTRINSICS[e.name].spelling, why, e.loc);
    switch (e.name) {
      case "syncthreads": return this.barrier();
      case "syncwarp":
        this.checkMask(e);
        // the lanes of a subgroup run together: nothing to wait for
        this.w.line("// syncwarp: a subgroup's invocations run together");
        return;
      case "nanosleep": return;
      case "print": this.record(e.args[0]!, e.args.slice(1)); return;
      case "assert": return this.assert(e);
      case "throw": {
        this.w.usesStatus = true;
        this.w.line(`_ = nb_claim(${1 + this.stringIndex(e.args[0]!)}u);`);
        this.w.line("return;");
        return;
      }
      default: {
        const v = this.value(e);
        if (e.type !== "void") this.w.line(`_ = ${v};`);
      }
    }
  }

  private barrier(): void {
    const place = this.w.place();
    // __syncthreads orders global memory too; WGSL's storageBarrier costs, and is left out where no
    // thread can read what another wrote there
    if (this.w.exchangesGlobal) this.w.line(`storageBarrier(); ${place}`);
    this.w.line(`workgroupBarrier(); ${place}`);
    // print records carry the barriers passed: the simulator prints what threads print between two barriers together
    if (this.w.ir.features.print) {
      this.phases = true;
      this.w.line("nb_phase = nb_phase + 1u;");
    }
  }

  private stringIndex(e: Expr): number {
    if (e.k !== "const") throw new InternalCompilerError("webgpu: a string index must be a constant", e.loc);
    return Number(e.value);
  }

  /** a print record's argument: the word it stores (none for constants) and its kind */
  private printArg(e: Expr): { words: string[]; kind: PrintArgKind } {
    const one = (word: string, kind: PrintArgKind) => ({ words: [word], kind });
    if (e.k === "intrinsic" && e.name === "cstring") return { words: [], kind: { string: this.stringIndex(e.args[0]!) } };
    if (e.k === "const" && typeof e.value !== "bigint") return { words: [], kind: { value: Number(e.value) } };
    const t = e.type as ScalarName;
    // floats reach printf as doubles: a float32 or float16 value converted is its float32
    if (t === "float64" && e.k === "cast" && isFloat(e.x.type as ScalarName)) {
      const v = this.w.expr(e.x);
      return one(`bitcast<u32>(${e.x.type === "float32" ? v : `f32(${v})`})`, "f32");
    }
    const ty = this.w.scalarType(t, e.loc);
    if (is64(t)) {
      const v = this.w.once(this.w.expr(e));
      return { words: [`${v}.x`, `${v}.y`], kind: t === "int64" ? "i64" : "u64" };
    }
    if (ty === "f32") return one(`bitcast<u32>(${this.w.expr(e)})`, "f32");
    if (ty === "i32") return one(`bitcast<u32>(${this.w.expr(e)})`, "i32");
    if (ty === "bool") return one(`select(0u, 1u, ${this.w.expr(e)})`, "i32");
    if (ty === "f16") return one(`bitcast<u32>(f32(${this.w.expr(e)}))`, "f32");
    return one(this.w.expr(e), "u32");
  }

  /** a print record (an assertion's message where `assertion`): the words it stores (returns the local holding its first argument word) */
  private record(format: Expr, args: readonly Expr[], assertion = false): string {
    this.w.usesStatus = true;
    const parts = args.map((a) => this.printArg(a));
    const words = parts.flatMap((p) => p.words);
    const site = this.w.prints.push({ format: this.stringIndex(format), args: parts.map((p) => p.kind), ...(assertion ? { assertion } : {}) }) - 1;
    const at = this.w.temp();
    this.w.line(`let ${at} = nb_record(${site}u, ${PRINT_HEADER + words.length}u);`);
    if (words.length) {
      this.w.line(`if (${at} != 0u) {`);
      this.w.nested(() => words.forEach((word, k) => this.w.line(`atomicStore(&nb_status[${at} + ${k}u], ${word});`)));
      this.w.line("}");
    }
    return at;
  }

  /** debug console.assert: unless cond, its message as a print record, named by the status word; the thread stops */
  private assert(e: IntrinsicExpr): void {
    const [cond, format, ...ids] = e.args;
    this.w.line(`if (!(${this.w.expr(cond!)})) {`);
    this.w.nested(() => {
      const at = this.record(format!, ids, true);
      const lost = FAULT_ASSERT + 0x3fffffff;
      this.w.line(`_ = nb_claim(select(${lost >>> 0}u, ${FAULT_ASSERT}u | (${at} - ${STATUS_WORDS.printStart + PRINT_HEADER}u), ${at} != 0u));`);
      this.w.line("return;");
    });
    this.w.line("}");
  }

  // ------------------------------------------------------------------ values

  value(e: IntrinsicExpr): string {
    const why = UNSUPPORTED_INTRINSIC[e.name];
    if (why) throw this.w.unsupported(INTRINSICS[e.name].spelling, why, e.loc);
    const fast = FAST_MATH[e.name];
    if (fast) return fast(e.args.map((a) => this.w.expr(a)));
    switch (e.name) {
      case "syncthreadsCount": case "syncthreadsAnd": case "syncthreadsOr": return this.reducingBarrier(e);
      case "activemask": return "subgroupBallot(true).x";
      case "lanemaskLt": this.needWarp(e); return "((1u << nb_lane) - 1u)";
      case "ballotSync": this.checkMask(e); return `subgroupBallot(${this.w.expr(e.args[1]!)}).x`;
      case "allSync": this.checkMask(e); return `subgroupAll(${this.w.expr(e.args[1]!)})`;
      case "anySync": this.checkMask(e); return `subgroupAny(${this.w.expr(e.args[1]!)})`;
      case "eqSync": {
        this.checkMask(e);
        const p = this.w.once(this.w.expr(e.args[1]!));
        const all = this.w.temp(), any = this.w.temp();
        this.w.line(`let ${all} = subgroupAll(${p});`);
        this.w.line(`let ${any} = subgroupAny(${p});`);
        return `(${all} || !${any})`;
      }
      case "shflSync": case "shflUpSync": case "shflDownSync": case "shflXorSync": return this.shuffle(e);
      case "matchAnySync": this.checkMask(e); return this.matchMask(e.args[1]!);
      case "matchAllSync": throw new InternalCompilerError("webgpu: matchAllSync is a tuple", e.loc);
      case "cstring": throw new InternalCompilerError("webgpu: a cstring outside console.log", e.loc);
      case "subarray": case "view": throw new InternalCompilerError(`webgpu: '${e.name}' outside the assignment of a view`, e.loc);
      default: throw new InternalCompilerError(`webgpu: intrinsic '${e.name}' as a value`, e.loc);
    }
  }

  tuple(e: IntrinsicExpr): TupleValue {
    if (e.name !== "matchAllSync") throw new InternalCompilerError(`webgpu: a tuple from intrinsic '${e.name}'`, e.loc);
    this.checkMask(e);
    const m = this.w.once(this.matchMask(e.args[1]!));
    const active = this.w.temp();
    this.w.line(`let ${active} = subgroupBallot(true).x;`);
    return [`select(0u, ${m}, ${m} == ${active})`, `(${m} == ${active})`];
  }

  private needWarp(e: IntrinsicExpr): void {
    if (!this.warpSize) throw this.w.unsupported(INTRINSICS[e.name].spelling, `${this.w.target.adapterName} lacks the subgroups feature`, e.loc);
  }

  /** a constant full-warp mask on an adapter whose subgroups are not 32 lanes is a compile error */
  private checkMask(e: IntrinsicExpr): void {
    this.needWarp(e);
    if (this.warpSize === 32) return;
    const [mask, , lane] = e.args;
    const spelling = INTRINSICS[e.name].spelling;
    const assumes = (what: string) => this.w.unsupported(`${spelling} with ${what}`,
      `${spelling} with ${what} assumes a warp of 32 threads; ${this.w.target.adapterName}'s subgroups have ${this.warpSize}: use cuda.activemask() / cuda.warpsize`, e.loc);
    if (mask?.k === "const" && (Number(mask.value) >>> 0) === 0xffffffff) throw assumes("the full mask");
    // a constant lane, delta or lane mask beyond the subgroup (shflDownSync(m, v, 16))
    if (SHUFFLES.has(e.name) && lane?.k === "const" && Number(lane.value) >= this.warpSize) throw assumes(`the constant ${Number(lane.value)}`);
  }

  /** lanes whose value's bits equal this lane's, among the active ones */
  private matchMask(value: Expr): string {
    const t = value.type as ScalarName;
    this.w.scalarType(t, value.loc);
    const bits = this.w.once(toBits(t, this.w.expr(value)));
    const m = this.w.temp();
    // a 64-bit value is two words, equal when both are
    const same = `subgroupShuffle(${bits}, nb_l) == ${bits}`;
    this.w.line(`var ${m} = 0u;`);
    this.w.line(`for (var nb_l = 0u; nb_l < ${this.warpSize}u; nb_l++) { if (${is64(t) ? `all(${same})` : same}) { ${m} = ${m} | (1u << nb_l); } }`);
    return `(${m} & subgroupBallot(true).x)`;
  }

  private shuffle(e: IntrinsicExpr): string {
    this.checkMask(e);
    const t = e.type as ScalarName;
    const ty = this.w.scalarType(t, e.loc);
    const raw = this.w.once(this.w.expr(e.args[1]!));
    // bools travel as u32 words
    const v = ty === "bool" ? `select(0u, 1u, ${raw})` : raw;
    const l = this.w.once(`bitcast<u32>(${this.w.expr(e.args[2]!)})`);
    const n = this.warpSize;
    let src: string, valid: string;
    switch (e.name) {
      case "shflSync": src = `(${l} & ${n - 1}u)`; valid = "true"; break;
      case "shflUpSync": src = `((nb_lane - ${l}) & ${n - 1}u)`; valid = `(nb_lane >= ${l})`; break;
      case "shflDownSync": src = `((nb_lane + ${l}) & ${n - 1}u)`; valid = `(nb_lane + ${l} < ${n}u)`; break;
      default: src = `((nb_lane ^ ${l}) & ${n - 1}u)`; valid = `((nb_lane ^ ${l}) < ${n}u)`; break;
    }
    const shuffled = this.w.temp();
    this.w.line(`let ${shuffled} = subgroupShuffle(${v}, ${src});`);
    const out = valid === "true" ? shuffled : `select(${v}, ${shuffled}, ${valid})`;
    return ty === "bool" ? `(${out} != 0u)` : out;
  }

  private reducingBarrier(e: IntrinsicExpr): string {
    if (!this.reducing) {
      this.reducing = true;
      this.w.declare("var<workgroup> nb_red: atomic<u32>;");
    }
    const p = this.w.once(this.w.expr(e.args[0]!));
    this.w.line(`workgroupBarrier(); ${this.w.place()}`);
    this.w.line(`if (${p}) { atomicAdd(&nb_red, 1u); }`);
    this.barrier();
    const n = this.w.temp();
    this.w.line(`let ${n} = atomicLoad(&nb_red);`);
    this.w.line(`workgroupBarrier(); ${this.w.place()}`);
    this.w.line("if (all(nb_lid == vec3<u32>(0u))) { atomicStore(&nb_red, 0u); }");
    const reduction = INTRINSICS[e.name].reduction;
    if (reduction === "count") return `i32(${n})`;
    if (reduction === "and") return `select(0i, 1i, ${n} == BLOCK_X * BLOCK_Y * BLOCK_Z)`;
    return `select(0i, 1i, ${n} != 0u)`;
  }

  // ------------------------------------------------------------------ atomics

  atomic(e: AtomicExpr): string {
    const { view, place } = this.w.atomicTarget(e.array, e.index, e.loc);
    const v = this.w.once(this.w.expr(e.value));
    const cmp = e.compare ? this.w.once(this.w.expr(e.compare)) : undefined;
    const update = (root: Root) => this.atomicOn(root, place(root), e.op, v, cmp);
    if (view.roots.length === 1) return update(view.roots[0]!);
    const old = this.w.temp();
    this.w.line(`var ${old}: ${WGSL_SCALAR[view.roots[0]!.dtype]!};`);
    this.w.eachRoot(view, (root) => this.w.line(`${old} = ${update(root)};`));
    return old;
  }

  private atomicOn(root: Root, place: string, op: AtomicOp, v: string, cmp: string | undefined): string {
    const t = root.dtype;
    const native = NATIVE_ATOMIC[op];
    if (root.form === "value" && native) return `${native}(${place}, ${v})`;
    if (root.form === "bits" && op === "exch") return fromBits(t, `atomicExchange(${place}, ${toBits(t, v)})`);
    return this.casLoop(root, place, t, WGSL_SCALAR[t]!, op, v, cmp);
  }

  /**
   * A read-modify-write as a compare-exchange loop on the element's word: the old value, the new one
   * from it (`undefined`: nothing is stored); returns the old value.
   */
  private casLoop(root: Root, place: string, t: ScalarName, ty: string, op: AtomicOp, v: string, cmp: string | undefined): string {
    const word = this.w.temp(), o = this.w.temp(), r = this.w.temp();
    const wordTy = root.form === "bits" ? "u32" : ty;
    const value = (x: string) => (root.form === "bits" ? fromBits(t, x) : x);
    const raw = (x: string) => (root.form === "bits" ? toBits(t, x) : x);
    let next = this.combine(op, t, ty, o, v, cmp === undefined ? undefined : raw(cmp), word);
    // float32 add and sub on global memory flush subnormals, as the GPU's red.global.add.f32 does
    if (root.space === "global" && t === "float32" && (op === "add" || op === "sub")) {
      const ftz = this.w.helper("ftz", "f32");
      next = { value: `${ftz}(${ftz}(${o}) ${op === "add" ? "+" : "-"} ${ftz}(${v}))` };
    }
    this.w.line(`var ${word}: ${wordTy} = atomicLoad(${place});`);
    this.w.line("loop {");
    this.w.nested(() => {
      this.w.line(`let ${o} = ${value(word)};`);
      if (next.stores) this.w.line(`if (!(${next.stores})) { break; }`);
      this.w.line(`let ${r} = atomicCompareExchangeWeak(${place}, ${word}, ${raw(next.value)});`);
      this.w.line(`if (${r}.exchanged) { break; }`);
      this.w.line(`${word} = ${r}.old_value;`);
    });
    this.w.line("}");
    return value(word);
  }

  /** the new value of an update from old `o` and operand `v`, and when it is stored at all */
  private combine(op: AtomicOp, t: ScalarName, ty: string, o: string, v: string, cmpRaw: string | undefined, word: string): { value: string; stores?: string } {
    const float = isFloat(t);
    const nan = (x: string) => this.w.helper("isnan", ty) + `(${x})`;
    switch (op) {
      case "add": return { value: `(${o} + ${v})` };
      case "sub": return { value: `(${o} - ${v})` };
      case "max": case "min":
        if (!float) return { value: `${op}(${o}, ${v})` };
        return { value: `${this.w.helper(op, ty)}(${o}, ${v})`, stores: `!(${nan(o)} || ${nan(v)})` };
      case "nanmax": case "nanmin": {
        const m = float ? `${this.w.helper(op === "nanmax" ? "max" : "min", ty)}(${o}, ${v})` : `${op.slice(3)}(${o}, ${v})`;
        return { value: float ? `select(select(${m}, ${o}, ${nan(v)}), ${v}, ${nan(o)})` : m };
      }
      case "inc": return { value: `select(${o} + 1u, 0u, ${o} >= ${v})` };
      case "dec": return { value: `select(${o} - 1u, ${v}, ${o} == 0u || ${o} > ${v})` };
      case "cas": return { value: v, stores: `${word} == ${cmpRaw}` };
      case "exch": return { value: v };
      default: throw new InternalCompilerError(`webgpu: atomic ${op} on ${t}`);
    }
  }
}

function walk(body: readonly Stmt[], visit: (e: Expr) => void): void {
  walkStmts(body, (s) => stmtExprs(s).forEach(visit));
}
