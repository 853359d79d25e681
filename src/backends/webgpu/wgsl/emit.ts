// Typed IR → WGSL: the module (parameter block, bindings, workgroup and constant arrays, helpers) and
// the walk over statements and expressions. Operators come from the tables of scalar.ts, element
// access from memory.ts, intrinsics from intrinsics.ts; layout.ts is what the runtime reads.
//
// Control flow: WGSL's `break` and `continue` reach only the innermost loop, and WGSL has no labelled
// blocks. A jump to an outer loop or out of a block (the inliner's `return`s are such) sets `nb_jump`
// to its code; the statements after it in each enclosing list run only while `nb_jump == 0`, and the
// loop or block it names clears it (a loop it passes on the way breaks). In a kernel with barriers,
// `return` is such a jump out of the kernel's body: WGSL wants every thread at each barrier, so a thread
// that returned skips what has effects but not the barriers (see `block`). Loops are `loop { …
// continuing { update; break if … } }`. Every local is a `var` declared at the top (IR names are unique).
// Float32 locals are set through an opaque zero, which stops the device compiler reassociating float
// arithmetic across them (`rounded`).
//
// Expressions that need statements (atomic loops, prints, warp votes, bounds checks) put them on the
// lines before the statement being emitted; a short-circuit or lazy operand with such statements is
// lowered to an `if`.
//
// One file over 600 lines: one Emitter, whose statement, expression and intrinsic cases share its
// record of names, arrays and module declarations.

import { isArrayType, isFloat, isScalarType, isSigned, isTupleType, isUnsigned, type ArrayType, type ScalarName, type Type } from "../../../dtypes.js";
import type { BinaryExpr, CastExpr, CompareExpr, Expr, FunctionIR, IntrinsicExpr, Loc, Stmt, UnaryExpr } from "../../../compiler/ir.js";
import { assignedNames, exprHas, forEachExpr, stmtExprs, walkStmts } from "../../../compiler/walk.js";
import { INTRINSICS } from "../../../compiler/intrinsics.js";
import { cStrides, product } from "../../../ndarray.js";
import { CompileError, InternalCompilerError } from "../../../errors.js";
import {
  BINARY_BOOL, BINARY_FLOAT, BINARY_INT, bitsOf, HELPER_NEEDS, HELPERS, literal, UNARY_FLOAT,
  UNSUPPORTED_DTYPE, unsignedBits, WGSL_SCALAR, WIDENING, wrap, zeroOf, type OpText,
} from "./scalar.js";
import { atomicPlace, formOf, readElement, wordType, writeElement, type ArrayView, type Root } from "./memory.js";
import {
  STATUS_TAIL, STATUS_WORDS,
  type ArrayBinding, type CheckedAccess, type ParamField, type PrintSite, type SourcePlace, type WgslKernel, type WgslLaunchShape, type WgslTarget,
} from "./layout.js";
import { WgslIntrinsics } from "./intrinsics.js";
import { BINARY_64, COMPARE_64, HELPER64_NEEDS, HELPERS64, helperFor, is64, sign64, UNARY_64, V64 } from "./int64.js";
import type { TupleValue, WgslContext } from "./context.js";

/** print area words of a kernel that prints: 1 MiB, as CUDA's default printf buffer */
const PRINT_WORDS = 1 << 18;

/** WGSL's keywords and reserved words (an IR name equal to one gets a suffix) */
const RESERVED = new Set(`alias break case const const_assert continue continuing default diagnostic discard else enable false fn for
if let loop override requires return struct switch true var while NULL Self abstract active alignas alignof as asm asm_fragment
async attribute auto await become cast catch class co_await co_return co_yield coherent column_major common compile
compile_fragment concept const_cast consteval constexpr constinit crate debugger decltype delete demote demote_to_helper do
dynamic_cast enum explicit export extends extern external fallthrough filter final finally friend from fxgroup get goto
groupshared highp impl implements import inline instanceof interface layout lowp macro macro_rules match mediump meta mod
module move mut mutable namespace new nil noexcept noinline nointerpolation non_coherent noncoherent noperspective null
nullptr of operator package packoffset partition pass patch pixelfragment precise precision premerge priv protected pub
public readonly ref regardless register reinterpret_cast require resource restrict self set shared sizeof smooth snorm
static static_assert static_cast std subroutine super target template this thread_local throw trait try type typedef
typeid typename typeof union unless unorm unsafe unsized use using varying virtual volatile wgsl where with writeonly yield
bool f16 f32 i32 u32 vec2 vec3 vec4 array atomic ptr sampler texture_2d mat2x2 mat3x3 mat4x4 params main
all any select min max abs clamp floor ceil trunc round sqrt fma exp2 log2 sin cos tanh sign bitcast countOneBits
countLeadingZeros firstTrailingBit reverseBits extractBits arrayLength workgroupBarrier storageBarrier atomicLoad atomicStore
atomicAdd atomicSub atomicMax atomicMin atomicAnd atomicOr atomicXor atomicExchange atomicCompareExchangeWeak subgroupBallot
subgroupShuffle subgroupAll subgroupAny BLOCK_X BLOCK_Y BLOCK_Z DYNAMIC_SHARED_BYTES DYNAMIC_SHARED_WORDS Params`.split(/\s+/));


interface JumpTarget {
  readonly label: string;
  readonly kind: "loop" | "block";
  /** its codes in nb_jump: break, continue */
  readonly code: number;
}

/**
 * Compiles a kernel to WGSL for an adapter; a construct outside the WebGPU subset is a CompileError.
 * `shape`: for launches whose array arguments share buffers (one binding per group).
 */
export function emitWgsl(ir: FunctionIR, target: WgslTarget, shape: WgslLaunchShape = {}): WgslKernel {
  if (ir.kind !== "kernel") throw new InternalCompilerError(`emitWgsl: '${ir.name}' is a device function; only kernels are emitted (device functions are inlined)`);
  return new WgslEmitter(ir, target, shape.sharedBuffers ?? []).emit();
}

export class WgslEmitter implements WgslContext {
  readonly ir: FunctionIR;
  readonly target: WgslTarget;
  private readonly features = new Set<string>();
  private readonly helpers = new Map<string, string>();
  private readonly moduleDecls: string[] = [];
  private readonly fields: ParamField[] = [];
  private readonly fieldDecls: string[] = [];
  private readonly bindings: ArrayBinding[] = [];
  private readonly ids = new Map<string, string>();
  private readonly usedIds = new Set<string>();
  /** locals declared at the top of the entry point */
  private readonly locals: string[] = [];
  /** statements run first in the entry point (parameter copies) */
  private readonly entry: string[] = [];
  private readonly arrays = new Map<string, ArrayView>();
  private readonly tuples = new Map<string, TupleValue>();
  /** each array name's roots (a local array may be any of several) */
  private readonly rootsOf = new Map<string, Set<string>>();
  private readonly roots = new Map<string, Root>();
  /** names of arrays the kernel writes (stores and atomics), through any alias */
  private readonly written = new Set<string>();
  private readonly allocs = new Map<string, Extract<Stmt, { k: "alloc" }>>();
  private lines: string[] = [];
  private depth = 1;
  private temps = 0;
  private loc: Loc | undefined;
  private readonly jumpStack: JumpTarget[] = [];
  private jumpCodes = 0;
  /** labels of jumps set in nb_jump and not yet taken */
  private pending = new Set<string>();
  /** how many jumps through nb_jump were emitted so far */
  private jumpsSet = 0;
  /** the list being emitted may start with a jump pending: each statement runs only while nb_jump == 0 */
  private guarding = false;
  readonly prints: PrintSite[] = [];
  readonly accesses: CheckedAccess[] = [];
  private readonly places: SourcePlace[] = [];
  private staticSharedBytes = 0;
  private dynamicShared = false;
  private readonly intrinsics: WgslIntrinsics;
  /** the kernel uses the status buffer (print, throw, debug checks) */
  usesStatus = false;
  /** threads may read global memory that others wrote: barriers order storage too */
  exchangesGlobal = false;

