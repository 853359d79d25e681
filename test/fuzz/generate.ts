// A seeded generator of random, well-defined kernels over the kernel language
// (docs/language.md), as TypeScript source text.
//
// Every kernel has the same frame: input arrays read anywhere, output arrays
// written only at the thread's own index (no races), an atomic accumulator
// that only order-independent integer atomics touch, and 64 threads in blocks
// of 32 or 64. Between, random statements: typed `let`s, assignments and
// compound assignments, if/else, bounded for/while/do-while loops with break
// and continue, local arrays (written before read), device function calls,
// and, at the top level only (where every thread of the block is converged),
// shared memory exchanges between syncthreads, warp shuffles, votes and block
// reductions.
//
// Undefined behaviour is avoided by construction: indices are masked into
// range, loops have constant bounds, locals and local arrays are assigned
// before use; what the docs define (integer division by zero, float→int
// saturation, shift counts modulo the width) is generated freely.

import { rng } from "../helpers/crosscheck.js";
import type { ScalarName } from "../../src/dtypes.js";

export const THREADS = 64;
export const ACC_LENGTH = 8;

/** The dtypes a `let` may have: compound assignments keep them (int8 += int8 would become int32). */
const VAR_TYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"] as const;
type VarType = (typeof VAR_TYPES)[number];
const ARRAY_TYPES: readonly ScalarName[] = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64", "bool"];
const CAST_TYPES: readonly ScalarName[] = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"];
const ACC_TYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"] as const;
/** Math functions of the device math library: compared sim vs PTX only (both run our own library). */
const TRANSCENDENTAL = ["exp", "log", "sin", "cos", "tanh", "atan", "cbrt", "log1p", "expm1", "pow", "atan2", "hypot"];
const BINARY_MATH = new Set(["pow", "atan2", "hypot"]);

export interface FuzzParam { readonly name: string; readonly dtype: ScalarName; readonly role: "in" | "out" | "acc" }

export interface FuzzKernel {
  readonly seed: number;
  /** the kernel's text: an arrow function */
  readonly source: string;
  /** device functions the kernel calls by name (passed in `env`), as `function name(…) { … }` texts */
  readonly devices: readonly { readonly name: string; readonly source: string }[];
  readonly params: readonly FuzzParam[];
  readonly block: number;
  /** a*b+c contracted to fma (the reference does not model fma: its float results are then not compared) */
  readonly fma: boolean;
  /** uses math library functions: compared between simulator and PTX only */
  readonly transcendental: boolean;
  /** the atomic operations on `acc` (one commuting group) */
  readonly atomics: readonly string[];
}

interface Scope { readonly vars: Map<string, VarType>; readonly locals: Map<string, { dtype: ScalarName; n: number }> }

class Gen {
  private readonly r: () => number;
  private counter = 0;
  readonly devices: { name: string; source: string; arity: number }[] = [];
  transcendental = false;
  /** generating a device function's body: no thread index, arrays or block-level operations */
  private inDevice = false;
  /** names of `const`s bound to a literal: named literals, weak as the literal is */
  private readonly consts: string[] = [];
  private readonly ins: FuzzParam[];
  private readonly shared: { name: string; dtype: ScalarName } | undefined;
  /** the atomic operations of this kernel: ones that commute with each other, so the result is order-independent */
  readonly atomics: readonly string[];

  constructor(seed: number, readonly params: FuzzParam[], readonly block: number, private readonly allowTranscendental: boolean, shared: ScalarName | undefined) {
    this.r = rng(seed * 2654435761 + 12345);
    this.ins = params.filter((p) => p.role === "in");
    this.shared = shared ? { name: "sh", dtype: shared } : undefined;
    const float = params.find((p) => p.role === "acc")!.dtype.startsWith("float");
    this.atomics = float ? this.pick([["add", "sub"], ["max"], ["min"]]) : this.pick([["add", "sub"], ["and"], ["or"], ["xor"], ["max"], ["min"]]);
  }

