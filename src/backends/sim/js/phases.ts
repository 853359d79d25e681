// Barrier kernels as phases: a kernel whose barriers are all at the top level
// of its body or inside loops (not under an `if`) runs the code between two
// barriers as one plain loop over the block's threads — a phase — instead of
// running every thread as a generator. A barrier is then the end of a phase.
//
// Locals that live across a barrier (named in more than one phase) are kept
// per thread in arrays indexed by the thread's linear index `ph$t`: loaded at
// the start of each phase that names them, stored at its end when assigned.
// `syncthreadsCount/And/Or` count their predicate over the phase that ends at
// them; the result is assigned at the start of the next phase. A loop that
// holds a barrier evaluates its condition per thread at the end of the phase
// before each iteration; every live thread must agree (threads that returned
// do not take part), or the launch fails with a divergence error.
//
// Kernels with warp operations, grid sync, or a barrier under an `if` (or in
// an expression we cannot split, or in a loop left by break / continue) keep
// the generator path (planPhases returns the reason).

import { DTYPE_INFO, isArrayType, isTupleType, type Type } from "../../../dtypes.js";
import type { Expr, FunctionIR, IntrinsicExpr, Loc, LoopStmt, Stmt } from "../../../compiler/ir.js";
import { bodyHas, exprChildren, exprHas, mapExprChildren, stmtExprs, walkStmts } from "../../../compiler/walk.js";
import { INTRINSICS, type IntrinsicInfo } from "../../../compiler/intrinsics.js";

type BarrierOp = NonNullable<IntrinsicInfo["reduction"]>;
/** operations that need lanes or the grid to rendezvous: the generator path's business */
const needsGeneratorPath = (e: IntrinsicExpr): boolean => INTRINSICS[e.name].effect === "warp" || INTRINSICS[e.name].effect === "grid";

/** what a thread does at the end of a phase, after its statements */
type Tail =
  | { readonly k: "reduce"; readonly id: number; readonly arg: Expr }
  | { readonly k: "cond"; readonly id: number; readonly cond: Expr | null; readonly loc: Loc | undefined };

interface Phase {
  /** locals assigned a barrier's result (`ph$r<id>`) as the phase starts */
  readonly results: { readonly name: string; readonly id: number }[];
  readonly stmts: Stmt[];
  readonly tails: Tail[];
}

export type PlanNode =
  | { readonly k: "phase"; readonly phase: Phase }
  /** where the block's threads pass a barrier (the sanitizer counts them; plain code has nothing to do) */
  | { readonly k: "barrier"; readonly loc: Loc | undefined }
  /** the block-wide result of a reducing barrier, from its phase's count */
  | { readonly k: "reduce"; readonly id: number; readonly op: BarrierOp }
  | { readonly k: "loop"; readonly testFirst: boolean; readonly agree: number; readonly body: PlanNode[] };

export interface PhasePlan {
  /** the kernel body with barriers split out of the statements that held them */
  readonly body: Stmt[];
  readonly nodes: readonly PlanNode[];
  /** per-thread locals named in more than one phase, with their types (arrays: the array type) */
  readonly persistent: ReadonlyMap<string, Type>;
  /**
   * locals named in more than one phase that are recomputed where a phase needs them instead: never
   * assigned, their `let` reads only constants, special registers and array extents (`tx = threadIdx.x`)
   */
  readonly recomputed: ReadonlyMap<string, Expr>;
  readonly reduces: number;
  readonly loops: number;
  readonly hasReturn: boolean;
}

class NotPhases extends Error {}

const isBarrier = (e: Expr): e is IntrinsicExpr => e.k === "intrinsic" && INTRINSICS[e.name].effect === "barrier";
const hasBarrier = (body: readonly Stmt[]) => bodyHas(body, isBarrier);

/** `break` / `continue` naming `label` anywhere in body */
function jumpsTo(body: readonly Stmt[], label: string): boolean {
  let found = false;
  walkStmts(body, (s) => { if ((s.k === "break" || s.k === "continue") && s.label === label) found = true; });
  return found;
}

