// Typed IR → JavaScript source for the simulator.
//
// The source is the body of `new Function("rt", "consts", "sites", code)` and returns
// the launch function `(L, args) => void` (L: sim.ts LaunchCtx). Values keep
// exact dtype semantics: ≤32-bit ints are canonical JS numbers (wrapped with
// |0, >>>0, masks, Math.imul), 64-bit ints are BigInts, floats are rounded to
// their format after every operation, bool is a JS boolean.
//
// Three shapes of code:
//  - fast path (no barriers or warp operations): one plain loop nest over all
//    threads of the grid, arguments and shapes hoisted into locals;
//  - phases (barriers outside `if`s, no warp operations; phases.ts): per block,
//    one plain loop over the block's threads for the code between two barriers;
//  - generator path: each thread is a generator `function* thread(T, tx, ty, tz)`
//    that records what it waits for in T and yields (sim.ts schedules them).
//
// An array is a group of JS locals: `a$v` (typed view), `a$o` (element offset
// of [0, …]), `a$n0…` (shape), `a$s0…` (strides in elements), `a$size`.
// Arrays with a constant shape (shared, local, constant) use literals instead.
//
// One file over 600 lines: one Emitter class, whose statement and expression cases share its record
// of locals and arrays; the barrier phases (phases.ts), the bounds proofs (bounds.ts) and the
// sanitizer's hooks (sanitize.ts) are apart.
//
// One file over 600 lines: the Emitter walks every statement and expression kind, and the three shapes
// of code it writes (grid loop, barrier phases, generators) share every case.

import {
  DTYPE_INFO, isArrayType, isBigInt, isScalarType, isTupleType,
  type ArrayType, type ScalarName, type Type,
} from "../../../dtypes.js";
import type { BinaryExpr, CastExpr, Expr, ExternalCallExpr, FunctionIR, IntrinsicExpr, IntrinsicName, Loc, Stmt, UnaryExpr } from "../../../compiler/ir.js";
import { rt, type AccessSite } from "../runtime/runtime.js";
import { BARRIER, WAIT, WARP } from "../runtime/sim.js";
import { emitPhases, planPhases, type PhaseHost, type PhasePlan } from "./phases.js";
import { proveBounds, type BoundsProofs, type LaunchAssumptions } from "./bounds.js";
import { assignedNames, bodyHas, exprChildren, exprHas, JS_COMPARISON, mapBodyExprs, stmtExprs, walkStmts, zeroConst } from "../../../compiler/walk.js";
import { cStrides, product } from "../../../ndarray.js";
import { INTRINSICS, isRendezvous } from "../../../compiler/intrinsics.js";
import { isHalfFloat } from "../../../half.js";
import { InternalCompilerError, type SanitizerTool } from "../../../errors.js";
import { AccessChecks, bindShadow, CHECK_LOCALS, ENTER_EPOCH, ENTER_THREAD, THREAD_FIELDS, THREAD_LOCALS, type CheckedArray } from "./sanitizer/checks.js";
import { SANITIZER_TOOLS } from "../runtime/sanitize.js";

/** how the simulator runs the kernel's threads (see the top of this file) */
export type KernelShape = "loop" | "phases" | "generators";

export interface EmittedKernel {
  readonly code: string;
  /** threads run as generators (barriers / warp operations) */
  readonly generators: boolean;
  readonly shape: KernelShape;
  readonly staticSharedBytes: number;
  /** the bounds-checked accesses, which the code names as `sites[k]` */
  readonly sites: readonly AccessSite[];
  /** what leaving out the checks that bounds.ts proves assumed of the launch */
  readonly assumes: LaunchAssumptions;
  /** the external functions (cuda.declareDevice) the code calls: their JavaScript stand-ins are looked up at each launch */
  readonly externals: readonly string[];
}

/** Variants of the simulator code (plain launches use the defaults). */
export interface EmitOptions {
  /** leave out checks proven only for launches that satisfy some assumptions (default true) */
  readonly assumeLaunch?: boolean;
  /** threads as generators even without barriers (the random schedule) */
  readonly generators?: boolean;
  /** every access and synchronisation reported to the sanitizer `S` (sanitize.ts) */
  readonly sanitize?: boolean;
}

interface ArrayInfo {
  readonly name: string; // the kernel's name for it, for bounds messages
  /** sanitizing: the local holding the array's shadow (sanitize.ts Shadow); none for constant memory */
  readonly sh?: string;
  readonly dtype: ScalarName;
  readonly space: string;
  readonly layout: string;
  /** the local holding the typed array */
  readonly v: string;
  /** element [0, …]'s offset in it: a local, or "0" */
  readonly o: string;
  /** extents and strides (elements) per dimension: locals or literals */
  readonly n: readonly string[];
  readonly s: readonly string[];
  /** the element count: a local or a literal */
  readonly size: string;
}

const RESERVED = new Set([
  ...Object.keys(rt), "rt", "consts", "sites", "L", "T", "args", "thread", "dyn",
  "tx", "ty", "tz", "bx", "by", "bz", "b", "first", "end", "nx", "ny", "nz", "gx", "gy", "gz",
  "Math", "Number", "BigInt", "NaN", "Infinity", "undefined", "arguments", "eval",
  "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
  "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof",
  "let", "new", "null", "return", "static", "super", "switch", "this", "throw", "true", "try", "typeof",
  "var", "void", "while", "with", "yield", "await", "implements", "interface", "package", "private",
  "protected", "public",
]);

/** JS wrap of a raw JS result to dtype t's canonical value */
function wrap(t: ScalarName, x: string): string {
  switch (t) {
    case "int8": return `((${x}) << 24 >> 24)`;
    case "int16": return `((${x}) << 16 >> 16)`;
    case "int32": return `((${x}) | 0)`;
    case "uint8": return `((${x}) & 255)`;
    case "uint16": return `((${x}) & 65535)`;
    case "uint32": return `((${x}) >>> 0)`;
    case "int64": return `BigInt.asIntN(64, ${x})`;
    case "uint64": return `BigInt.asUintN(64, ${x})`;
    case "float16": return `f16(${x})`;
    case "bfloat16": return `bf16(${x})`;
    case "float32": return `Math.fround(${x})`;
    case "float64": return `(${x})`;
    case "bool": return `(${x})`;
  }
}

const bits = (t: ScalarName) => DTYPE_INFO[t].bits;
const cls = (t: ScalarName) => DTYPE_INFO[t].cls;
const isFloatT = (t: ScalarName) => cls(t) === "float";
const isBigIndex = (ix: Expr) => ix.type === "int64" || ix.type === "uint64";