  int(n: number): number { return Math.floor(this.r() * n); }
  chance(p: number): boolean { return this.r() < p; }
  pick<T>(xs: readonly T[]): T { return xs[this.int(xs.length)]!; }
  fresh(prefix: string): string { return `${prefix}${this.counter++}`; }

  // ---------------------------------------------------------------- expressions

  /** A weak number literal (only ever next to a non-literal operand). */
  literal(): string {
    if (this.consts.length && !this.inDevice && this.chance(0.2)) return this.pick(this.consts);
    if (this.chance(0.05)) return this.pick(["Math.PI", "Math.E", "Math.SQRT1_2"]);
    const ints = [0, 1, 2, 3, 7, 31, 32, 33, 255, 256, 65535, 65536, 2147483647, -1, -2, -128, -32768, -2147483648, 12345, 1000003];
    const floats = [0.5, -0.5, 1.5, 2.25, -3.75, 0.1, 1e-3, 1e10, -1e10, 3e38, 1e-40, 0.3333333333333333, 2.5e9];
    const v = this.chance(0.6) ? this.pick(ints) : this.pick(floats);
    return v < 0 ? `(${v})` : String(v);
  }

  /** An int32 index into an array of length n (a power of two). */
  index(depth: number, s: Scope, n: number): string {
    return this.chance(0.4) && !this.inDevice ? `(i & ${n - 1})` : `(int32(${this.expr(depth, s)}) & ${n - 1})`;
  }

  leaf(s: Scope): string {
    const vars = [...s.vars.keys()];
    const k = this.int(10);
    if ((k < 4 || this.inDevice) && vars.length) return this.pick(vars);
    if (k < 7) {
      const a = this.pick(this.ins);
      return `${a.name}[${this.chance(0.7) ? "i" : `(i * ${1 + this.int(7)} + ${this.int(64)}) & ${THREADS - 1}`}]`;
    }
    if (k < 8) return this.pick(["i", "cuda.threadIdx.x", "cuda.blockIdx.x", "cuda.laneid", "cuda.blockDim.x"]);
    if (k < 9 && s.locals.size) {
      const [name, l] = this.pick([...s.locals.entries()]);
      return `${name}[i & ${l.n - 1}]`;
    }
    if (this.chance(0.3)) { const b = this.int(100) - 50; return b < 0 ? `(${b}n)` : `${b}n`; }
    return `${this.pick(CAST_TYPES)}(${this.literal()})`;
  }