/** an expression whose value depends only on the thread's locals (no memory, no effects) */
const pureExpr = (e: Expr): boolean =>
  !exprHas(e, (x) => x.k === "load" || x.k === "atomic" || x.k === "intrinsic" || x.k === "call" || x.k === "external");
const pureStmt = (s: Stmt): boolean =>
  (s.k === "let" && (!s.init || pureExpr(s.init)) && !isArrayType(s.type)) || (s.k === "assign" && pureExpr(s.value));

/** The kernel's phases, or why it needs the generator path. */
export function planPhases(ir: FunctionIR): PhasePlan | string {
  if (ir.features.gridSync) return "grid sync";
  if (bodyHas(ir.body, (e) => e.k === "intrinsic" && needsGeneratorPath(e))) return "warp operations";
  try {
    const body = splitBarriers(ir.body, { n: 0 });
    const b = new Builder();
    b.items(body);
    return {
      body, nodes: b.root, ...localsAcrossPhases(body, b.phases),
      reduces: b.reduces, loops: b.loops, hasReturn: hasReturn(body),
    };
  } catch (e) {
    if (e instanceof NotPhases) return e.message;
    throw e;
  }
}

function hasReturn(body: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(body, (s) => { if (s.k === "return") found = true; });
  return found;
}

// ---------------------------------------------------------------------------
// barriers out of expressions: `o[tid] = syncthreadsCount(p)` → `let b = syncthreadsCount(p); o[tid] = b`

const SPLIT_NAME = "barrier#"; // `#` cannot occur in a kernel's own names

function splitBarriers(body: readonly Stmt[], counter: { n: number }): Stmt[] {
  return body.flatMap((s): Stmt[] => {
    switch (s.k) {
      case "loop": return [{ ...s, body: splitBarriers(s.body, counter), update: splitBarriers(s.update, counter) }];
      case "block": return [{ ...s, body: splitBarriers(s.body, counter) }];
      case "if": return [s]; // a barrier under an if is refused by the Builder
      default: break;
    }
    if (!stmtExprs(s).some((e) => exprHas(e, isBarrier)) || barrierStmt(s)) return [s];
    const name = `${SPLIT_NAME}${counter.n++}`;
    const found = { barrier: undefined as IntrinsicExpr | undefined, impure: false };
    const replaced = replaceBarrier(s, name, found);
    return [{ k: "let", name, type: found.barrier!.type, init: found.barrier!, loc: s.loc }, replaced];
  });
}

/** the barrier, when s is `sync…()`, `let x = sync…(p)` or `x = sync…(p)` */
function barrierStmt(s: Stmt): IntrinsicExpr | undefined {
  const e = s.k === "expr" ? s.expr : s.k === "let" ? s.init : s.k === "assign" ? s.value : undefined;
  return e && isBarrier(e) && !e.args.some((a) => exprHas(a, isBarrier)) ? e : undefined;
}

/**
 * s with its one barrier replaced by the local `name`. Moving the barrier ahead of the statement is only
 * sound when nothing evaluated before it reads memory or has an effect, and when it is always evaluated.
 */
function replaceBarrier(s: Stmt, name: string, found: { barrier: IntrinsicExpr | undefined; impure: boolean }): Stmt {
  const visit = (e: Expr, conditional: boolean): Expr => {
    if (isBarrier(e)) {
      if (found.barrier || found.impure || conditional || e.args.some((a) => exprHas(a, isBarrier))) {
        throw new NotPhases("a barrier inside an expression that cannot be split at it");
      }
      found.barrier = e;
      return { k: "var", type: e.type, name, loc: e.loc };
    }
    let i = 0;
    const out = mapExprChildren(e, (c) => {
      const maybe = (e.k === "logical" && i > 0) || (e.k === "select" && i > 0);
      i++;
      return visit(c, conditional || maybe);
    });
    if (!found.barrier && !pureExpr(e)) found.impure = true;
    return out;
  };
  const v = (e: Expr) => visit(e, false);
  switch (s.k) {
    case "let": return { ...s, init: v(s.init!) };
    case "assign": return { ...s, value: v(s.value) };
    case "store": return { ...s, array: v(s.array), index: s.index.map(v), value: v(s.value) };
    case "expr": return { ...s, expr: v(s.expr) };
    default: throw new NotPhases(`a barrier in a '${s.k}' statement`);
  }
}