/** the unsigned bit pattern of a ≤32-bit int as a JS number */
const unsignedBits = (t: ScalarName, x: string) => (bits(t) === 32 ? `(${x} >>> 0)` : `(${x} & ${2 ** bits(t) - 1})`);

/** A local declared without a value: the zero of its scalar type, else nothing yet. */
function zeroOf(t: Type): string {
  return isScalarType(t) ? literal(t, zeroConst(t).value) : "undefined";
}

function literal(t: ScalarName, v: number | bigint | boolean): string {
  if (typeof v === "boolean") return String(v);
  if (typeof v === "bigint") return v < 0n ? `(${v}n)` : `${v}n`;
  if (t === "bool") return String(v !== 0);
  if (Object.is(v, -0)) return "(-0)";
  return v < 0 ? `(${v})` : String(v);
}

const BINARY_FLOAT: Record<string, (a: string, b: string) => string> = {
  add: (a, b) => `${a} + ${b}`, sub: (a, b) => `${a} - ${b}`, mul: (a, b) => `${a} * ${b}`,
  div: (a, b) => `${a} / ${b}`, rem: (a, b) => `${a} % ${b}`,
  min: (a, b) => `Math.min(${a}, ${b})`, max: (a, b) => `Math.max(${a}, ${b})`, copysign: (a, b) => `copysign(${a}, ${b})`,
};

const BINARY_BIG: Record<string, (a: string, b: string) => string> = {
  add: (a, b) => `${a} + ${b}`, sub: (a, b) => `${a} - ${b}`, mul: (a, b) => `${a} * ${b}`,
  div: (a, b) => `bdiv(${a}, ${b})`, floordiv: (a, b) => `bfloordiv(${a}, ${b})`, rem: (a, b) => `brem(${a}, ${b})`,
  and: (a, b) => `${a} & ${b}`, or: (a, b) => `${a} | ${b}`, xor: (a, b) => `${a} ^ ${b}`,
  shl: (a, b) => `${a} << BigInt(${b} & 63)`, shr: (a, b) => `${a} >> BigInt(${b} & 63)`,
  min: (a, b) => `bmin(${a}, ${b})`, max: (a, b) => `bmax(${a}, ${b})`,
};

/** ≤32-bit ints; `w` is the bit width (shift amounts are taken modulo it) */
const BINARY_INT: Record<string, (a: string, b: string, w: number, signed: boolean) => string> = {
  add: (a, b) => `${a} + ${b}`, sub: (a, b) => `${a} - ${b}`, mul: (a, b) => `Math.imul(${a}, ${b})`,
  div: (a, b) => `idiv(${a}, ${b})`, floordiv: (a, b) => `ifloordiv(${a}, ${b})`, rem: (a, b) => `irem(${a}, ${b})`,
  and: (a, b) => `${a} & ${b}`, or: (a, b) => `${a} | ${b}`, xor: (a, b) => `${a} ^ ${b}`,
  shl: (a, b, w) => (w === 32 ? `${a} << ${b}` : `${a} << (${b} & ${w - 1})`),
  shr: (a, b, w, signed) => `${a} ${signed ? ">>" : ">>>"} ${w === 32 ? b : `(${b} & ${w - 1})`}`,
  min: (a, b) => `Math.min(${a}, ${b})`, max: (a, b) => `Math.max(${a}, ${b})`,
};

const BINARY_BOOL: Record<string, (a: string, b: string) => string> = {
  and: (a, b) => `((${a} & ${b}) !== 0)`, or: (a, b) => `((${a} | ${b}) !== 0)`, xor: (a, b) => `(${a} !== ${b})`,
  min: (a, b) => `(${a} && ${b})`, max: (a, b) => `(${a} || ${b})`,
};


const WARP_OPS = {
  shflSync: WARP.shfl, shflUpSync: WARP.shflUp, shflDownSync: WARP.shflDown, shflXorSync: WARP.shflXor,
  allSync: WARP.all, anySync: WARP.any, eqSync: WARP.eq, ballotSync: WARP.ballot,
  matchAnySync: WARP.matchAny, matchAllSync: WARP.matchAll,
} as const satisfies Partial<Record<IntrinsicName, number>>;
const BARRIERS = {
  syncthreads: BARRIER.plain, syncthreadsCount: BARRIER.count, syncthreadsAnd: BARRIER.and, syncthreadsOr: BARRIER.or,
} as const satisfies Partial<Record<IntrinsicName, number>>;

/** tsc lists here any intrinsic the simulator's switch lacks */
function unknownIntrinsic(name: never): never {
  throw new InternalCompilerError(`simulator: intrinsic '${String(name)}' is not supported`);
}

const FAST_MATH = {
  fastExp2: ([x]) => `Math.fround(2 ** ${x})`, fastLog2: ([x]) => `Math.fround(Math.log2(${x}))`,
  fastSin: ([x]) => `Math.fround(Math.sin(${x}))`, fastCos: ([x]) => `Math.fround(Math.cos(${x}))`,
  fastRcp: ([x]) => `Math.fround(1 / ${x})`, fastTanh: ([x]) => `Math.fround(Math.tanh(${x}))`,
  // flushes subnormal operands and results as .ftz does; the quotient itself is the correctly rounded one
  fastDiv: ([x, y]) => `ftz32(Math.fround(ftz32(${x}) / ftz32(${y})))`,
} as const satisfies Partial<Record<IntrinsicName, (a: string[]) => string>>;

const SPECIAL: Record<string, string> = {
  "tid.x": "tx", "tid.y": "ty", "tid.z": "tz", "ntid.x": "nx", "ntid.y": "ny", "ntid.z": "nz",
  "ctaid.x": "bx", "ctaid.y": "by", "ctaid.z": "bz", "nctaid.x": "gx", "nctaid.y": "gy", "nctaid.z": "gz",
};

/** does the kernel need threads that rendezvous? */
export function needsGenerators(ir: FunctionIR): boolean {
  if (ir.features.barriers || ir.features.warp || ir.features.gridSync) return true;
  return bodyHas(ir.body, yields);
}

const SHAPE_NOTES: Record<KernelShape, string> = {
  loop: "one loop over all threads",
  phases: "per block, one loop over its threads between barriers",
  generators: "threads as generators (barriers / warp operations)",
};

const yields = (e: Expr): boolean => e.k === "intrinsic" && isRendezvous(e.name);

/** Options of an instrumented variant (`sanitize`): the sanitizer's tools whose checks it makes (default: all). */
export interface SanitizeOptions extends EmitOptions {
  readonly tools?: ReadonlySet<SanitizerTool>;
  /** every access reported to the hooks, none checked inline: launches with a freed array (its every use is a finding) */
  readonly hooks?: boolean;
}