  /** each array parameter of a shared buffer: its group (launch argument indices, the binding's first) */
  private readonly groupOf = new Map<number, readonly number[]>();

  constructor(ir: FunctionIR, target: WgslTarget, sharedBuffers: readonly (readonly number[])[]) {
    this.ir = ir;
    this.target = target;
    this.intrinsics = new WgslIntrinsics(this);
    for (const group of sharedBuffers) if (group.length > 1) for (const arg of group) this.groupOf.set(arg, group);
  }

  // ------------------------------------------------------------------ errors and names

  /** the subset error for `construct` at `loc`: "X is not available on the webgpu target (why)" */
  unsupported(construct: string, why: string, loc = this.loc): CompileError {
    // inside an inlined device function or the math library: shown at the kernel's own statement
    const inlined = loc?.source !== undefined && this.kernelLoc !== undefined;
    const at = inlined ? this.kernelLoc : loc;
    const message = `${construct} is not available on the webgpu target (${why})${inlined ? ", in a device function or math library function this statement calls" : ""}`;
    return new CompileError(this.ir.name, at?.source ?? this.ir.source, [{ message, line: at?.line ?? 1, column: at?.column ?? 0 }], at?.source ? undefined : this.ir.origin);
  }

  /** the place of the last statement of the kernel's own text passed */
  private kernelLoc: Loc | undefined;

  /** the comment that ends a barrier's line: the index of the place in the source it comes from */
  place(): string {
    const loc = this.loc;
    return `// numbats: place ${this.places.push({ line: loc?.line ?? 1, column: loc?.column ?? 0, ...(loc?.source ? { source: loc.source } : {}) }) - 1}`;
  }

  private at(loc: Loc | undefined): void {
    if (!loc) return;
    this.loc = loc;
    if (loc.source === undefined) this.kernelLoc = loc;
  }

  /** the WGSL register type of dtype t, or its subset error */
  scalarType(t: ScalarName, loc = this.loc): string {
    const wgsl = WGSL_SCALAR[t];
    if (wgsl && (t !== "float16" || this.target.shaderF16)) {
      if (t === "float16") this.features.add("shader-f16");
      return wgsl;
    }
    throw this.unsupported(t, UNSUPPORTED_DTYPE[t] ?? "no WGSL type holds it", loc);
  }

  private typeOf(t: Type, loc = this.loc): string {
    if (isScalarType(t)) return this.scalarType(t, loc);
    throw new InternalCompilerError(`webgpu: a value of type ${JSON.stringify(t)} where a scalar was expected`, loc);
  }

  ident(name: string): string {
    const known = this.ids.get(name);
    if (known) return known;
    let base = name.replace(/[^A-Za-z0-9_]/g, "_").replace(/^_+/, "");
    if (!/^[A-Za-z]/.test(base)) base = `v${base}`;
    if (base.startsWith("nb_")) base = `u${base}`;
    let id = base;
    for (let i = 1; RESERVED.has(id) || this.usedIds.has(id); i++) id = `${base}_${i}`;
    this.ids.set(name, id);
    this.usedIds.add(id);
    return id;
  }

  temp(): string {
    return `nb_t${this.temps++}`;
  }

  useFeature(f: string): void {
    this.features.add(f);
  }

  /** helper `name` for WGSL type `ty` (with the helpers it calls), emitted once; returns its function name */
  helper(name: string, ty: string): string {
    const key = `${name}:${ty}`;
    if (!this.helpers.has(key)) {
      for (const need of HELPER_NEEDS[key] ?? []) { const [n, t] = need.split(":"); this.helper(n!, t!); }
      this.helpers.set(key, HELPERS[name]!(ty));
    }
    return `nb_${name}_${ty}`;
  }

  /** a 64-bit integer helper of int64.ts (with the helpers it calls), emitted once; returns its function name */
  helper64(name: string): string {
    const key = `${name}:64`;
    if (!this.helpers.has(key)) {
      for (const need of HELPER64_NEEDS[name] ?? []) {
        if (need.includes(":")) { const [n, t] = need.split(":"); this.helper(n!, t!); } else this.helper64(need);
      }
      this.helpers.set(key, HELPERS64[name]!);
    }
    return `nb_${name}`;
  }

  /** a module-scope declaration, once */
  declare(text: string): void {
    if (!this.moduleDecls.includes(text)) this.moduleDecls.push(text);
  }

  // ------------------------------------------------------------------ lines

  line(s: string): void {
    this.lines.push("  ".repeat(this.depth) + s);
  }

  nested(f: () => void): void {
    this.depth++;
    f();
    this.depth--;
  }

  /** the lines `f` emits, apart (and the value it returns) */
  captured<T>(f: () => T): [T, string[]] {
    const saved = this.lines;
    this.lines = [];
    const v = f();
    const out = this.lines;
    this.lines = saved;
    return [v, out];
  }

  /** a value evaluated once into a `let`, when it is not already a plain name or literal */
  once(x: string): string {
    if (/^[A-Za-z_][A-Za-z0-9_.]*$/.test(x) || /^\(?-?[0-9][0-9a-fx.e+-]*[iuhf]?\)?$/.test(x)) return x;
    const t = this.temp();
    this.line(`let ${t} = ${x};`);
    return t;
  }

  // ------------------------------------------------------------------ the module

  emit(): WgslKernel {
    const ir = this.ir;
    if (ir.features.gridSync) throw this.unsupported("cuda.cg.thisGrid().sync()", "WebGPU has no grid-wide synchronisation", this.firstLoc((e) => e.k === "intrinsic" && e.name === "gridSync"));
    walkStmts(ir.body, (s) => { if (s.k === "alloc") this.allocs.set(s.name, s); });
    this.findRoots();
    ir.params.forEach((p, i) => this.bindParam(p.name, p.type, i));
    ir.constArrays.forEach((c) => this.bindConst(c.name, c.type, c.shape, c.data));
    this.declareAllocsAndLocals();
    this.intrinsics.prepare();
    this.depth = 1;
    if (ir.features.barriers) this.pushTarget(KERNEL_LABEL, "block");
    this.block(ir.body);
    const body = this.lines;
    const entryName = this.ident(`k_${ir.name}`);
    const builtins = [
      "@builtin(local_invocation_id) nb_lid: vec3<u32>", "@builtin(workgroup_id) nb_wid: vec3<u32>", "@builtin(num_workgroups) nb_nwg: vec3<u32>",
      ...this.intrinsics.builtins(),
    ];
    const code = [
      `// ${ir.name}: WGSL from numbats`,
      ...this.enables(),
      "",
      "override BLOCK_X: u32 = 1u;",
      "override BLOCK_Y: u32 = 1u;",
      "override BLOCK_Z: u32 = 1u;",
      // the words hold the bytes (a WGSL array has at least one element); each view has floor(bytes / size) elements, as on CUDA
      ...(this.dynamicShared ? ["override DYNAMIC_SHARED_BYTES: u32 = 0u;", "override DYNAMIC_SHARED_WORDS: u32 = max(1u, (DYNAMIC_SHARED_BYTES + 3u) / 4u);"] : []),
      "",
      "struct Params {",
      ...(this.fieldDecls.length ? this.fieldDecls.map((f) => `  ${f},`) : ["  nb_unused: u32,"]),
      "}",
      "@group(0) @binding(0) var<uniform> params: Params;",
      "@group(0) @binding(1) var<storage, read_write> nb_status: array<atomic<u32>>;",
      ...this.moduleDecls,
      "",
      ...this.helpers.values(),
      ...this.intrinsics.moduleHelpers(),
      "",
      "@compute @workgroup_size(BLOCK_X, BLOCK_Y, BLOCK_Z)",
      `fn ${entryName}(${builtins.join(", ")}) {`,
      ...this.locals.map((l) => `  ${l}`),
      ...(this.helpers.has("opaque:f32") ? ["  nb_zero = nb_nwg.x >> 31u;"] : []),
      ...this.intrinsics.entryLines().map((l) => `  ${l}`),
      ...this.entry.map((l) => `  ${l}`),
      ...body,
      "}",
      "",
    ].join("\n");
    const printWords = this.prints.length ? PRINT_WORDS : 0;
    return {
      code: withBitsHelper(code).replaceAll("NB_PRINT_END", `${STATUS_WORDS.printStart + printWords}u`),
      entryPoint: entryName,
      params: this.fields,
      arrays: this.bindings,
      staticSharedBytes: this.staticSharedBytes,
      dynamicShared: this.dynamicShared,
      features: [...this.features].sort(),
      printWords,
      statusWords: STATUS_WORDS.printStart + printWords + STATUS_TAIL.words,
      prints: this.prints,
      accesses: this.accesses,
      places: this.places,
    };
  }