// ---------------------------------------------------------------------------
// the phase tree

class Builder {
  readonly root: PlanNode[] = [];
  readonly phases: Phase[] = [];
  reduces = 0;
  loops = 0;
  private seq = this.root;
  private open: Phase | undefined;
  /** barrier results waiting for the next phase to start */
  private pending: { name: string; id: number }[] = [];

  items(body: readonly Stmt[]): void {
    for (const s of body) {
      if (!hasBarrier([s])) { this.phase().stmts.push(s); continue; }
      const barrier = barrierStmt(s);
      if (barrier) { this.barrier(barrier, s.k === "let" || s.k === "assign" ? s.name : undefined, s.loc); continue; }
      switch (s.k) {
        case "block":
          if (jumpsTo(s.body, s.label)) throw new NotPhases("a barrier in a block left by break");
          this.items(s.body);
          break;
        case "loop": this.loop(s); break;
        case "if": throw new NotPhases("a barrier under an if");
        default: throw new NotPhases(`a barrier in a '${s.k}' statement`);
      }
    }
  }

  /** the open phase, or a new one (which takes the pending barrier results) */
  private phase(): Phase {
    if (!this.open) {
      this.open = { results: this.pending, stmts: [], tails: [] };
      this.pending = [];
      this.phases.push(this.open);
      this.seq.push({ k: "phase", phase: this.open });
    }
    return this.open;
  }

  private close(): void {
    this.open = undefined;
  }

  private barrier(e: IntrinsicExpr, target: string | undefined, loc: Loc | undefined): void {
    const op = INTRINSICS[e.name].reduction;
    if (!op) { this.close(); this.seq.push({ k: "barrier", loc: loc ?? e.loc }); return; }
    const id = this.reduces++;
    this.phase().tails.push({ k: "reduce", id, arg: e.args[0]! });
    this.close();
    this.seq.push({ k: "barrier", loc: loc ?? e.loc }, { k: "reduce", id, op });
    if (target) this.pending.push({ name: target, id });
  }

  private loop(s: LoopStmt): void {
    if (s.cond && exprHas(s.cond, isBarrier)) throw new NotPhases("a barrier in a loop condition");
    if (jumpsTo(s.body, s.label) || jumpsTo(s.update, s.label)) throw new NotPhases("a barrier in a loop left by break or continue");
    const agree = this.loops++;
    const cond: Tail = { k: "cond", id: agree, cond: s.cond, loc: s.loc };
    if (s.testFirst) {
      this.phase().tails.push(cond);
    } else if (this.pending.length) {
      this.phase(); // the results, once, before the first iteration
    }
    this.close();
    const node: PlanNode = { k: "loop", testFirst: s.testFirst, agree, body: [] };
    this.seq.push(node);
    const outer = this.seq;
    this.seq = node.body;
    // a plain barrier ending the body: the update and the condition, if they only touch the thread's
    // locals, run before it, in the body's last phase (a barrier orders memory, not registers)
    const last = s.body[s.body.length - 1];
    const early = last !== undefined && barrierStmt(last)?.name === "syncthreads" && s.update.every(pureStmt) && (!s.cond || pureExpr(s.cond));
    this.items(early ? s.body.slice(0, -1) : s.body);
    this.items(s.update);
    this.phase().tails.push(cond);
    this.close();
    if (early) this.seq.push({ k: "barrier", loc: last.loc });
    this.seq = outer;
  }
}

// ---------------------------------------------------------------------------
// locals across barriers