export function emitKernel(ir: FunctionIR, options: SanitizeOptions = {}): EmittedKernel {
  return new Emitter(threadCopiesOfParams(ir), options).emit();
}

/**
 * Parameters the kernel assigns (a number, or an array: `x = y`, `x = x.subarray(1)`) become locals set
 * from the argument, so that each thread has its own (the launch binds a parameter once, for every thread).
 */
function threadCopiesOfParams(ir: FunctionIR): FunctionIR {
  const assigned = assignedNames(ir.body);
  const copies = ir.params.filter((p) => assigned.has(p.name));
  if (copies.length === 0) return ir;
  const local = new Map(copies.map((p) => [p.name, `${p.name}#thread`])); // `#`: no kernel name has one
  const body = mapBodyExprs(ir.body,
    (e) => (e.k === "var" && local.has(e.name) ? { ...e, name: local.get(e.name)! } : e),
    (s) => (s.k === "assign" && local.has(s.name) ? { ...s, name: local.get(s.name)! } : s));
  const lets = copies.map((p): Stmt => ({ k: "let", name: local.get(p.name)!, type: p.type, init: { k: "var", type: p.type, name: p.name } }));
  return { ...ir, body: [...lets, ...body] };
}

class Emitter {
  private readonly gen: boolean;
  /** the barrier phases, when the kernel runs as phases */
  private readonly phases: PhasePlan | undefined;
  private readonly ir: FunctionIR;
  private readonly proofs: BoundsProofs;
  private readonly ids = new Map<string, string>();
  private readonly used = new Set<string>();
  private readonly arrays = new Map<string, ArrayInfo>();
  private readonly prelude: string[] = [];
  private readonly preludeNames = new Set<string>();
  /** external functions called, by symbol: the local each launch binds its stand-in to */
  private readonly externals = new Map<string, string>();
  /** per-thread locals, declared once at the top of the thread's scope */
  private readonly locals: string[] = [];
  private temps = 0;
  private activemaskSites = 0;
  /** labels of loops whose `continue` must run an update: continue → break of the inner block */
  private readonly continueBlocks = new Set<string>();
  private lines: string[] = [];
  private depth = 0;
  /** the statement being emitted, for the positions of its array accesses */
  private loc: Loc | undefined;
  private readonly sites: AccessSite[] = [];

  private readonly san: boolean;
  /** sanitizing: the checks of array accesses */
  private readonly checks: AccessChecks | undefined;
  /** sanitizing: the shadows whose fields are bound to locals (they never change) */
  private readonly boundShadows = new Set<string>();

  constructor(ir: FunctionIR, options: SanitizeOptions) {
    this.san = options.sanitize === true;
    // barrier kernels run as phases (sanitized too: the sanitizer counts the barriers the block passes),
    // except for the random schedule, which needs every thread as a generator
    const sync = needsGenerators(ir);
    const plan = sync && !options.generators ? planPhases(ir) : undefined;
    this.phases = typeof plan === "object" ? plan : undefined;
    this.gen = options.generators === true || (sync && !this.phases);
    this.ir = this.phases ? { ...ir, body: this.phases.body } : ir;
    if (this.san) { this.used.add("S"); this.used.add("Z"); }
    // the thread's state for the checks: in locals where one SanThread moves from thread to thread, in
    // its fields for generator threads (sanitizer/checks.ts)
    const thread = this.gen ? THREAD_FIELDS : THREAD_LOCALS;
    this.checks = this.san ? new AccessChecks(options.tools ?? new Set(SANITIZER_TOOLS), ir.features.warp, options.hooks === true, thread) : undefined;
    this.proofs = proveBounds(this.ir, options.assumeLaunch ?? true);
  }

  emit(): EmittedKernel {
    const ir = this.ir;
    const launch: string[] = [];
    ir.params.forEach((p, i) => launch.push(...this.bindParam(p.name, p.type, i)));
    ir.constArrays.forEach((c, i) => this.bindConst(c.name, c.type, c.shape, i));
    const { blockSetup, staticSharedBytes, hoisted } = this.declareAllocs();
    this.declareLocals();

    // the thread body first: it fills locals, temps and the prelude
    this.depth = this.gen ? 3 : 4;
    const phases = this.phases && emitPhases(this.phases, this.phaseHost());
    if (!phases) this.block(ir.body);
    const body = this.lines;
    const temps = Array.from({ length: this.temps }, (_, i) => `$${i}`);
    const threadLocals = [...this.locals, ...temps];

    const out: string[] = [
      `return function kernel_${ir.name.replace(/[^A-Za-z0-9_]/g, "_")}(L, args${this.san ? ", S" : ""}) {`,
      ...launch.map((l) => `  ${l}`),
      ...[...this.externals].map(([name, local]) => `  const ${local} = externalImplementation(${JSON.stringify(name)}, ${JSON.stringify(ir.name)});`),
      `  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;`,
    ];
    const decl = (names: string[], ind: string) => (names.length ? [`${ind}let ${names.join(", ")};`] : []);
    if (this.gen) {
      out.push(
        `  runThreads(L, (bx, by, bz) => {`,
        ...blockSetup.map((l) => `    ${l}`),
        `    return function* thread(T, tx, ty, tz) {`,
        ...decl(threadLocals, "      "),
        ...(this.san ? [`      const Z = S.thread(T, tx, ty, tz, bx, by, bz);`] : []),
        ...body,
        `    };`,
        `  });`,
      );
    } else if (phases) {
      out.push(
        ...hoisted.map((l) => `  ${l}`),
        ...decl(threadLocals, "  "),
        ...(this.san ? [`  const Z = S.thread0();`] : []),
        ...phases.setup.map((l) => `  ${l}`),
        `  const [first, end] = blockRange(L);`,
        `  for (let b = first; b < end; b++) {`,
        `    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));`,
        ...blockSetup.map((l) => `    ${l}`),
        ...this.sanBlock(),
        ...phases.block,
        `  }`,
      );
    } else {
      out.push(
        ...hoisted.map((l) => `  ${l}`),
        ...decl(threadLocals, "  "),
        ...(this.san ? [`  const Z = S.thread0();`] : []),
        // the blocks by linear index, x fastest: a worker runs a range of them (sim.ts blockRange)
        `  const [first, end] = blockRange(L);`,
        `  for (let b = first; b < end; b++) {`,
        `    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));`,
        ...blockSetup.map((l) => `    ${l}`),
        ...this.sanBlock(),
        `    for (let tz = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++) {`,
        ...(this.san ? [`      ${ENTER_THREAD}`] : []),
        ...body,
        `    }`,
        `  }`,
      );
    }
    out.push(`};`);
    const code = [...this.prelude, ...out].join("\n");
    // only the runtime helpers the kernel names: a scope holding all of them makes the kernel measurably slower
    const helpers = Object.keys(rt).filter((name) => new RegExp(`\\b${name}\\b`).test(code));
    const head = [
      `"use strict";`,
      `// ${ir.name}: simulator code, ${SHAPE_NOTES[this.shape()]}`,
      ...(helpers.length ? [`const { ${helpers.join(", ")} } = rt;`] : []),
    ];
    return { code: [...head, code].join("\n") + "\n", generators: this.gen, shape: this.shape(), staticSharedBytes, sites: this.sites, assumes: this.proofs.assumes, externals: [...this.externals.keys()] };
  }