  private enables(): string[] {
    const out: string[] = [];
    if (this.features.has("shader-f16")) out.push("enable f16;");
    if (this.features.has("subgroups")) out.push("enable subgroups;", "diagnostic(off, subgroup_uniformity);");
    return out;
  }

  private firstLoc(p: (e: Expr) => boolean): Loc | undefined {
    let found: Loc | undefined;
    walkStmts(this.ir.body, (s) => stmtExprs(s).forEach((e) => forEachExpr(e, (x) => { if (!found && p(x)) found = x.loc ?? s.loc; })));
    return found;
  }

  // ------------------------------------------------------------------ parameters

  private field(name: string, wgsl: string, f: ParamField): string {
    const id = this.ident(`${name}`);
    this.fieldDecls.push(`${id}: ${wgsl}`);
    this.fields.push(f);
    return `params.${id}`;
  }

  /** a value field's WGSL member type, and the register value read from it */
  private valueField(name: string, t: ScalarName, arg: number, item?: number[]): string {
    const reg = this.scalarType(t);
    if (reg === V64) {
      // two u32 fields (a vec2<u32> member would be 8-byte aligned): the low word, then the high one
      const [lo, hi] = ([0, 1] as const).map((word) => this.field(`${name}_${word ? "hi" : "lo"}`, "u32", { arg, what: "value", dtype: t, word, ...(item ? { item } : {}) }));
      return `${V64}(${lo}, ${hi})`;
    }
    const member = reg === "bool" ? "u32" : reg === "f16" ? "f32" : reg;
    const p = this.field(name, member, { arg, what: "value", dtype: t, ...(item ? { item } : {}) });
    return reg === "bool" ? `(${p} != 0u)` : reg === "f16" ? `f16(${p})` : p;
  }

  private tupleParam(name: string, t: Type, arg: number, path: number[]): TupleValue | string {
    if (isScalarType(t)) return this.valueField(`${name}_${path.join("_")}`, t, arg, path);
    if (!isTupleType(t)) throw this.unsupported(`a parameter '${name}' of this type`, "only scalars, tuples of scalars and arrays are parameters");
    return t.items.map((it, k) => this.tupleParam(name, it, arg, [...path, k]));
  }

  private bindParam(name: string, t: Type, i: number): void {
    const assigned = assignedNames(this.ir.body).has(name);
    if (isArrayType(t)) {
      this.scalarType(t.dtype);
      const root = this.roots.get(name)!;
      const group = this.groupOf.get(i);
      if (!group || group[0] === i) this.bindArray(root, i, group);
      const id = this.ident(name);
      const off = this.field(`${id}_off`, "i32", { arg: i, what: "offset" });
      const n = Array.from({ length: t.ndim }, (_, k) => this.field(`${id}_n${k}`, "i32", { arg: i, what: "shape", dim: k }));
      // a C-contiguous array's last stride is 1 (as the simulator assumes)
      const s = Array.from({ length: t.ndim }, (_, k) => (t.layout === "C" && k === t.ndim - 1 ? "1i" : this.field(`${id}_s${k}`, "i32", { arg: i, what: "stride", dim: k })));
      const view: ArrayView = { roots: [root], off, n, s };
      if (assigned) this.arrays.set(name, this.viewLocals(name, t, view));
      else this.arrays.set(name, view);
      return;
    }
    if (isTupleType(t)) {
      const v = this.tupleParam(name, t, i, []) as TupleValue;
      this.tuples.set(name, assigned ? this.tupleLocals(name, t, v) : v);
      return;
    }
    if (!isScalarType(t)) throw this.unsupported(`a parameter '${name}' of this type`, "only scalars, tuples of scalars and arrays are parameters");
    const p = this.valueField(name, t, i);
    if (assigned) {
      const id = this.ident(`${name}_local`);
      this.locals.push(`var ${id}: ${this.scalarType(t)} = ${p};`);
      this.ids.set(name, id);
    } else {
      this.ids.set(name, `(${p})`);
    }
  }

  /** the storage binding of array argument i (with the other arguments of its group, which view the same words) */
  private bindArray(root: Root, i: number, group: readonly number[] | undefined): void {
    const binding = 2 + this.bindings.length;
    // the status words take one storage buffer too
    const most = this.target.maxStorageBuffers - 1;
    if (binding - 2 >= most) {
      throw this.unsupported(`a kernel with more than ${most} arrays (parameters, record fields and env arrays)`,
        `${this.target.adapterName} binds at most ${this.target.maxStorageBuffers} storage buffers to a kernel, one of them numbats' status words`);
    }
    const members = (group ?? [i]).map((k) => this.ir.params[k]!.name);
    const readOnly = !members.some((m) => this.written.has(m));
    this.bindings.push({ arg: i, binding, readOnly, ...(group ? { args: group } : {}) });
    this.declare(`@group(0) @binding(${binding}) var<storage, ${readOnly ? "read" : "read_write"}> ${root.id}: array<${wordType(root)}>;`);
  }

  /** local variables holding an array view, set to `init` when given */
  private viewLocals(name: string, t: ArrayType, init?: ArrayView): ArrayView {
    const id = this.ident(name);
    const roots = [...this.rootsOf.get(name)!].map((r) => this.roots.get(r)!);
    if (roots.length > 1) this.locals.push(`var ${id}_sel: i32;`);
    const v: ArrayView = {
      roots, ...(roots.length > 1 ? { sel: `${id}_sel` } : {}), off: `${id}_off`, n: Array.from({ length: t.ndim }, (_, k) => `${id}_n${k}`), s: Array.from({ length: t.ndim }, (_, k) => `${id}_s${k}`),
    };
    for (const x of [v.off, ...v.n, ...v.s]) this.locals.push(`var ${x}: i32;`);
    if (init) this.entry.push(...this.copyView(v, init));
    return v;
  }

  private copyView(dst: ArrayView, src: ArrayView): string[] {
    const sel = dst.sel ? [[dst.sel, selectionOf(dst, src)]] : [];
    return [...sel, [dst.off, src.off], ...dst.n.map((n, k) => [n, src.n[k]]), ...dst.s.map((s, k) => [s, src.s[k]])].map(([d, s]) => `${d} = ${s};`);
  }

  private tupleLocals(name: string, t: Type, init?: TupleValue): TupleValue {
    const make = (tt: Type, path: string, v: TupleValue | string | undefined): TupleValue | string => {
      if (isTupleType(tt)) return tt.items.map((it, k) => make(it, `${path}_${k}`, (v as TupleValue | undefined)?.[k]));
      const id = this.ident(path);
      this.locals.push(`var ${id}: ${this.typeOf(tt)};`);
      if (v !== undefined) this.entry.push(`${id} = ${v as string};`);
      return id;
    };
    return make(t, name, init) as TupleValue;
  }