/** the per-thread locals (lets and local arrays) named in more than one phase: kept per thread, or recomputed */
function localsAcrossPhases(body: readonly Stmt[], phases: readonly Phase[]): Pick<PhasePlan, "persistent" | "recomputed"> {
  const types = new Map<string, Type>(), inits = new Map<string, Expr | undefined>(), assigned = new Set<string>();
  walkStmts(body, (s) => {
    if (s.k === "let") { types.set(s.name, s.type); inits.set(s.name, s.init); }
    if (s.k === "alloc" && s.type.space === "local") types.set(s.name, s.type);
    if (s.k === "assign") assigned.add(s.name);
  });
  const seen = new Map<string, number>();
  for (const names of phases.map(phaseNames)) for (const n of names.named) if (types.has(n)) seen.set(n, (seen.get(n) ?? 0) + 1);
  const persistent = new Map<string, Type>(), recomputed = new Map<string, Expr>();
  for (const [name, count] of seen) {
    if (count < 2) continue;
    const init = inits.get(name);
    if (init && !assigned.has(name) && recomputable(init, assigned)) recomputed.set(name, init);
    else persistent.set(name, types.get(name)!);
  }
  return { persistent, recomputed };
}

const recomputable = (e: Expr, assigned: ReadonlySet<string>): boolean =>
  ["const", "special", "binary", "unary", "cast", "arrayAttr"].includes(e.k)
  && (e.k !== "arrayAttr" || (e.array.k === "var" && !assigned.has(e.array.name)))
  && exprChildren(e).every((c) => c.k === "var" ? e.k === "arrayAttr" : recomputable(c, assigned));

interface PhaseNames {
  readonly named: Set<string>;
  readonly assigned: Set<string>;
  /** declared (or given a barrier's result) in the phase: no value to load when it starts */
  readonly fresh: Set<string>;
}

function phaseNames(p: Phase): PhaseNames {
  const named = new Set<string>(), assigned = new Set<string>(), fresh = new Set<string>();
  const expr = (e: Expr | null): void => {
    if (!e) return;
    if (e.k === "var") named.add(e.name);
    exprChildren(e).forEach(expr);
  };
  for (const r of p.results) { named.add(r.name); assigned.add(r.name); fresh.add(r.name); }
  walkStmts(p.stmts, (s) => {
    stmtExprs(s).forEach(expr);
    if (s.k === "let" || s.k === "assign" || s.k === "alloc") { named.add(s.name); assigned.add(s.name); }
    // names are unique and a let's scope starts at it: nothing in the phase reads an older value
    if (s.k === "let" || s.k === "alloc") fresh.add(s.name);
  });
  for (const t of p.tails) expr(t.k === "reduce" ? t.arg : t.cond);
  return { named, assigned, fresh };
}

// ---------------------------------------------------------------------------
// JavaScript

/** what the phase emitter needs from the kernel's emitter */
export interface PhaseHost {
  /** JS lines of statements at an indentation depth */
  stmts(body: readonly Stmt[], depth: number): string[];
  expr(e: Expr): string;
  /** the JS locals that hold a local (an array: its view, then its variable offset / shape / strides); `object`: not a number */
  ids(name: string): readonly { readonly id: string; readonly object: boolean }[];
  /** the index in `sites` of a source position */
  site(loc: Loc | undefined): number;
  /** sanitizing: a line that makes the sanitizer's thread the one starting a phase, and one per barrier passed */
  readonly sanitizer?: { enter: string; barrier(site: number, exited: string): string };
}

/** the per-thread array type holding a component of a local of type t (`object`: a view or a shadow, not a number) */
function storageOf(t: Type, object: boolean): string {
  if (object || isTupleType(t) || t === "void") return "Array";
  if (isArrayType(t)) return "Float64Array"; // an array's offsets, shapes, strides
  return DTYPE_INFO[t].simLocal;
}

/** Lines of the launch function (before the block loop) and of one block (inside it). */
export function emitPhases(plan: PhasePlan, host: PhaseHost): { setup: string[]; block: string[] } {
  return new PhaseEmitter(plan, host).emit();
}

const REDUCE_JS: Record<BarrierOp, (c: string, n: string) => string> = {
  count: (c) => c, and: (c, n) => `(${c} === ${n} ? 1 : 0)`, or: (c) => `(${c} > 0 ? 1 : 0)`,
};

class PhaseEmitter {
  private readonly lines: string[] = [];
  private readonly store = new Map<string, string>(); // JS local → its per-thread array

  constructor(private readonly plan: PhasePlan, private readonly host: PhaseHost) {}