  /** Sanitizing, one SanThread moved from thread to thread: it enters each block (its threads, by ENTER_THREAD). */
  private sanBlock(): string[] {
    return this.san ? [`    S.enterBlock(Z, bx, by, bz);`, `    ${ENTER_EPOCH}`] : [];
  }

  private shape(): KernelShape {
    return this.gen ? "generators" : this.phases ? "phases" : "loop";
  }

  private phaseHost(): PhaseHost {
    return {
      stmts: (body, depth) => {
        const [lines, d] = [this.lines, this.depth];
        [this.lines, this.depth] = [[], depth];
        this.block(body);
        const out = this.lines;
        [this.lines, this.depth] = [lines, d];
        return out;
      },
      expr: (e) => this.expr(e),
      ids: (name) => {
        const a = this.arrays.get(name);
        if (!a) return [{ id: this.ident(name), object: false }];
        const numbers = [a.o, ...a.n, ...a.s, a.size].filter((x) => /^[A-Za-z_]/.test(x));
        return [a.v, ...(a.sh ? [a.sh] : [])].map((id) => ({ id, object: true })).concat(numbers.map((id) => ({ id, object: false })));
      },
      site: (loc) => this.site(loc),
      ...(this.san ? {
        sanitizer: {
          enter: ENTER_THREAD,
          barrier: (site: number, exited: string) => `S.passBarrier(Z, ${site}, ${exited}); ${ENTER_EPOCH}`,
        },
      } : {}),
    };
  }

  /** a local array made per thread (else one buffer, zeroed where each thread allocates it) */
  private perThreadAlloc(name: string): boolean {
    return this.gen || (this.phases?.persistent.has(name) ?? false);
  }

  // ------------------------------------------------------------------ names

  private ident(name: string): string {
    const known = this.ids.get(name);
    if (known) return known;
    let base = name.replace(/[^A-Za-z0-9_]/g, "_");
    if (!/^[A-Za-z_]/.test(base)) base = `_${base}`;
    let id = base;
    for (let i = 1; RESERVED.has(id) || this.used.has(id); i++) id = `${base}_${i}`;
    this.ids.set(name, id);
    this.used.add(id);
    return id;
  }

  /**
   * Arguments of a rendezvous that themselves rendezvous (`ballotSync(m, shflSync(…))`) would overwrite
   * T's fields while they wait, so such arguments are evaluated into temporaries first.
   */
  private beforeRendezvous(e: IntrinsicExpr, args: string[]): [string, string[]] {
    if (!e.args.some((a) => exprHas(a, yields))) return ["", args];
    const temps = args.map(() => this.temp());
    return [args.map((a, i) => `${temps[i]} = ${a}, `).join(""), temps];
  }

  private temp(): string {
    return `$${this.temps++}`;
  }

  /** a helper made once per kernel (atomics, bitcasts), named by its arguments */
  private helper(name: string, init: string): string {
    if (!this.preludeNames.has(name)) {
      this.preludeNames.add(name);
      this.prelude.push(`const ${name} = ${init};`);
    }
    return name;
  }

  // --------------------------------------------------------------- arrays

  private variableArray(name: string, t: ArrayType): ArrayInfo {
    const id = this.ident(name);
    const dims = Array.from({ length: t.ndim }, (_, k) => k);
    return {
      name, dtype: t.dtype, space: t.space, layout: t.layout, ...(this.san ? { sh: `${id}$sh` } : {}),
      v: `${id}$v`, o: `${id}$o`, n: dims.map((k) => `${id}$n${k}`), s: dims.map((k) => `${id}$s${k}`), size: `${id}$size`,
    };
  }

  private constShapeArray(name: string, t: ArrayType, v: string, shape: readonly number[]): ArrayInfo {
    return {
      name, dtype: t.dtype, space: t.space, layout: "C", v, o: "0", ...(this.san && t.space !== "const" ? { sh: `${v}$sh` } : {}),
      n: shape.map(String), s: cStrides(shape).map(String), size: String(product(shape)),
    };
  }

  private bindParam(name: string, t: Type, i: number): string[] {
    if (isTupleType(t) || t === "void") throw new InternalCompilerError(`simulator: parameter '${name}' of type ${JSON.stringify(t)} is not supported`);
    const id = this.ident(name);
    if (!isArrayType(t)) return [`let ${id} = scalarArg(args[${i}], ${JSON.stringify(name)}, "${t}");`];
    const v = this.variableArray(name, t);
    // a C-contiguous array's last stride is 1 and, its strides being positive, its view starts at
    // element 0: leave the multiply and the offset out (a parameter is never assigned: threadCopiesOfParams)
    const fixed = t.layout === "C";
    const a = fixed ? { ...v, o: "0", s: v.s.map((s, k) => (k === t.ndim - 1 ? "1" : s)) } : v;
    this.arrays.set(name, a);
    const dims = a.n.map((n, k) => `${n} = ${id}.shape[${k}]${a.s[k] === "1" ? "" : `, ${a.s[k]} = ${id}.strides[${k}]`}`);
    return [
      `const ${id} = bindArray(args[${i}], ${JSON.stringify(name)}, "${t.dtype}", ${t.ndim}, "${t.layout}");`,
      `let ${[`${a.v} = ${id}.v`, ...(fixed ? [] : [`${a.o} = ${id}.o`]), ...dims, `${a.size} = ${id}.size`, ...(a.sh ? [`${a.sh} = S.arg(${id}, ${JSON.stringify(name)})`] : [])].join(", ")};`,
      ...(a.sh ? [this.bindShadow(a.sh)] : []),
    ];
  }

  private bindConst(name: string, t: ArrayType, shape: readonly number[], i: number): void {
    const id = this.ident(name);
    const ctor = DTYPE_INFO[t.dtype].array.name;
    this.prelude.push(`const ${id}$v = new ${ctor}(consts[${i}].buffer, consts[${i}].byteOffset, ${shape.reduce((a, b) => a * b, 1)});`);
    this.arrays.set(name, this.constShapeArray(name, t, `${id}$v`, shape));
  }