  private bindConst(name: string, t: ArrayType, shape: readonly number[], data: ArrayBufferView): void {
    const root = this.roots.get(name)!;
    const ty = this.scalarType(t.dtype);
    const Ctor = (data.constructor as { new(b: ArrayBufferLike, o: number, n: number): ArrayLike<number | bigint> });
    const values = Array.from(new Ctor(data.buffer, data.byteOffset, product(shape)), (v) => literal(t.dtype, typeof v === "bigint" ? v : t.dtype === "float16" ? halfValue(v) : v));
    const n = product(shape);
    this.declare(`var<private> ${root.id}: array<${ty}, ${n}> = array<${ty}, ${n}>(${values.join(", ")});`);
    this.arrays.set(name, { roots: [root], off: "0i", n: shape.map((x) => `${x}i`), s: cStrides(shape).map((x) => `${x}i`) });
  }

  // ------------------------------------------------------------------ arrays: roots and views

  /**
   * Which roots each array name may hold (its own for parameters, allocations and constants; for
   * array locals, those of every value assigned to them), which roots are written and updated
   * atomically, and so each root's form.
   */
  private findRoots(): void {
    const own = (name: string) => this.rootsOf.set(name, new Set([name]));
    this.ir.params.forEach((p) => { if (isArrayType(p.type)) own(p.name); });
    this.ir.constArrays.forEach((c) => own(c.name));
    const sources = new Map<string, Expr[]>();
    walkStmts(this.ir.body, (s) => {
      if (s.k === "alloc") own(s.name);
      if ((s.k === "let" || s.k === "assign") && (s.k === "let" ? isArrayType(s.type) : isArrayType(s.value.type))) {
        const v = s.k === "let" ? s.init : s.value;
        if (v) sources.set(s.name, [...(sources.get(s.name) ?? []), v]);
      }
    });
    const rootsOfExpr = (e: Expr): Set<string> => {
      if (e.k === "var") return this.rootsOf.get(e.name) ?? new Set();
      if (e.k === "select") return new Set([...rootsOfExpr(e.a), ...rootsOfExpr(e.b)]);
      if (e.k === "intrinsic" && (e.name === "subarray" || e.name === "view")) return rootsOfExpr(e.args[0]!);
      return new Set();
    };
    for (let changed = true; changed;) {
      changed = false;
      for (const [name, values] of sources) {
        const set = this.rootsOf.get(name) ?? new Set<string>();
        const before = set.size;
        for (const v of values) for (const r of rootsOfExpr(v)) set.add(r);
        this.rootsOf.set(name, set);
        if (set.size !== before) changed = true;
      }
    }
    const atomics = new Set<string>(), read = new Set<string>();
    const mark = (into: Set<string>, e: Expr) => { for (const r of rootsOfExpr(e)) into.add(r); };
    walkStmts(this.ir.body, (s) => {
      if (s.k === "store") mark(this.written, s.array);
      stmtExprs(s).forEach((e) => forEachExpr(e, (x) => {
        if (x.k === "atomic") { mark(atomics, x.array); mark(this.written, x.array); mark(read, x.array); }
        if (x.k === "load") mark(read, x.array);
      }));
    });
    for (const p of this.ir.writtenParams) this.written.add(p);
    const params = new Set(this.ir.params.map((p) => p.name));
    this.exchangesGlobal = [...this.written].some((r) => params.has(r) && read.has(r));
    const dynamicAtomic = [...atomics].some((r) => this.isDynamic(r)) || [...this.written].some((r) => this.isDynamic(r) && bitsOf(this.allocType(r)!.dtype) < 32);
    // the arguments of a shared buffer: one word array, atomic if any member needs it
    const groupNames = (name: string) => {
      const i = this.ir.params.findIndex((p) => p.name === name);
      return (this.groupOf.get(i) ?? []).map((k) => this.ir.params[k]!.name);
    };
    const wordsAtomic = (names: readonly string[]) => names.some((n) => atomics.has(n) || (this.written.has(n) && bitsOf((this.ir.params.find((p) => p.name === n)!.type as ArrayType).dtype) < 32));
    const make = (name: string, t: ArrayType, space: Root["space"]): void => {
      const atomic = atomics.has(name);
      const dynamic = this.isDynamic(name);
      const group = space === "global" ? groupNames(name) : [];
      const form = formOf(t.dtype, space, atomic, dynamic || group.length > 0);
      if (group.length) {
        const id = this.ident(group[0]!);
        this.roots.set(name, { name, id, dtype: t.dtype, space, form, atomic: wordsAtomic(group) });
        return;
      }
      if (atomic && (bitsOf(t.dtype) !== 32)) throw this.unsupported(`an atomic operation on ${t.dtype}`, "WGSL has 32-bit atomics only", this.firstLoc((e) => e.k === "atomic" && e.array.k === "var" && this.rootsOf.get(e.array.name)?.has(name) === true));
      if (atomic && space === "local") throw this.unsupported("an atomic operation on a local array", "WGSL has atomics in storage and workgroup memory only");
      const id = dynamic ? "nb_dyn" : this.ident(name);
      this.roots.set(name, { name, id, dtype: t.dtype, space, form, atomic: dynamic ? dynamicAtomic : atomic || form === "packed" && this.written.has(name) });
    };
    this.ir.params.forEach((p) => { if (isArrayType(p.type)) make(p.name, p.type, "global"); });
    this.ir.constArrays.forEach((c) => make(c.name, c.type, "const"));
    walkStmts(this.ir.body, (s) => { if (s.k === "alloc") make(s.name, s.type, s.type.space === "shared" ? "shared" : "local"); });
  }

  private isDynamic(name: string): boolean {
    const t = this.allocs.get(name);
    return t !== undefined && t.type.space === "shared" && t.shape.length === 1 && t.shape[0] === 0;
  }

  private allocType(name: string): ArrayType | undefined {
    return this.allocs.get(name)?.type;
  }

  private declareAllocsAndLocals(): void {
    walkStmts(this.ir.body, (s) => {
      this.at(s.loc);
      if (s.k === "alloc") this.declareAlloc(s);
      if (s.k === "let") {
        if (isArrayType(s.type)) {
          this.arrays.set(s.name, this.viewLocals(s.name, s.type));
        } else if (isTupleType(s.type)) {
          this.tuples.set(s.name, this.tupleLocals(s.name, s.type));
        } else if (isScalarType(s.type)) {
          this.locals.push(`var ${this.ident(s.name)}: ${this.typeOf(s.type)};`);
        }
      }
    });
  }

  private declareAlloc(s: Extract<Stmt, { k: "alloc" }>): void {
    const root = this.roots.get(s.name)!;
    if (s.type.space === "shared" && this.isDynamic(s.name)) {
      this.dynamicShared = true;
      this.declare(`var<workgroup> nb_dyn: array<${wordType(root)}, DYNAMIC_SHARED_WORDS>;`);
      const n = `(i32(DYNAMIC_SHARED_BYTES) / ${bitsOf(s.type.dtype) / 8}i)`;
      this.arrays.set(s.name, { roots: [root], off: "0i", n: [n], s: ["1i"] });
      return;
    }
    const count = product(s.shape);
    const decl = `array<${wordType(root)}, ${count}>`;
    this.scalarType(s.type.dtype, s.loc);
    if (s.type.space === "shared") {
      this.staticSharedBytes += count * (bitsOf(s.type.dtype) === 64 ? 8 : 4);
      if (this.staticSharedBytes > this.target.maxWorkgroupStorageBytes) {
        throw this.unsupported(`${this.staticSharedBytes} bytes of shared memory`, `${this.target.adapterName} has ${this.target.maxWorkgroupStorageBytes} bytes of workgroup storage (each element of a shared array takes 4 bytes in WGSL, 8 for 64-bit integers)`, s.loc);
      }
      this.declare(`var<workgroup> ${root.id}: ${decl};`);
    } else {
      this.locals.push(`var ${root.id}: ${decl};`);
    }
    this.arrays.set(s.name, { roots: [root], off: "0i", n: s.shape.map((x) => `${x}i`), s: cStrides(s.shape).map((x) => `${x}i`) });
  }