  /** A random expression; `literalOk`: it may be a bare (weak) literal. */
  expr(depth: number, s: Scope, literalOk = false): string {
    if (depth <= 0 || this.chance(0.2)) return literalOk && this.chance(0.3) ? this.literal() : this.leaf(s);
    const d = depth - 1;
    const k = this.int(100);
    if (k < 40) {
      const op = this.pick(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", ">>>", "<", "<=", ">", ">=", "===", "!==", "==", "!=", "&&", "||", "+", "-", "*"]);
      const lit = !["<<", ">>", ">>>", "&&", "||"].includes(op) && this.chance(0.3);
      const litLeft = lit && this.chance(0.5);
      const a = litLeft ? this.literal() : this.expr(d, s);
      const b = lit && !litLeft ? this.literal() : this.expr(d, s, op === "<<" || op === ">>" || op === ">>>");
      return `(${a} ${op} ${b})`;
    }
    if (k < 48) return `(${this.pick(["-", "~", "!", "+"])}${this.expr(d, s)})`;
    if (k < 55) return `(${this.cond(d, s)} ? ${this.expr(d, s, true)} : ${this.expr(d, s)})`;
    if (k < 65) return `${this.pick(CAST_TYPES)}(${this.expr(d, s)})`;
    if (k < 80) return this.math(d, s);
    if (k < 84) return `${this.pick(["Math.floor", "Math.trunc"])}(${this.expr(d, s)} / ${this.expr(d, s, true)})`;
    if (k < 86) return `((${this.expr(d, s)} / ${this.expr(d, s)}) | 0)`;
    if (k < 90) return `cuda.${this.pick(["popc", "clz", "ffs", "brev"])}(${this.pick(["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])}(${this.expr(d, s)}))`;
    if (k < 94 && this.devices.length) {
      const f = this.pick(this.devices);
      return `${f.name}(${Array.from({ length: f.arity }, () => this.expr(d, s)).join(", ")})`;
    }
    if (k < 96 && this.allowTranscendental) {
      this.transcendental = true;
      const f = this.pick(TRANSCENDENTAL), t = this.pick(["float32", "float64"]);
      return BINARY_MATH.has(f) ? `Math.${f}(${t}(${this.expr(d, s)}), ${t}(${this.expr(d, s)}))` : `Math.${f}(${t}(${this.expr(d, s)}))`;
    }
    return `(${this.expr(d, s)} ** 2)`;
  }

  math(d: number, s: Scope): string {
    const f = this.pick(["min", "max", "abs", "floor", "ceil", "trunc", "round", "sqrt", "sign", "fround", "imul", "clz32", "fma", "min3", "isNaN", "isFinite", "asIntN"]);
    const e = () => this.expr(d, s);
    const ft = () => this.pick(["float32", "float64"]);
    switch (f) {
      case "min": case "max": return `Math.${f}(${e()}, ${e()})`;
      case "min3": return `Math.${this.pick(["min", "max"])}(${e()}, ${e()}, ${e()})`;
      case "imul": return `Math.imul(int32(${e()}), int32(${e()}))`;
      case "clz32": return `Math.clz32(uint32(${e()}))`;
      case "isNaN": case "isFinite": return `Number.${f}(${e()})`;
      case "asIntN": return `BigInt.${this.pick(["asIntN", "asUintN"])}(64, int64(${e()}))`;
      case "fma": { const t = ft(); return `cuda.fma(${t}(${e()}), ${t}(${e()}), ${t}(${e()}))`; }
      default: return `Math.${f}(${e()})`;
    }
  }

  cond(d: number, s: Scope): string {
    if (this.chance(0.7)) return `(${this.expr(d, s)} ${this.pick(["<", "<=", ">", ">=", "===", "!=="])} ${this.expr(d, s, true)})`;
    return this.expr(d, s);
  }

  // ---------------------------------------------------------------- statements

  /** Statements at the given nesting (top: block-converged, where barriers and warp operations may go). */
  statements(depth: number, s: Scope, count: number, top: boolean, inLoop: boolean): string[] {
    const out: string[] = [];
    for (let n = 0; n < count; n++) out.push(...this.statement(depth, s, top, inLoop));
    return out;
  }

  statement(depth: number, s: Scope, top: boolean, inLoop: boolean): string[] {
    const k = this.int(100);
    const vars = [...s.vars.entries()];
    if (k < 3 && top && !this.inDevice) return [this.namedLiteral()];
    if (k < 20 || !vars.length) return [this.declare(s)];
    const deviceOk = k < 40 || (k >= 50 && k < 68 && depth > 0) || (k >= 68 && k < 71 && inLoop);
    if (this.inDevice && !deviceOk) return [this.declare(s)];
    if (k < 40) {
      const [v, t] = this.pick(vars);
      if (this.chance(0.5)) return [`${v} = ${t}(${this.expr(3, s)});`];
      const ops = t.startsWith("float") ? ["+=", "-=", "*=", "/=", "%="] : ["+=", "-=", "*=", "&=", "|=", "^=", "<<=", ">>=", "%="];
      if (this.chance(0.15)) return [`${v}${this.pick(["++", "--"])};`];
      return [`${v} ${this.pick(ops)} ${t}(${this.expr(2, s)});`];
    }
    if (k < 50) {
      const o = this.pick(this.params.filter((p) => p.role === "out"));
      return [`${o.name}[i] ${this.chance(0.7) ? "=" : "+="} ${this.expr(3, s)};`];
    }
    if (k < 58 && depth > 0) {
      const body = this.nested(depth, s, inLoop);
      const els = this.chance(0.4) ? ` else { ${this.nested(depth, s, inLoop).join(" ")} }` : "";
      return [`if (${this.cond(2, s)}) { ${body.join(" ")} }${els}`];
    }
    if (k < 68 && depth > 0) return [this.loop(depth, s)];
    if (k < 71 && inLoop) return [`if (${this.cond(2, s)}) ${this.pick(["break", "continue"])};`];
    if (k < 76) {
      const acc = this.params.find((p) => p.role === "acc")!;
      const op = this.pick(this.atomics);
      // float sums of small integers are exact, so their order does not matter
      const value = acc.dtype.startsWith("float") && op !== "max" && op !== "min" ? `${acc.dtype}(int8(${this.expr(2, s)}))` : `${acc.dtype}(${this.expr(2, s)})`;
      return [`cuda.atomic.${op}(acc, ${this.index(2, s, ACC_LENGTH)}, ${value});`];
    }
    if (k < 80) return this.localArray(s);
    if (k < 83 && this.devices.length < 2 && top) { this.device(); return []; }
    if (top && k < 88 && this.shared) return this.sharedExchange(s);
    if (top && k < 96) return this.warp(s);
    if (top) return [this.blockVote(s)];
    return [this.declare(s)];
  }

  nested(depth: number, s: Scope, inLoop: boolean): string[] {
    const inner: Scope = { vars: new Map(s.vars), locals: new Map(s.locals) };
    return this.statements(depth - 1, inner, 1 + this.int(3), false, inLoop);
  }

  /** `const c = <literal>` at the top level, where it stays in scope for the rest of the kernel. */
  namedLiteral(): string {
    const c = this.fresh("c");
    const line = `const ${c} = ${this.literal()};`;
    this.consts.push(c);
    return line;
  }

  declare(s: Scope): string {
    const t = this.pick(VAR_TYPES);
    const v = this.fresh("v");
    const init = `${t}(${this.expr(3, s)})`;
    s.vars.set(v, t);
    return `let ${v} = ${init};`;
  }

  loop(depth: number, s: Scope): string {
    const c = this.fresh("k");
    const bound = this.chance(0.7) ? String(this.int(5)) : `(int32(${this.expr(1, s)}) & 3)`;
    const inner: Scope = { vars: new Map(s.vars), locals: new Map(s.locals) };
    // the counter is not in scope for the body: an assignment to it could loop forever
    const body = this.statements(depth - 1, inner, 1 + this.int(3), false, true).join(" ");
    switch (this.int(3)) {
      case 0: return `for (let ${c} = 0; ${c} < ${bound}; ${c}++) { ${body} }`;
      case 1: return `{ let ${c} = 0; while (${c} < ${bound}) { ${c}++; ${body} } }`;
      default: return `{ let ${c} = 0; do { ${c}++; ${body} } while (${c} < ${bound}); }`;
    }
  }

  localArray(s: Scope): string[] {
    const name = this.fresh("L");
    const dtype = this.pick(ARRAY_TYPES.filter((t) => t !== "bool"));
    const n = this.pick([2, 4, 8]);
    const c = this.fresh("k");
    // readable only once every element is written
    const lines = [`const ${name} = cuda.local.array(${n}, ${dtype});`, `for (let ${c} = 0; ${c} < ${n}; ${c}++) ${name}[${c}] = ${this.expr(2, s)};`];
    s.locals.set(name, { dtype, n });
    return [...lines, `${name}[${this.index(1, s, n)}] = ${this.expr(2, s)};`];
  }

  /** Each thread writes its slot, and after a barrier reads another thread's. */
  sharedExchange(s: Scope): string[] {
    const sh = this.shared!;
    const v = this.fresh("v");
    const t = this.pick(VAR_TYPES);
    const from = this.chance(0.5) ? `(cuda.threadIdx.x + ${1 + this.int(this.block)}) & ${this.block - 1}` : `(int32(${this.expr(2, s)}) & ${this.block - 1})`;
    const lines = [`${sh.name}[cuda.threadIdx.x] = ${this.expr(3, s)};`, "cuda.syncthreads();", `let ${v} = ${t}(${sh.name}[${from}]);`, "cuda.syncthreads();"];
    s.vars.set(v, t);
    return lines;
  }

  warp(s: Scope): string[] {
    const ints = [...s.vars.entries()].filter(([, t]) => !t.startsWith("float"));
    const [x, xt] = this.pick([...s.vars.entries()]);
    const w = this.fresh("w");
    const k = this.int(8);
    const full = "0xffffffff";
    let call: string, t: VarType;
    if (k < 4) {
      const fn = this.pick(["shflSync", "shflUpSync", "shflDownSync", "shflXorSync"]);
      const lane = this.chance(0.6) ? String(this.int(40)) : `int32(${this.expr(1, s)})`;
      call = `cuda.${fn}(${full}, ${x}, ${lane})`; t = xt;
    } else if (k < 6) {
      call = `cuda.${this.pick(["ballotSync", "allSync", "anySync", "eqSync"])}(${full}, ${this.cond(1, s)})`; t = "uint32";
    } else if (k < 7 && ints.length) {
      call = `cuda.matchAnySync(${full}, ${this.pick(ints)[0]})`; t = "uint32";
    } else {
      call = "cuda.activemask()"; t = "uint32";
    }
    s.vars.set(w, t);
    return [`let ${w} = ${t}(${call});`];
  }

  blockVote(s: Scope): string {
    const v = this.fresh("v");
    const line = `let ${v} = cuda.${this.pick(["syncthreadsCount", "syncthreadsAnd", "syncthreadsOr"])}(${this.cond(1, s)});`;
    s.vars.set(v, "int32");
    return line;
  }

  /** A device function of one to three parameters: a few statements and one return. */
  device(): void {
    const name = `dev${this.devices.length}`;
    const arity = 1 + this.int(3);
    const ps = Array.from({ length: arity }, (_, j) => `p${j}`);
    // parameters take their call site's types: the body sees them only through casts
    const s: Scope = { vars: new Map(), locals: new Map() };
    const body: string[] = ps.map((p) => { const t = this.pick(VAR_TYPES); const v = this.fresh("q"); s.vars.set(v, t); return `let ${v} = ${t}(${p});`; });
    this.inDevice = true;
    body.push(...this.statements(1, s, 1 + this.int(3), false, false));
    const rt = this.pick(VAR_TYPES);
    body.push(`return ${rt}(${this.expr(2, s)});`);
    this.inDevice = false;
    this.devices.push({ name, source: `function ${name}(${ps.join(", ")}) { ${body.join(" ")} }`, arity });
  }
}

/** The kernel for a seed. */
export function generateKernel(seed: number): FuzzKernel {
  const r = rng(seed + 1);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const params: FuzzParam[] = [];
  const nIn = 1 + Math.floor(r() * 3), nOut = 1 + Math.floor(r() * 3);
  for (let k = 0; k < nIn; k++) params.push({ name: `in${k}`, dtype: pick(ARRAY_TYPES), role: "in" });
  for (let k = 0; k < nOut; k++) params.push({ name: `out${k}`, dtype: pick(ARRAY_TYPES), role: "out" });
  params.push({ name: "acc", dtype: pick(ACC_TYPES), role: "acc" });
  const block = pick([32, 64]);
  const shared = r() < 0.5 ? pick(ARRAY_TYPES) : undefined;
  const g = new Gen(seed, params, block, r() < 0.15, shared);
  const s: Scope = { vars: new Map(), locals: new Map() };
  const lines = ["const i = cuda.grid(1);"];
  if (shared) lines.push(`const sh = cuda.shared.array(${block}, ${shared});`);
  lines.push(...g.statements(3, s, 4 + Math.floor(r() * 8), true, false));
  for (const p of params.filter((q) => q.role === "out")) lines.push(`${p.name}[i] = ${g.expr(3, s)};`);
  const source = `(${params.map((p) => p.name).join(", ")}) => {\n  // seed ${seed}\n  ${lines.join("\n  ")}\n}`;
  return { seed, source, devices: g.devices.map(({ name, source: src }) => ({ name, source: src })), params, block, fma: r() < 0.2, transcendental: g.transcendental, atomics: g.atomics };
}