  /** shared arrays: made per block; local arrays: per thread (hoisted and zeroed on the fast path) */
  private declareAllocs(): { blockSetup: string[]; staticSharedBytes: number; hoisted: string[] } {
    const blockSetup: string[] = [];
    const hoisted: string[] = [];
    let staticSharedBytes = 0;
    walkStmts(this.ir.body, (s) => {
      if (s.k !== "alloc") return;
      const id = this.ident(s.name);
      const ctor = DTYPE_INFO[s.type.dtype].array.name;
      const size = DTYPE_INFO[s.type.dtype].size;
      if (s.type.space === "shared" && s.shape.length === 1 && s.shape[0] === 0) {
        if (!blockSetup.includes("const dyn = new ArrayBuffer(L.sharedMemBytes);")) blockSetup.unshift("const dyn = new ArrayBuffer(L.sharedMemBytes);");
        blockSetup.push(`const ${id}$v = new ${ctor}(dyn, 0, Math.floor(L.sharedMemBytes / ${size}));`);
        if (this.san) blockSetup.push(`const ${id}$v$sh = S.shared(${id}$v, ${JSON.stringify(s.name)}, [${id}$v.length], bx, by, bz);`, this.bindShadow(`${id}$v$sh`));
        this.arrays.set(s.name, {
          name: s.name, dtype: s.type.dtype, space: "shared", layout: "C", v: `${id}$v`, o: "0", ...(this.san ? { sh: `${id}$v$sh` } : {}),
          n: [`${id}$v.length`], s: ["1"], size: `${id}$v.length`,
        });
        return;
      }
      const count = s.shape.reduce((a, b) => a * b, 1);
      if (s.type.space === "shared") {
        staticSharedBytes += count * size;
        blockSetup.push(`const ${id}$v = new ${ctor}(${count});`);
        if (this.san) blockSetup.push(`const ${id}$v$sh = S.shared(${id}$v, ${JSON.stringify(s.name)}, ${JSON.stringify(s.shape)}, bx, by, bz);`, this.bindShadow(`${id}$v$sh`));
      } else {
        if (this.perThreadAlloc(s.name)) this.locals.push(`${id}$v`);
        else hoisted.push(`const ${id}$v = new ${ctor}(${count});`);
        if (this.san) this.locals.push(`${id}$v$sh`);
      }
      this.arrays.set(s.name, this.constShapeArray(s.name, s.type, `${id}$v`, s.shape));
    });
    return { blockSetup, staticSharedBytes, hoisted };
  }

  /** every `let` of the body becomes a per-thread local declared up front */
  private declareLocals(): void {
    if (this.checks?.any) this.locals.push(...CHECK_LOCALS);
    if (this.san && !this.gen) this.locals.push(THREAD_LOCALS.lin, THREAD_LOCALS.sync, THREAD_LOCALS.first);
    walkStmts(this.ir.body, (s) => {
      if (s.k !== "let") return;
      if (isArrayType(s.type)) {
        const a = this.variableArray(s.name, s.type);
        this.arrays.set(s.name, a);
        this.locals.push(a.v, a.o, ...a.n, ...a.s, a.size, ...(a.sh ? [a.sh] : []));
      } else {
        this.locals.push(this.ident(s.name));
      }
    });
  }

  private arrayOf(e: Expr): ArrayInfo {
    const a = e.k === "var" ? this.arrays.get(e.name) : undefined;
    if (!a) throw new InternalCompilerError(`simulator: array expression '${e.k}' is not supported here (expected an array variable)`, e.loc);
    return a;
  }

  /** dst's components := those of the array expression e (a variable or a select of arrays) */
  private assignArray(dst: ArrayInfo, e: Expr): void {
    if (e.k === "select") {
      this.line(`if (${this.expr(e.cond)}) {`);
      this.nested(() => this.assignArray(dst, e.a));
      this.line(`} else {`);
      this.nested(() => this.assignArray(dst, e.b));
      this.line(`}`);
      return;
    }
    if (e.k === "intrinsic" && (e.name === "subarray" || e.name === "view")) return this.assignView(dst, e);
    const src = this.arrayOf(e);
    const parts = [[dst.v, src.v], [dst.o, src.o], ...dst.n.map((n, k) => [n, src.n[k]]), ...dst.s.map((s, k) => [s, src.s[k]]), [dst.size, src.size],
      ...(dst.sh ? [[dst.sh, src.sh ?? "S.untracked"]] : [])];
    this.line(parts.map(([d, s]) => `${d} = ${s}`).join(", ") + ";");
  }

  /** dst := `a.subarray(begin, end?)` (bounds as JavaScript's) or `a.view(dtype)` of the 1-d array a */
  private assignView(dst: ArrayInfo, e: IntrinsicExpr): void {
    const src = this.arrayOf(e.args[0]!);
    const [n, s] = [src.n[0]!, src.s[0]!];
    // an array of complex is 2-d: its elements, then their (re, im) parts
    const fromComplex = (e.args[0]!.type as ArrayType).complex !== undefined, toComplex = (e.type as ArrayType).complex !== undefined;
    if (e.name === "view") {
      const parts = fromComplex ? `${n} * 2` : n;
      const shape = toComplex
        ? `${dst.n[0]} = ${dst.v}.length >> 1, ${dst.n[1]} = 2, ${dst.s[0]} = 2, ${dst.s[1]} = 1, ${dst.size} = ${dst.n[0]} * 2`
        : `${dst.n[0]} = ${dst.v}.length, ${dst.s[0]} = 1, ${dst.size} = ${dst.n[0]}`;
      this.line(`${dst.v} = viewAs(${src.v}, ${src.o}, ${parts}, "${dst.dtype}"), ${dst.o} = 0, ${shape}${dst.sh ? `, ${dst.sh} = ${src.sh ? `S.view(${src.sh}, ${dst.v})` : "S.untracked"}` : ""};`);
      return;
    }
    const [begin, end] = e.args.slice(1).map((x) => `subarrayBound(${this.expr(x)}, ${n})`);
    const pairs = fromComplex ? `, ${dst.n[1]} = 2, ${dst.s[1]} = ${src.s[1]}` : "";
    this.line(`${dst.o} = ${begin};`);
    this.line(`${dst.v} = ${src.v}, ${dst.n[0]} = Math.max(${end ?? n} - ${dst.o}, 0), ${dst.o} = ${src.o} + ${dst.o} * ${s}, ${dst.s[0]} = ${s}${pairs}, ${dst.size} = ${dst.n[0]}${fromComplex ? " * 2" : ""}${dst.sh ? `, ${dst.sh} = ${src.sh ?? "S.untracked"}` : ""};`);
  }