  /** the view an array expression (a variable) denotes */
  arrayOf(e: Expr): ArrayView {
    const a = e.k === "var" ? this.arrays.get(e.name) : undefined;
    if (!a) throw new InternalCompilerError(`webgpu: array expression '${e.k}' where an array variable was expected`, e.loc);
    return a;
  }

  /** dst := the array value e (a variable, a select of arrays, a subarray) */
  private assignArray(dst: ArrayView, e: Expr): void {
    if (e.k === "select") {
      this.line(`if (${this.expr(e.cond)}) {`);
      this.nested(() => this.assignArray(dst, e.a));
      this.line(`} else {`);
      this.nested(() => this.assignArray(dst, e.b));
      this.line(`}`);
      return;
    }
    if (e.k === "intrinsic" && e.name === "view") throw this.unsupported("array.view", "WGSL gives each buffer one element type", e.loc ?? this.loc);
    if (e.k === "intrinsic" && e.name === "subarray") {
      const src = this.arrayOf(e.args[0]!);
      if ((e.args[0]!.type as ArrayType).complex) throw this.unsupported("subarray of a complex array", "not yet in the WGSL target", e.loc);
      const n = this.once(src.n[0]!);
      const bound = (x: Expr) => { const v = this.once(this.expr(x)); return `select(min(${v}, ${n}), max(${n} + ${v}, 0i), ${v} < 0i)`; };
      const begin = this.once(bound(e.args[1]!));
      const end = e.args[2] ? bound(e.args[2]) : n;
      this.line(`${dst.n[0]} = max(${end} - ${begin}, 0i);`);
      this.line(`${dst.off} = ${src.off} + ${begin} * ${src.s[0]};`);
      this.line(`${dst.s[0]} = ${src.s[0]};`);
      return;
    }
    for (const l of this.copyView(dst, this.arrayOf(e))) this.line(l);
  }

  /** the flat element index of a[index…] (debug: bounds-checked, a failure recorded) */
  private elementIndex(a: ArrayView, index: readonly Expr[], loc: Loc | undefined): string {
    const ix = index.map((x) => {
      if (x.type !== "int32" && x.type !== "uint32") this.scalarType(x.type as ScalarName, x.loc ?? loc);
      const v = this.expr(x);
      if (is64(x.type as ScalarName)) return `${this.helper64("index64")}(${v})`;
      return x.type === "uint32" ? `bitcast<i32>(${v})` : v;
    });
    if (!this.ir.options.debug) {
      return [...(a.off === "0i" ? [] : [a.off]), ...ix.map((v, k) => (a.s[k] === "1i" ? `(${v})` : `(${v}) * ${a.s[k]}`))].join(" + ") || "0i";
    }
    const ts = ix.map((v) => this.once(v));
    const ns = a.n.map((n) => this.once(n));
    const site = this.accesses.push({ array: a.roots[0]!.name, ndim: index.length, line: loc?.line ?? 1, column: loc?.column ?? 0, ...(loc?.source ? { source: loc.source } : {}) }) - 1;
    this.usesStatus = true;
    const fault = this.intrinsics.faultHelper();
    const three = (xs: string[]) => [0, 1, 2].map((k) => xs[k] ?? "0i").join(", ");
    this.line(`if (!(${ts.map((t, k) => `u32(${t}) < u32(${ns[k]})`).join(" && ")})) { ${fault}(${site}u, ${three(ts)}, ${three(ns)}); }`);
    return [a.off, ...ts.map((t, k) => `${t} * ${a.s[k]}`)].join(" + ");
  }

  private load(a: ArrayView, index: readonly Expr[], loc: Loc | undefined): string {
    const i = this.elementIndex(a, index, loc);
    if (a.roots.length === 1) return readElement(a.roots[0]!, a.roots[0]!.form === "packed" ? this.once(i) : i);
    // several buffers: read each (out-of-range reads are safe in WGSL), keep the selected one
    const at = this.once(i);
    return a.roots.slice(1).reduce((acc, r, k) => `select(${acc}, ${readElement(r, at)}, ${a.sel} == ${k + 1}i)`, readElement(a.roots[0]!, at));
  }

  /** `f` for each root the array may be (under `if`s on its selector when several) */
  eachRoot(a: ArrayView, f: (root: Root) => void): void {
    if (a.roots.length === 1) { f(a.roots[0]!); return; }
    a.roots.forEach((r, k) => {
      this.line(`${k === 0 ? "" : "} else "}if (${a.sel} == ${k}i) {`);
      this.nested(() => f(r));
    });
    this.line("}");
  }

  /** an atomic update's element: each root it may be in, with the place (`&…`) of the element there */
  atomicTarget(arrayExpr: Expr, index: readonly Expr[], loc: Loc | undefined): { view: ArrayView; place: (root: Root) => string } {
    const a = this.arrayOf(arrayExpr);
    const i = this.once(this.elementIndex(a, index, loc));
    return { view: a, place: (root) => atomicPlace(root, i) };
  }

  // ------------------------------------------------------------------ statements

  /**
   * A statement list. After a statement that may leave a jump pending, the rest runs only while
   * `nb_jump == 0`: in one `if`, or, in a kernel with barriers, statement by statement, the barriers
   * (and the loops and ifs holding them) left outside, so that threads that returned still meet the
   * others at each barrier (WGSL requires a barrier in uniform control flow).
   */
  private block(body: readonly Stmt[]): void {
    let opened = 0;
    let guarding = this.guarding;
    /** the only jump that may be pending is the kernel's return (else: a function's result is still to come) */
    let exitOnly = true;
    /** a jump may have been set since the innermost open guard was tested */
    let recheck = false;
    const open = () => { this.line("if (nb_jump == 0) {"); this.depth++; opened++; };
    const close = () => { for (; opened > 0; opened--) { this.depth--; this.line("}"); } };
    body.forEach((s) => {
      // after a return, the barriers (with the statements holding them) still run, and so may a local
      // set without effects (the thread's locals are dead): outside the guard, it keeps the values that
      // the barriers' loops depend on uniform
      const free = guarding && exitOnly && (holdsBarrier(s) || setsLocalOnly(s, this.ir.options.debug));
      if (free) close();
      else if (guarding && (opened === 0 || recheck)) open();
      recheck = false;
      const before = this.jumpsSet;
      const saved = this.guarding;
      this.guarding = free && holdsBarrier(s); // the lists inside a barrier's statement guard their own statements
      this.stmt(s);
      this.guarding = saved;
      // a jump this statement may leave pending skips the rest of the list
      if (this.jumpsSet > before && this.pending.size > 0 && !endsFlow(s)) {
        guarding = recheck = true;
        exitOnly &&= [...this.pending].every((l) => l === KERNEL_LABEL);
      }
    });
    close();
  }