  emit(): { setup: string[]; block: string[] } {
    const setup = [`const ph$nt = nx * ny * nz;`];
    for (const [name, type] of this.plan.persistent) {
      for (const { id, object } of this.host.ids(name)) {
        this.store.set(id, `ph$l$${id}`);
        setup.push(`const ph$l$${id} = new ${storageOf(type, object)}(ph$nt);`);
      }
    }
    if (this.plan.hasReturn) setup.push(`const ph$exit = new Uint8Array(ph$nt);`);
    const counters = [
      ...Array.from({ length: this.plan.reduces }, (_, i) => [`ph$c${i}`, `ph$n${i}`, `ph$r${i}`]).flat(),
      ...Array.from({ length: this.plan.loops }, (_, i) => `ph$a${i}`),
    ];
    if (counters.length) setup.push(`let ${counters.join(", ")};`);
    if (this.plan.hasReturn) this.lines.push(`    ph$exit.fill(0);`);
    this.nodes(this.plan.nodes, 2);
    return { setup, block: this.lines };
  }

  private line(depth: number, s: string): void {
    this.lines.push("  ".repeat(depth) + s);
  }

  private nodes(nodes: readonly PlanNode[], depth: number): void {
    for (const n of nodes) {
      switch (n.k) {
        case "phase": this.phase(n.phase, depth); break;
        case "barrier":
          if (this.host.sanitizer) this.line(depth, this.host.sanitizer.barrier(this.host.site(n.loc), this.plan.hasReturn ? "ph$exit" : "undefined"));
          break;
        case "reduce": this.line(depth, `ph$r${n.id} = ${REDUCE_JS[n.op](`ph$c${n.id}`, `ph$n${n.id}`)};`); break;
        case "loop":
          this.line(depth, n.testFirst ? `while (ph$a${n.agree} === 1) {` : `do {`);
          this.nodes(n.body, depth + 1);
          this.line(depth, n.testFirst ? `}` : `} while (ph$a${n.agree} === 1);`);
          break;
      }
    }
  }

  private phase(p: Phase, depth: number): void {
    const { named, assigned, fresh } = phaseNames(p);
    const kept = (names: Set<string>) => [...names].filter((n) => this.plan.persistent.has(n)).flatMap((n) => this.host.ids(n).map((x) => x.id));
    for (const t of p.tails) this.line(depth, t.k === "reduce" ? `ph$c${t.id} = 0, ph$n${t.id} = 0;` : `ph$a${t.id} = -1;`);
    this.line(depth, `for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {`);
    const d = depth + 1;
    if (this.host.sanitizer) this.line(d, this.host.sanitizer.enter);
    if (this.plan.hasReturn) this.line(d, `if (ph$exit[ph$t] !== 0) continue;`);
    const loads = kept(new Set([...named].filter((n) => !fresh.has(n))));
    if (loads.length) this.line(d, loads.map((id) => `${id} = ${this.store.get(id)}[ph$t]`).join(", ") + ";");
    for (const n of named) {
      const init = this.plan.recomputed.get(n);
      if (init && !fresh.has(n)) this.line(d, `${this.host.ids(n)[0]!.id} = ${this.host.expr(init)};`);
    }
    for (const r of p.results) this.line(d, `${this.host.ids(r.name)[0]!.id} = ph$r${r.id};`);
    this.lines.push(...this.host.stmts(p.stmts, d));
    for (const t of p.tails) {
      if (t.k === "reduce") {
        this.line(d, `if (${this.host.expr(t.arg)}) ph$c${t.id}++;`);
        this.line(d, `ph$n${t.id}++;`);
      } else {
        const a = `ph$a${t.id}`;
        this.line(d, `{ const ph$v = ${t.cond ? this.host.expr(t.cond) : "true"} ? 1 : 0;`);
        this.line(d, `  if (${a} < 0) ${a} = ph$v; else if (${a} !== ph$v) divergentLoop(sites[${this.host.site(t.loc)}], ph$v === 1, tx, ty, tz, bx, by, bz); }`);
      }
    }
    const saves = kept(assigned);
    if (saves.length) this.line(d, saves.map((id) => `${this.store.get(id)}[ph$t] = ${id}`).join(", ") + ";");
    this.line(depth, `}`);
  }
}