  /** the index in `sites` of an access at `loc` (the kernel's first line when unknown) */
  private site(loc: Loc | undefined): number {
    const { name, source, origin } = this.ir;
    const own = loc?.source ? { source: loc.source } : { source, origin };
    return this.sites.push({ kernel: name, ...own, line: loc?.line ?? 1, column: loc?.column ?? 0 }) - 1;
  }

  /** the flat element index of a[index…], bounds-checked unless proven in bounds; `loc` is where the access is */
  private elementIndex(a: ArrayInfo, index: readonly Expr[], loc = this.loc): string {
    const proven = this.proofs.proven.get(index);
    if (proven?.every(Boolean)) {
      const terms = index.map((ix, k) => (a.s[k] === "1" ? `(${this.expr(ix)})` : `(${this.expr(ix)}) * ${a.s[k]}`));
      return [...(a.o === "0" ? [] : [a.o]), ...terms].join(" + ");
    }
    const ts = index.map(() => this.temp());
    const assigns = index.map((ix, k) => {
      const v = this.expr(ix);
      return `${ts[k]} = ${isBigIndex(ix) ? `Number(${v})` : v}`;
    });
    const checks = index.map((ix, k) => (isBigIndex(ix)
      ? `${ts[k]} >= 0 && ${ts[k]} < ${a.n[k]}`
      : `${ts[k]} >>> 0 < ${a.n[k]}`)).filter((_, k) => !proven?.[k]);
    const offset = [a.o === "0" ? "" : a.o, ...ts.map((t, k) => (a.s[k] === "1" ? t : `${t} * ${a.s[k]}`))].filter(Boolean).join(" + ");
    const fail = `oob(${JSON.stringify(a.name)}, [${ts.join(", ")}], [${a.n.join(", ")}], sites[${this.site(loc)}], tx, ty, tz, bx, by, bz)`;
    const test = index.length === 1 && !isBigIndex(index[0]!)
      ? `(${assigns[0]}) >>> 0 < ${a.n[0]}`
      : `(${assigns.join(", ")}, ${checks.join(" && ")})`;
    return `${test} ? ${offset} : ${fail}`;
  }

  /**
   * Sanitizing: the element offset `at` of an access of kind `op` (rd: read, at: atomic) reported to the
   * sanitizer before the access; otherwise `at` itself.
   */
  private checked(op: "rd" | "at", a: ArrayInfo, at: string, loc = this.loc): string {
    const checked = this.checkedArray(a);
    if (!checked) return at;
    const t = this.temp();
    const check = op === "rd" ? this.checks!.read(checked, t, this.site(loc)) : this.checks!.atomic(checked, t, this.site(loc));
    return check ? `(${t} = ${at}, ${check}, ${t})` : at;
  }

  /** Sanitizing: the array as the checks see it, when its accesses are checked (not constant memory) */
  private checkedArray(a: ArrayInfo): CheckedArray | undefined {
    if (!a.sh || a.space === "const" || !this.checks?.any) return undefined;
    return { sh: a.sh, space: a.space, size: DTYPE_INFO[a.dtype].array.BYTES_PER_ELEMENT, bound: this.boundShadows.has(a.sh) };
  }

  /** Sanitizing: the fields of shadow `sh`, which never changes, bound to locals for the checks */
  private bindShadow(sh: string): string {
    this.boundShadows.add(sh);
    return bindShadow(sh);
  }

  /** Sanitizing: `Z.at = site, ` before a synchronisation, so that synccheck can say where it is. */
  private syncSite(): string {
    return this.san ? `Z.at = ${this.site(this.loc)}, ` : "";
  }

  // ----------------------------------------------------------- statements

  private line(s: string): void {
    this.lines.push("  ".repeat(this.depth) + s);
  }

  private nested(f: () => void): void {
    this.depth++;
    f();
    this.depth--;
  }

  private block(body: readonly Stmt[]): void {
    for (const s of body) this.stmt(s);
  }

  private stmt(s: Stmt): void {
    this.loc = s.loc ?? this.loc;
    switch (s.k) {
      case "let":
      case "assign": {
        const value = s.k === "let" ? s.init : s.value;
        const a = this.arrays.get(s.name);
        if (a) { if (value) this.assignArray(a, value); return; }
        const t = s.k === "let" ? s.type : value!.type;
        this.line(`${this.ident(s.name)} = ${value ? this.expr(value) : zeroOf(t)};`);
        return;
      }
      case "store": {
        const a = this.arrayOf(s.array);
        const at = this.elementIndex(a, s.index);
        const value = this.toMemory(a.dtype, this.expr(s.value));
        const checked = this.checkedArray(a);
        // sanitizing: the write is checked after the value's own reads
        const [t, v] = checked ? [this.temp(), this.temp()] : [];
        const check = checked ? this.checks!.write(checked, t!, this.site(this.loc)) : "";
        this.line(check ? `${a.v}[${t} = ${at}] = (${v} = ${value}, ${check}, ${v});` : `${a.v}[${at}] = ${value};`);
        return;
      }
      case "expr": {
        const e = s.expr;
        if (e.k === "intrinsic" && INTRINSICS[e.name].effect === "order") {
          this.line(`// ${e.name}: nothing to do on the simulator`);
          return;
        }
        this.line(`${this.expr(e)};`);
        return;
      }
      case "if":
        this.line(`if (${this.expr(s.cond)}) {`);
        this.nested(() => this.block(s.then));
        if (s.else.length) {
          this.line(`} else {`);
          this.nested(() => this.block(s.else));
        }
        this.line(`}`);
        return;
      case "loop": {
        const label = this.ident(`L:${s.label}`);
        const cond = s.cond ? this.expr(s.cond) : "true";
        const inner = s.update.length ? `${label}_body` : undefined;
        if (inner) this.continueBlocks.add(s.label);
        this.line(s.testFirst ? `${label}: while (${cond}) {` : `${label}: do {`);
        this.nested(() => {
          if (inner) {
            this.line(`${inner}: {`);
            this.nested(() => this.block(s.body));
            this.line(`}`);
            this.block(s.update);
          } else {
            this.block(s.body);
          }
        });
        this.line(s.testFirst ? `}` : `} while (${cond});`);
        return;
      }
      case "block":
        this.line(`${this.ident(`L:${s.label}`)}: {`);
        this.nested(() => this.block(s.body));
        this.line(`}`);
        return;
      case "break":
        this.line(`break ${this.ident(`L:${s.label}`)};`);
        return;
      case "continue":
        this.line(this.continueBlocks.has(s.label) ? `break ${this.ident(`L:${s.label}`)}_body;` : `continue ${this.ident(`L:${s.label}`)};`);
        return;
      case "return":
        this.line(this.gen ? `return;` : this.phases ? `{ ph$exit[ph$t] = 1; continue thread; }` : `continue thread;`);
        return;
      case "alloc": {
        const a = this.arrays.get(s.name)!;
        if (s.type.space === "local") {
          const ctor = DTYPE_INFO[s.type.dtype].array.name;
          this.line(this.perThreadAlloc(s.name) ? `${a.v} = new ${ctor}(${a.size});` : `${a.v}.fill(${isBigInt(s.type.dtype) ? "0n" : "0"});`);
          if (a.sh) this.line(`${a.sh} = S.local(${a.v}, ${JSON.stringify(s.name)}, ${JSON.stringify(s.shape)});`);
        }
        return;
      }
    }
  }