  private stmt(s: Stmt): void {
    this.at(s.loc);
    switch (s.k) {
      case "let":
      case "assign": {
        const value = s.k === "let" ? s.init : s.value;
        const t = s.k === "let" ? s.type : s.value.type;
        if (isArrayType(t)) { if (value) this.assignArray(this.arrays.get(s.name)!, value); return; }
        if (isTupleType(t)) {
          const dst = this.tuples.get(s.name)!;
          const src = value ? this.tupleOf(value) : undefined;
          this.assignTuple(dst, src, t);
          return;
        }
        const v = value ? this.expr(value) : zeroOf(this.typeOf(t));
        this.line(`${this.ident(s.name)} = ${this.rounded(t, v)};`);
        return;
      }
      case "store": {
        const a = this.arrayOf(s.array);
        const i = this.once(this.elementIndex(a, s.index, s.loc));
        const v = this.once(this.expr(s.value));
        this.eachRoot(a, (root) => { for (const l of writeElement(root, i, v)) this.line(l); });
        return;
      }
      case "expr": {
        const e = s.expr;
        if (e.k === "intrinsic") { this.intrinsics.statement(e); return; }
        const v = this.expr(e);
        if (e.k === "atomic") this.line(`_ = ${v};`);
        return;
      }
      case "if": {
        this.line(`if (${this.expr(s.cond)}) {`);
        this.nested(() => this.block(s.then));
        if (s.else.length) {
          this.line("} else {");
          this.nested(() => this.block(s.else));
        }
        this.line("}");
        return;
      }
      case "loop": return this.loop(s);
      case "block": {
        const target = this.pushTarget(s.label, "block");
        this.block(s.body);
        this.jumpStack.pop();
        if (this.pending.delete(s.label)) this.line(`if (nb_jump == ${target.code}) { nb_jump = 0; }`);
        return;
      }
      case "break":
      case "continue": return this.jump(s.k, s.label);
      case "return":
        // with barriers, a thread that returns stays to meet the others at the barriers after
        if (this.ir.features.barriers) this.jump("break", KERNEL_LABEL);
        else this.line("return;");
        return;
      case "alloc":
        if (s.type.space === "local") this.line(`${this.roots.get(s.name)!.id} = array<${wordType(this.roots.get(s.name)!)}, ${product(s.shape)}>();`);
        return;
    }
  }

  private pushTarget(label: string, kind: JumpTarget["kind"]): JumpTarget {
    if (this.jumpCodes === 0) this.locals.push("var nb_jump: i32;");
    const target = { label, kind, code: 2 * ++this.jumpCodes };
    this.jumpStack.push(target);
    return target;
  }

  private jump(kind: "break" | "continue", label: string): void {
    const innermostLoop = [...this.jumpStack].reverse().find((t) => t.kind === "loop");
    if (innermostLoop?.label === label) { this.line(`${kind};`); return; }
    const target = this.jumpStack.find((t) => t.label === label);
    if (!target) throw new InternalCompilerError(`webgpu: ${kind} to an unknown label '${label}'`, this.loc);
    this.line(`nb_jump = ${target.code + (kind === "continue" ? 1 : 0)};`);
    this.pending.add(label);
    this.jumpsSet++;
  }

  private loop(s: Extract<Stmt, { k: "loop" }>): void {
    const target = this.pushTarget(s.label, "loop");
    const outer = this.pending;
    this.pending = new Set();
    this.line("loop {");
    this.nested(() => {
      if (s.cond && s.testFirst) this.line(`if (!(${this.expr(s.cond)})) { break; }`);
      this.block(s.body);
      if (this.pending.size) {
        const own = this.pending.delete(s.label);
        if (own) this.line(`if (nb_jump == ${target.code + 1}) { nb_jump = 0; } else if (nb_jump == ${target.code}) { nb_jump = 0; break; }`);
        if (this.pending.size) this.line("if (nb_jump != 0) { break; }");
      }
      const testLast = s.cond && !s.testFirst;
      if (s.update.length || testLast) {
        this.line("continuing {");
        this.nested(() => {
          this.block(s.update);
          if (testLast) this.line(`break if !(${this.expr(s.cond!)});`);
        });
        this.line("}");
      }
    });
    this.line("}");
    this.jumpStack.pop();
    for (const l of this.pending) outer.add(l);
    this.pending = outer;
  }

  /**
   * A float32 value stored in a local, through an opaque zero (but for fastmath): lavapipe's and
   * SwiftShader's compilers reassociate float arithmetic (they fold (1 - u) + a, u = 1 + a, to 0),
   * which breaks the math library's exact sums; they cannot see through a local set this way.
   */
  private rounded(t: Type, v: string): string {
    if (t !== "float32" || this.ir.options.fastmath || !/[-+*/]/.test(v)) return v;
    this.helper("opaque", "f32");
    return `nb_opaque(${v})`;
  }

  // ------------------------------------------------------------------ tuples

  tupleOf(e: Expr): TupleValue {
    switch (e.k) {
      case "var": {
        const t = this.tuples.get(e.name);
        if (!t) throw new InternalCompilerError(`webgpu: tuple '${e.name}' unknown`, e.loc);
        return t;
      }
      case "tuple": return e.items.map((x) => (isTupleType(x.type) ? this.tupleOf(x) : this.once(this.expr(x))));
      case "tupleGet": return this.tupleOf(e.tuple)[e.index] as TupleValue;
      case "select": {
        const c = this.once(this.expr(e.cond));
        const pick = (a: TupleValue | string, b: TupleValue | string): TupleValue | string =>
          (typeof a === "string" ? `select(${b as string}, ${a}, ${c})` : a.map((x, k) => pick(x, (b as TupleValue)[k]!)));
        return pick(this.tupleOf(e.a), this.tupleOf(e.b)) as TupleValue;
      }
      case "intrinsic": return this.intrinsics.tuple(e);
      default: throw new InternalCompilerError(`webgpu: a tuple from '${e.k}'`, e.loc);
    }
  }

  private assignTuple(dst: TupleValue, src: TupleValue | undefined, t: Type): void {
    if (!isTupleType(t)) return;
    t.items.forEach((it, k) => {
      const d = dst[k]!, v = src?.[k];
      if (typeof d === "string") this.line(`${d} = ${v !== undefined ? (v as string) : zeroOf(this.typeOf(it))};`);
      else this.assignTuple(d, v as TupleValue | undefined, it);
    });
  }

  // ------------------------------------------------------------------ expressions

  expr(e: Expr): string {
    const saved = this.loc;
    if (e.loc) this.loc = e.loc;
    try {
      return this.exprAt(e);
    } finally {
      this.loc = saved;
    }
  }

  private exprAt(e: Expr): string {
    switch (e.k) {
      case "const": this.scalarType(e.type); return literal(e.type, e.value);
      case "var": {
        if (!isScalarType(e.type)) throw new InternalCompilerError(`webgpu: '${e.name}' used as a scalar`, e.loc);
        this.scalarType(e.type);
        return this.ident(e.name);
      }
      case "unary": return this.unary(e);
      case "binary": return this.binary(e);
      case "fma": {
        // WGSL's fma may round twice: exact by emulation, but for fastmath and where the adapter's is fused
        const ty = this.scalarType(e.type);
        const [a, b, c] = [e.a, e.b, e.c].map((x) => this.expr(x));
        if ((this.ir.options.fastmath || (ty === "f32" && this.target.fusedFma)) && !this.roundsHalf(e.type)) return `fma(${a}, ${b}, ${c})`;
        if (ty === "f32") return `${this.helper("fma", "f32")}(${a}, ${b}, ${c})`;
        const odd = `${this.helper("fma_odd", "f32")}(f32(${a}) * f32(${b}), f32(${c}))`;
        return this.roundsHalf(e.type) ? this.toHalf(odd) : `f16(${odd})`;
      }
      case "compare": {
        const op = { lt: "<", le: "<=", gt: ">", ge: ">=", eq: "==", ne: "!=" }[e.op];
        const t = e.a.type as ScalarName;
        if (is64(t)) return this.compare64(e.op, t, this.expr(e.a), this.expr(e.b));
        if (!isFloat(t)) return `(${this.expr(e.a)} ${op} ${this.expr(e.b)})`;
        // NaN tested on the bits: a WGSL compiler may assume that no comparison sees a NaN (and fold v != v)
        const a = this.once(this.expr(e.a)), b = this.once(this.expr(e.b));
        const nan = this.helper("isnan", this.scalarType(t));
        return e.op === "ne" ? `(${nan}(${a}) || ${nan}(${b}) || ${a} != ${b})` : `(!(${nan}(${a}) || ${nan}(${b})) && ${a} ${op} ${b})`;
      }
      case "logical": return this.logical(e.op, e.a, e.b);
      case "select": return this.select(e.cond, e.a, e.b, e.eager === true, e.type);
      case "cast": return this.cast(e);
      case "bitcast": return this.bitcast(e.x, e.type);
      case "words": throw this.unsupported(`Float64 words (${e.op})`, "WGSL has no 64-bit floats");
      case "load": return this.load(this.arrayOf(e.array), e.index, e.loc ?? this.loc);
      case "arrayAttr": {
        const a = this.arrayOf(e.array);
        if (e.attr === "shape") return a.n[e.dim]!;
        if (e.attr === "stride") return a.s[e.dim]!;
        return a.n.length ? `(${a.n.join(" * ")})` : "1i";
      }
      case "special": return this.intrinsics.special(e.reg);
      case "tuple": throw new InternalCompilerError("webgpu: a tuple where a scalar was expected", e.loc);
      case "tupleGet": {
        const v = this.tupleOf(e.tuple)[e.index];
        if (typeof v !== "string") throw new InternalCompilerError("webgpu: a tuple item that is a tuple, where a scalar was expected", e.loc);
        return v;
      }
      case "atomic": return this.intrinsics.atomic(e);
      case "intrinsic": return this.intrinsics.value(e);
      case "call": throw new InternalCompilerError(`webgpu: device function calls must be inlined before the WGSL target (call of '${e.fn.name}')`, e.loc);
      case "external": throw this.unsupported(`a call of '${e.fn.name}', a device function declared with cuda.declareDevice`, "WebGPU cannot link device code compiled elsewhere (run it on the cuda target, or on the simulator with its sim implementation)", e.loc);
    }
  }