  // ---------------------------------------------------------- expressions

  /** JS for a register value stored into memory of dtype t */
  private toMemory(t: ScalarName, x: string): string {
    if (t === "bool") return `(${x} ? 1 : 0)`;
    if (t === "float16") return `f2h(${x})`;
    if (t === "bfloat16") return `f2b(${x})`;
    return x;
  }

  private fromMemory(t: ScalarName, x: string): string {
    if (t === "bool") return `(${x} !== 0)`;
    if (t === "float16") return `h2f(${x})`;
    if (t === "bfloat16") return `b2f(${x})`;
    return x;
  }

  private expr(e: Expr): string {
    switch (e.k) {
      case "const": return literal(e.type, e.value);
      case "var": {
        if (isArrayType(e.type)) throw new InternalCompilerError(`simulator: array '${e.name}' used as a value`, e.loc);
        return this.ident(e.name);
      }
      case "unary": return this.unary(e);
      case "binary": return this.binary(e);
      case "fma": {
        const f = e.type === "float32" ? "fma32" : e.type === "float16" ? "fma16" : "fma64";
        return `${f}(${this.expr(e.a)}, ${this.expr(e.b)}, ${this.expr(e.c)})`;
      }
      case "compare": return `(${this.expr(e.a)} ${JS_COMPARISON[e.op]} ${this.expr(e.b)})`;
      case "logical": return `(${this.expr(e.a)} ${e.op === "and" ? "&&" : "||"} ${this.expr(e.b)})`;
      case "select": return e.eager ? `selp(${this.expr(e.cond)}, ${this.expr(e.a)}, ${this.expr(e.b)})` : `(${this.expr(e.cond)} ? ${this.expr(e.a)} : ${this.expr(e.b)})`;
      case "cast": return this.cast(e);
      case "bitcast": {
        const from = e.x.type as ScalarName;
        return `${this.helper(`bitcast_${from}_${e.type}`, `bitcast("${from}", "${e.type}")`)}(${this.expr(e.x)})`;
      }
      case "words": {
        const args = e.args.map((a) => this.expr(a));
        return e.op === "hi" ? `hiWord(${args[0]})` : e.op === "lo" ? `loWord(${args[0]})` : `makeWords(${args[0]}, ${args[1]})`;
      }
      case "load": {
        const a = this.arrayOf(e.array);
        const loc = e.loc ?? this.loc;
        return this.fromMemory(a.dtype, `${a.v}[${this.checked("rd", a, this.elementIndex(a, e.index, loc), loc)}]`);
      }
      case "arrayAttr": {
        const a = this.arrayOf(e.array);
        return e.attr === "shape" ? a.n[e.dim]! : e.attr === "stride" ? a.s[e.dim]! : a.size;
      }
      case "special":
        if (e.reg === "laneid") return this.gen ? "T.lane" : "((tx + ty * nx + tz * nx * ny) & 31)";
        return SPECIAL[e.reg]!;
      case "tuple": return `[${e.items.map((x) => this.expr(x)).join(", ")}]`;
      case "tupleGet": return `${this.expr(e.tuple)}[${e.index}]`;
      case "atomic": {
        const a = this.arrayOf(e.array);
        const fn = this.helper(`atomic_${e.op}_${a.dtype}_${a.space}`, `atomic("${e.op}", "${a.dtype}", "${a.space}")`);
        const args = [a.v, this.checked("at", a, this.elementIndex(a, e.index)), this.expr(e.value), ...(e.compare ? [this.expr(e.compare)] : [])];
        return `${fn}(${args.join(", ")})`;
      }
      case "intrinsic": return this.intrinsic(e);
      case "call": throw new InternalCompilerError(`simulator: device function calls must be inlined before the JS target (call of '${e.fn.name}')`, e.loc);
      case "external": return this.external(e);
    }
  }

  /**
   * A call of a declared function's JavaScript stand-in: scalars as the simulator holds them (int64 as
   * bigint), an array as a typed array from its first element; the result converted to the declared type,
   * as the GPU's calling convention returns it (a float32 rounded, an integer wrapped).
   */
  private external(e: ExternalCallExpr): string {
    let local = this.externals.get(e.fn.name);
    if (!local) this.externals.set(e.fn.name, (local = `extern$${this.externals.size}`));
    const args = e.args.map((a) => {
      if (!isArrayType(a.type)) return this.expr(a);
      const arr = this.arrayOf(a);
      return arr.o === "0" ? arr.v : `${arr.v}.subarray(${arr.o})`;
    });
    const call = `${local}(${args.join(", ")})`;
    const t = e.type;
    if (!isScalarType(t)) return call;
    if (t === "bool") return `(!!${call})`;
    return wrap(t, isBigInt(t) ? `BigInt(${call})` : call);
  }

  private unary(e: UnaryExpr): string {
    const t = e.type;
    const src = e.x.type as ScalarName;
    const x = this.expr(e.x);
    const big = isBigInt(src);
    switch (e.op) {
      case "neg": return isFloatT(t) ? `(- ${x})` : wrap(t, `- ${x}`);
      case "not": return `(!${x})`;
      case "bitnot": return wrap(t, `~${x}`);
      case "abs":
        if (isFloatT(t)) return `Math.abs(${x})`;
        if (cls(t) === "uint") return x;
        return big ? wrap(t, `babs(${x})`) : wrap(t, `Math.abs(${x})`);
      case "sqrt": return wrap(t, `Math.sqrt(${x})`);
      case "floor": case "ceil": case "trunc": case "round": return `Math.${e.op}(${x})`;
      case "rint": return `rint(${x})`;
      case "isnan": return `Number.isNaN(${x})`;
      case "isinf": return `(Math.abs(${x}) === Infinity)`;
      case "isfinite": return `Number.isFinite(${x})`;
      case "popc": return big ? `popc64(${x})` : `popc32(${unsignedBits(src, x)})`;
      case "clz": return big ? `clz64(${x})` : `(Math.clz32(${unsignedBits(src, x)}) - ${32 - bits(src)})`;
      case "ffs": return big ? `ffs64(${x})` : `ffs32(${unsignedBits(src, x)})`;
      case "brev":
        if (big) return wrap(t, `brev64(${x})`);
        return wrap(t, bits(t) === 32 ? `brev32(${x})` : `brev32(${x}) >>> ${32 - bits(t)}`);
    }
  }