  /**
   * An operand evaluated apart: its text, and the statements it needs (if any; an operand with an
   * effect, as an atomic, needs at least an empty list: it must run only when chosen).
   */
  private apart(e: Expr): [string, string[] | undefined] {
    const depth = this.depth;
    const [v, pre] = this.captured(() => { this.depth = depth + 1; const v = this.expr(e); this.depth = depth; return v; });
    return [v, pre.length || exprHas(e, hasEffect) ? pre : undefined];
  }

  private logical(op: "and" | "or", a: Expr, b: Expr): string {
    const x = this.expr(a);
    const [y, pre] = this.apart(b);
    if (!pre) return `(${x} ${op === "and" ? "&&" : "||"} ${y})`;
    const t = this.temp();
    this.line(`var ${t}: bool = ${x};`);
    this.line(`if (${op === "and" ? t : `!${t}`}) {`);
    this.lines.push(...pre);
    this.nested(() => this.line(`${t} = ${y};`));
    this.line("}");
    return t;
  }

  private select(cond: Expr, a: Expr, b: Expr, eager: boolean, type: Type): string {
    const c = this.expr(cond);
    const [x, preA] = this.apart(a);
    const [y, preB] = this.apart(b);
    if (eager || (!preA && !preB)) {
      this.lines.push(...(preA ?? []), ...(preB ?? []));
      return `select(${y}, ${x}, ${c})`;
    }
    const t = this.temp();
    this.line(`var ${t}: ${this.typeOf(type)};`);
    this.line(`if (${c}) {`);
    this.lines.push(...(preA ?? []));
    this.nested(() => this.line(`${t} = ${x};`));
    this.line("} else {");
    this.lines.push(...(preB ?? []));
    this.nested(() => this.line(`${t} = ${y};`));
    this.line("}");
    return t;
  }

  /** float16 results are rounded by the target (the adapter does not round them) */
  private roundsHalf(t: Type): boolean {
    return t === "float16" && this.target.unroundedF16 === true;
  }

  /** a float32 value rounded to float16 on the bits */
  private toHalf(x: string): string {
    return `${this.helper("to_half", "f32")}(${x})`;
  }

  private opText(op: OpText, ty: string, a: string, b: string): string {
    if ("infix" in op) return `(${a} ${op.infix} ${b})`;
    if ("call" in op) return `${op.call}(${a}, ${b})`;
    return `${this.helper(op.helper, ty)}(${a}, ${b})`;
  }

  private binary(e: BinaryExpr): string {
    const t = e.type;
    const ty = this.scalarType(t);
    const a = this.expr(e.a), b = this.expr(e.b);
    const missing = () => new InternalCompilerError(`webgpu: binary '${e.op}' on ${t}`, e.loc);
    if (t === "bool") { const op = BINARY_BOOL[e.op]; if (!op) throw missing(); return this.opText(op, ty, a, b); }
    if (isFloat(t)) {
      const op = BINARY_FLOAT[e.op];
      if (!op) throw missing();
      // float16 on an adapter that does not round it: in float32 (exact, or rounded once harmlessly), rounded here
      return this.roundsHalf(t) ? this.toHalf(this.opText(op, "f32", `f32(${a})`, `f32(${b})`)) : this.opText(op, ty, a, b);
    }
    if (ty === V64) return this.binary64(e.op, t, a, e.b.type === "uint32" ? b : `bitcast<u32>(${b})`, b);
    if (e.op === "shl" || e.op === "shr") {
      const amount = `(${e.b.type === "uint32" ? b : `bitcast<u32>(${b})`} & ${bitsOf(t) - 1}u)`;
      const s = `(${a} ${e.op === "shl" ? "<<" : ">>"} ${amount})`;
      return e.op === "shl" ? wrap(t, s) : s;
    }
    const op = BINARY_INT[e.op];
    if (!op) throw missing();
    const s = this.opText(op, ty, a, b);
    return WIDENING.has(e.op) ? wrap(t, s) : s;
  }

  private unary(e: UnaryExpr): string {
    const t = e.type, src = e.x.type as ScalarName;
    const ty = this.scalarType(t), sty = this.scalarType(src);
    const x = this.expr(e.x);
    if (isFloat(src) && (e.op === "isnan" || e.op === "isinf")) return `${this.helper(e.op, sty)}(${x})`;
    if (isFloat(src) && e.op === "isfinite") return `!(${this.helper("isnan", sty)}(${x}) || ${this.helper("isinf", sty)}(${x}))`;
    if (isFloat(t)) {
      if (e.op === "neg") return `(-${x})`;
      const op = UNARY_FLOAT[e.op];
      if (!op) throw new InternalCompilerError(`webgpu: unary '${e.op}' on ${t}`, e.loc);
      const half = this.roundsHalf(t);
      const [ity, ix] = half ? ["f32", `f32(${x})`] : [ty, x];
      const r = "call" in op ? `${op.call}(${ix})` : `${this.helper((op as { helper: string }).helper, ity)}(${ix})`;
      return half ? this.toHalf(r) : r;
    }
    if (sty === V64) return this.unary64(e, x);
    switch (e.op) {
      case "not": return `(!${x})`;
      case "neg": return wrap(t, isUnsigned(t) ? `(0u - ${x})` : `(-${x})`);
      case "bitnot": return wrap(t, `(~${x})`);
      case "abs": return isUnsigned(t) ? x : wrap(t, `abs(${x})`);
      case "popc": return `i32(countOneBits(${unsignedBits(src, x)}))`;
      case "clz": return `(i32(countLeadingZeros(${unsignedBits(src, x)})) - ${32 - bitsOf(src)}i)`;
      case "ffs": return `(bitcast<i32>(firstTrailingBit(${unsignedBits(src, x)})) + 1i)`;
      case "brev": {
        const r = `(reverseBits(${unsignedBits(src, x)}) >> ${32 - bitsOf(t)}u)`;
        return isSigned(t) ? wrap(t, `bitcast<i32>(${r})`) : r;
      }
      default: throw new InternalCompilerError(`webgpu: unary '${e.op}' on ${t}`, e.loc);
    }
  }

  private cast(e: CastExpr): string {
    const from = e.x.type as ScalarName, to = e.type;
    const fty = this.scalarType(from), tty = this.scalarType(to);
    const x = this.expr(e.x);
    if (from === to) return x;
    if (fty === V64 || tty === V64) return this.cast64(from, to, x);
    // a float is true unless ±0 (NaN is true): tested on the bits, as a WGSL compiler may assume no NaN
    if (to === "bool") return isFloat(from) ? `((bitcast<u32>(${fty === "f32" ? x : `f32(${x})`}) << 1u) != 0u)` : `(${x} != ${fty}(0))`;
    if (from === "bool") return `select(${tty}(0), ${tty}(1), ${x})`;
    if (isFloat(to)) return this.roundsHalf(to) ? this.toHalf(`f32(${x})`) : `${tty}(${x})`;
    if (isFloat(from)) return this.floatToInt(x, from, to);
    // int → int: reinterpret the register's bits, then wrap to the width
    const same = fty === tty ? x : `bitcast<${tty}>(${x})`;
    const fits = bitsOf(to) === 32 || (bitsOf(to) > bitsOf(from) && !(isSigned(from) && !isSigned(to)));
    return fits ? same : wrap(to, same);
  }

  // ------------------------------------------------------------------ 64-bit integers (int64.ts)

  private binary64(op: BinaryExpr["op"], t: ScalarName, a: string, amount: string, b: string): string {
    const o = BINARY_64[op];
    if (!o) throw new InternalCompilerError(`webgpu: binary '${op}' on ${t}`, this.loc);
    if ("infix" in o) return `(${a} ${o.infix} ${b})`;
    return `${this.helper64(helperFor(o.helper, t))}(${a}, ${op === "shl" || op === "shr" ? amount : b})`;
  }

  private compare64(op: CompareExpr["op"], t: ScalarName, a: string, b: string): string {
    if (op === "eq") return `all(${a} == ${b})`;
    if (op === "ne") return `any(${a} != ${b})`;
    const { swap, not } = COMPARE_64[op];
    const lt = `${this.helper64(`lt_${sign64(t)}`)}(${swap ? `${b}, ${a}` : `${a}, ${b}`})`;
    return not ? `(!${lt})` : lt;
  }

  private unary64(e: UnaryExpr, x: string): string {
    if (e.op === "abs" && isUnsigned(e.type)) return x;
    const u = UNARY_64[e.op];
    if (!u) throw new InternalCompilerError(`webgpu: unary '${e.op}' on ${e.x.type as string}`, e.loc);
    if (u.needs) this.helper64(u.needs);
    return u.text(this.once(x));
  }

  /** a conversion to or from a 64-bit integer (not both the same dtype) */
  private cast64(from: ScalarName, to: ScalarName, x: string): string {
    if (is64(from) && is64(to)) return x;
    if (to === "bool") return `any(${x} != ${V64}())`;
    if (from === "bool") return `select(${V64}(), ${V64}(1u, 0u), ${x})`;
    if (isFloat(from)) return `${this.helper64(`f32_to_${sign64(to)}`)}(${from === "float32" ? x : `f32(${x})`})`;
    if (isFloat(to)) {
      // below 2^24 the float32 is exact, at or above it float16 overflows either way: one rounding
      const f = `${this.helper64(`${sign64(from)}_to_f32`)}(${x})`;
      return to === "float32" ? f : this.roundsHalf(to) ? this.toHalf(f) : `f16(${f})`;
    }
    if (is64(to)) {
      // a ≤32-bit int: its value's high word is the sign's (signed) or zero
      if (!isSigned(from)) return `${V64}(${x}, 0u)`;
      const v = this.once(x);
      return `${V64}(bitcast<u32>(${v}), bitcast<u32>(${v} >> 31u))`;
    }
    // to a ≤32-bit int: the low word, wrapped to the width
    const lo = `${x}.x`;
    return wrap(to, isSigned(to) ? `bitcast<i32>(${lo})` : lo);
  }

  /** float → int: toward zero, saturating, NaN → 0 (PTX cvt.rzi) */
  private floatToInt(x: string, from: ScalarName, to: ScalarName): string {
    const bits = bitsOf(to);
    const [lo, hi] = isSigned(to) ? [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1] : [0, 2 ** bits - 1];
    const key = `f2${to}`;
    const tty = WGSL_SCALAR[to]!;
    const name = `nb_${key}`;
    if (!this.helpers.has(key)) {
      this.helper("isnan", "f32");
      // the bounds as f32: hi + 1 is a power of two, exact in f32
      this.helpers.set(key, `fn ${name}(x: f32) -> ${tty} {
  if (nb_isnan_f32(x)) { return ${tty}(0); }
  if (x >= ${2 ** (bits - (isSigned(to) ? 1 : 0))}.0f) { return ${literal(to, hi)}; }
  if (x <= ${lo}.0f) { return ${literal(to, lo)}; }
  return ${tty}(x);
}`);
    }
    return `${name}(${from === "float32" ? x : `f32(${x})`})`;
  }

  private bitcast(x: Expr, to: ScalarName): string {
    const from = x.type as ScalarName;
    const fty = this.scalarType(from, x.loc), tty = this.scalarType(to);
    const v = this.expr(x);
    if (fty === "f16") {
      // f16 → 16-bit int: the low half of a vec2<f16>'s bits
      const u = `(bitcast<u32>(vec2<f16>(${v}, 0.0h)) & 0xffffu)`;
      return isSigned(to) ? wrap(to, `bitcast<i32>(${u})`) : u;
    }
    if (tty === "f16") return `bitcast<vec2<f16>>(${unsignedBits(from, v)}).x`;
    return fty === tty ? v : `bitcast<${tty}>(${v})`;
  }
}

/** the selector value of dst for the array value src (src's roots are among dst's) */
function selectionOf(dst: ArrayView, src: ArrayView): string {
  const indexOf = (r: Root) => dst.roots.findIndex((d) => d.name === r.name);
  if (!src.sel) return `${indexOf(src.roots[0]!)}i`;
  if (src.roots.every((r, k) => indexOf(r) === k)) return src.sel;
  return src.roots.slice(1).reduce((acc, r, k) => `select(${acc}, ${indexOf(r)}i, ${src.sel} == ${k + 1}i)`, `${indexOf(src.roots[0]!)}i`);
}

/** the module with nb_f32_bits (non-finite literals call it) declared once, when the code calls it */
function withBitsHelper(code: string): string {
  const decl = HELPERS.f32_bits!("f32");
  if (!code.includes("nb_f32_bits(") || code.includes(decl)) return code;
  return code.replace("\n@compute", `\n${decl}\n\n@compute`);
}

/** an expression that does something besides computing its value (it must not run speculatively) */
const hasEffect = (e: Expr): boolean => e.k === "atomic" || (e.k === "intrinsic" && INTRINSICS[e.name].effect !== "none");

/** the label of the kernel's body, which `return` leaves in a kernel with barriers */
const KERNEL_LABEL = "nb:kernel";

/** a statement that is or holds a barrier */
const holdsBarrier = (s: Stmt): boolean => {
  let found = false;
  walkStmts([s], (x) => { if (!found) found = stmtExprs(x).some((e) => exprHas(e, (y) => y.k === "intrinsic" && INTRINSICS[y.name].effect === "barrier")); });
  return found;
};

/**
 * An allocation, or a `let` or assignment whose value has no effect: it touches the thread's own locals
 * only (with `debug`, a load is checked, so a value that loads is not one of these).
 */
const setsLocalOnly = (s: Stmt, debug: boolean): boolean => s.k === "alloc"
  || ((s.k === "let" || s.k === "assign") && !stmtExprs(s).some((e) => exprHas(e, (x) => hasEffect(x) || (debug && x.k === "load"))));

/** a statement after which nothing of its list runs */
const endsFlow = (s: Stmt): boolean => s.k === "return" || s.k === "break" || s.k === "continue";

/** a float16 element's value from its bits (the host stores them in a Uint16Array) */
function halfValue(bits: number | bigint): number {
  const h = Number(bits);
  const e = (h >> 10) & 0x1f, m = h & 0x3ff, s = h & 0x8000 ? -1 : 1;
  if (e === 0x1f) return m ? NaN : s * Infinity;
  return s * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15));
}