  private binary(e: BinaryExpr): string {
    const t = e.type;
    const a = this.expr(e.a), b = this.expr(e.b);
    const pick = <F>(table: Record<string, F>): F => {
      const f = table[e.op];
      if (!f) throw new InternalCompilerError(`simulator: binary '${e.op}' is not defined on ${t}`, e.loc);
      return f;
    };
    if (t === "bool") return pick(BINARY_BOOL)(a, b);
    if (isFloatT(t)) {
      const s = pick(BINARY_FLOAT)(a, b);
      return e.op === "min" || e.op === "max" || e.op === "copysign" ? s : wrap(t, s);
    }
    if (isBigInt(t)) {
      const s = pick(BINARY_BIG)(a, b);
      return e.op === "min" || e.op === "max" ? s : wrap(t, s);
    }
    const s = pick(BINARY_INT)(a, b, bits(t), cls(t) === "int");
    return e.op === "min" || e.op === "max" || (e.op === "shr" && bits(t) === 32) ? `(${s})` : wrap(t, s);
  }

  private cast(e: CastExpr): string {
    const from = e.x.type as ScalarName, to = e.type;
    const x = this.expr(e.x);
    if (from === to) return x;
    const fc = cls(from), tc = cls(to);
    if (to === "bool") return isBigInt(from) ? `(${x} !== 0n)` : `(${x} !== 0)`;
    if (from === "bool") return isBigInt(to) ? `(${x} ? 1n : 0n)` : `(${x} ? 1 : 0)`;
    if (tc === "float") {
      if (isBigInt(from)) return to === "float64" ? `Number(${x})` : to === "float32" ? `big2f32(${x})` : to === "float16" ? `big2f16(${x})` : `big2bf16(${x})`;
      if (to === "float64" || (to === "float32" && isHalfFloat(from))) return x; // exact widening
      return wrap(to, x);
    }
    const info = DTYPE_INFO[to];
    if (fc === "float") {
      if (isBigInt(to)) {
        const [lo, hi] = tc === "int" ? [-(2n ** 63n), 2n ** 63n - 1n] : [0n, 2n ** 64n - 1n];
        return `f2big(${x}, ${lo}n, ${hi}n)`;
      }
      const [lo, hi] = tc === "int" ? [-(2 ** (info.bits - 1)), 2 ** (info.bits - 1) - 1] : [0, 2 ** info.bits - 1];
      return `f2i(${x}, ${lo}, ${hi})`;
    }
    // int → int
    if (isBigInt(to)) return wrap(to, isBigInt(from) ? x : `BigInt(${x})`);
    if (isBigInt(from)) return `Number(BigInt.as${tc === "int" ? "IntN" : "UintN"}(${info.bits}, ${x}))`;
    return wrap(to, x);
  }

  /** string `index` of the function's table as a JS literal */
  private string(index: Expr): string {
    const text = index.k === "const" ? this.ir.strings[Number(index.value)] : undefined;
    if (text === undefined) throw new InternalCompilerError("simulator: a string index must be a constant into the function's strings", index.loc);
    return JSON.stringify(text);
  }

  private intrinsic(e: IntrinsicExpr): string {
    const args = e.args.map((a) => this.expr(a));
    const lane = this.gen ? "T.lane" : "((tx + ty * nx + tz * nx * ny) & 31)";
    const name = e.name;
    switch (name) {
      case "syncthreads": return `(${this.syncSite()}T.op = ${WAIT.barrier}, T.w = ${BARRIERS[name]}, yield)`;
      case "syncthreadsCount": case "syncthreadsAnd": case "syncthreadsOr": {
        const [pre, [v]] = this.beforeRendezvous(e, args);
        return `(${pre}${this.syncSite()}T.op = ${WAIT.barrier}, T.w = ${BARRIERS[name]}, T.v = ${v}, yield)`;
      }
      case "shflSync": case "shflUpSync": case "shflDownSync": case "shflXorSync":
      case "allSync": case "anySync": case "eqSync": case "ballotSync": case "matchAnySync": case "matchAllSync": {
        const [pre, [m, v, l]] = this.beforeRendezvous(e, args);
        return `(${pre}${this.syncSite()}T.op = ${WAIT.warp}, T.w = ${WARP_OPS[name]}, T.m = ${m}, T.v = ${v}${l !== undefined ? `, T.l = ${l}` : ""}, yield)`;
      }
      case "fastExp2": case "fastLog2": case "fastSin": case "fastCos": case "fastRcp": case "fastTanh": case "fastDiv":
        return FAST_MATH[name](args);
      case "syncwarp": {
        const [pre, [m]] = this.beforeRendezvous(e, args);
        return `(${pre}${this.syncSite()}T.op = ${WAIT.warp}, T.w = ${WARP.syncwarp}, T.m = ${m ?? "-1"}, yield)`;
      }
      case "gridSync": return `(${this.syncSite()}T.op = ${WAIT.grid}, yield)`;
      // the lanes that reach this call site together
      case "activemask": return `(T.op = ${WAIT.warp}, T.w = ${WARP.activemask}, T.l = ${this.activemaskSites++}, yield)`;
      case "lanemaskLt": return `(((1 << ${lane}) - 1) >>> 0)`;
      case "threadfence": case "threadfenceBlock": case "threadfenceSystem": case "nanosleep": return "undefined";
      case "print": return `printf(L.out, ${this.string(e.args[0]!)}, [${args.slice(1).join(", ")}])`;
      case "cstring": return this.string(e.args[0]!);
      // the message's arguments are evaluated only when the assertion fails
      case "assert": return `(${args[0]} || assertFailed(${this.string(e.args[1]!)}, [${args.slice(2).join(", ")}]))`;
      case "throw": return `kernelThrow(${JSON.stringify(this.ir.name)}, ${this.string(e.args[0]!)}, ${args.slice(1).join(", ")})`;
      // a view is a new array's locals, made where it is assigned (assignView), never a value
      case "subarray": case "view": throw new InternalCompilerError(`simulator: '${name}' outside the assignment of a view`, e.loc);
      default: return unknownIntrinsic(name);
    }
  }
}
