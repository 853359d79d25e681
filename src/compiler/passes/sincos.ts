// Math.sin(v) and Math.cos(v) of one value share one argument reduction (as C's sincosf does).
//
// The float32 library defines both as projections of one helper: `__sin32(x)` is `__sincos32(x)[0]`,
// `__cos32(x)` is `__sincos32(x)[1]`. This pass runs before inlining and is general over such
// projections: calls of functions whose whole body is `return g(params…)[i]`, with `g` pure, whose
// arguments are the same values (arithmetic on constants and on scalar parameters and locals never assigned
// after their declaration) call `g` once, at the innermost statement list holding every such call, before the first
// statement that holds one; each call becomes its item of that result. `g` may then run where only one
// of the calls would have (another branch, a short-circuit): it is pure, so only the time differs.
// Device functions that make such calls are rewritten the same way (as copies: lowered functions are shared).

import { isScalarType } from "../../dtypes.js";
import type { CallExpr, Expr, FunctionIR, Stmt, VarExpr } from "../ir.js";
import { printExpr } from "../print.js";
import { assignedNames, declaredNames, exprChildren, forEachExpr, mapExprChildren, mapStmtExprs, stmtExprs } from "../walk.js";

export function shareProjections(fn: FunctionIR): FunctionIR {
  return new Sharer().function(fn);
}

/** A projection call's shared part: the helper, its arguments in the caller, the item taken. */
interface Projection { readonly helper: FunctionIR; readonly args: readonly Expr[]; readonly index: number }

/** Where a call sits: the statement lists from the body down, with the index of the statement taken in each. */
type Path = readonly { readonly list: readonly Stmt[]; readonly index: number }[];

interface Group { readonly key: string; readonly helper: FunctionIR; readonly args: readonly Expr[]; readonly sites: Path[] }

class Sharer {
  private readonly done = new Map<FunctionIR, FunctionIR>();
  private readonly pure = new Map<FunctionIR, boolean>();
  private counter = 0;

  function(fn: FunctionIR): FunctionIR {
    let out = this.done.get(fn);
    if (out) return out;
    const body = mapCalls(fn.body, (c) => { const callee = this.function(c.fn); return callee === c.fn ? c : { ...c, fn: callee }; });
    out = this.share(body === fn.body ? fn : { ...fn, body });
    this.done.set(fn, out);
    return out;
  }

  /** `fn` with each group of two or more projection calls of the same helper and values sharing one helper call. */
  private share(fn: FunctionIR): FunctionIR {
    const fixed = new Set([...fn.params.map((p) => p.name), ...declaredNames(fn.body)]);
    for (const name of assignedNames(fn.body)) fixed.delete(name);
    const groups = new Map<string, Group>();
    const visit = (list: readonly Stmt[], path: Path) => list.forEach((s, index) => {
      const here = [...path, { list, index }];
      stmtExprs(s).forEach((e) => forEachCall(e, (c) => {
        const p = this.projection(c, fixed);
        if (!p) return;
        const key = projectionKey(p);
        const g = groups.get(key) ?? { key, helper: p.helper, args: p.args, sites: [] };
        g.sites.push(here);
        groups.set(key, g);
      }));
      for (const nested of nestedLists(s)) visit(nested, here);
    });
    visit(fn.body, []);
    const shared = [...groups.values()].filter((g) => g.sites.length > 1);
    return shared.length ? { ...fn, body: this.hoist(fn.body, shared, fixed) } : fn;
  }

  /** The helper call `c` projects, in the caller's values, if `c` is a projection call with shareable arguments. */
  private projection(c: CallExpr, fixed: ReadonlySet<string>): Projection | undefined {
    const ret = c.fn.body.length === 1 ? c.fn.body[0] : undefined;
    const get = ret?.k === "return" ? ret.value : undefined;
    if (get?.k !== "tupleGet" || get.tuple.k !== "call") return undefined;
    const inner = get.tuple;
    if (!this.isPure(inner.fn)) return undefined;
    const args: Expr[] = [];
    for (const a of inner.args) {
      const at = a.k === "var" ? c.fn.params.findIndex((p) => p.name === a.name) : -1;
      const arg = a.k === "const" ? a : at >= 0 ? c.args[at]! : undefined;
      if (!arg || !sameEverywhere(arg, fixed)) return undefined;
      args.push(arg);
    }
    return { helper: inner.fn, args, index: get.index };
  }

  /** No stores, atomics, intrinsics or allocations in `fn` or anything it calls (its arguments are scalars). */
  private isPure(fn: FunctionIR): boolean {
    let known = this.pure.get(fn);
    if (known !== undefined) return known;
    known = fn.params.every((p) => isScalarType(p.type));
    const visit = (list: readonly Stmt[]): void => list.forEach((s) => {
      if (s.k === "store" || s.k === "alloc") known = false;
      stmtExprs(s).forEach((e) => forEachExpr(e, (x) => {
        if (x.k === "atomic" || x.k === "intrinsic" || x.k === "external" || (x.k === "call" && !this.isPure(x.fn))) known = false;
      }));
      nestedLists(s).forEach(visit);
    });
    if (known) visit(fn.body);
    this.pure.set(fn, known);
    return known;
  }

  /** `body` with each group's helper called once at its sites' common point and each site reading its item. */
  private hoist(body: readonly Stmt[], groups: readonly Group[], fixed: ReadonlySet<string>): Stmt[] {
    const locals = new Map<string, VarExpr>();
    const decls = new Map<readonly Stmt[], Map<number, Stmt[]>>();
    for (const g of groups) {
      const local: VarExpr = { k: "var", type: g.helper.returnType, name: `sincos.${this.counter++}` };
      locals.set(g.key, local);
      const at = commonPoint(g.sites);
      const inList = decls.get(at.list) ?? new Map<number, Stmt[]>();
      decls.set(at.list, inList);
      const call: Expr = { k: "call", type: local.type, fn: g.helper, args: g.args };
      inList.set(at.index, [...(inList.get(at.index) ?? []), { k: "let", name: local.name, type: local.type, init: call }]);
    }
    const site = (e: Expr): Expr => {
      const p = e.k === "call" ? this.projection(e, fixed) : undefined;
      const local = p && locals.get(projectionKey(p));
      return local ? { k: "tupleGet", type: e.type, tuple: local, index: p.index, loc: e.loc } : e;
    };
    const rewrite = (list: readonly Stmt[]): Stmt[] =>
      list.flatMap((s, i) => [...(decls.get(list)?.get(i) ?? []), mapStmtDeep(s, site, rewrite)]);
    return rewrite(body);
  }
}

/** Whether `e` has one value wherever it is in scope: arithmetic on constants and never-assigned scalars. */
function sameEverywhere(e: Expr, fixed: ReadonlySet<string>): boolean {
  switch (e.k) {
    case "const": return true;
    case "var": return isScalarType(e.type) && fixed.has(e.name);
    case "unary": case "binary": case "fma": case "cast": case "bitcast": return exprChildren(e).every((c) => sameEverywhere(c, fixed));
    default: return false;
  }
}

const helperIds = new WeakMap<FunctionIR, number>();
let nextHelperId = 0;
function projectionKey(p: Projection): string {
  let id = helperIds.get(p.helper);
  if (id === undefined) helperIds.set(p.helper, (id = nextHelperId++));
  return `${id}(${p.args.map(printExpr).join(", ")})`;
}

/** The statement before which a call dominating every site goes: where the sites' paths part. */
function commonPoint(sites: readonly Path[]): { list: readonly Stmt[]; index: number } {
  const first = sites[0]!;
  for (let depth = 0; ; depth++) {
    const here = first[depth]!; // every path shares this list (checked one level up, or the body)
    if (!sites.every((p) => p[depth]!.index === here.index)) return { list: here.list, index: Math.min(...sites.map((p) => p[depth]!.index)) };
    const next = first[depth + 1]?.list;
    if (next === undefined || !sites.every((p) => p[depth + 1]?.list === next)) return here;
  }
}

// ---------------------------------------------------------------------------
// walking

const nestedLists = (s: Stmt): (readonly Stmt[])[] =>
  s.k === "if" ? [s.then, s.else] : s.k === "loop" ? [s.body, s.update] : s.k === "block" ? [s.body] : [];

/** Each call in `e`, outermost first. */
function forEachCall(e: Expr, f: (c: CallExpr) => void): void {
  forEachExpr(e, (x) => { if (x.k === "call") f(x); });
}

/** `s` with `f` applied bottom-up to its expressions and `lists` to its nested statement lists. */
function mapStmtDeep(s: Stmt, f: (e: Expr) => Expr, lists: (l: readonly Stmt[]) => Stmt[]): Stmt {
  const deep = (e: Expr): Expr => f(mapExprChildren(e, deep));
  const m = mapStmtExprs(s, deep);
  switch (m.k) {
    case "if": return { ...m, then: lists(m.then), else: lists(m.else) };
    case "loop": return { ...m, body: lists(m.body), update: lists(m.update) };
    case "block": return { ...m, body: lists(m.body) };
    default: return m;
  }
}

/** `body` with every call node replaced by `f(call)`; the same array when nothing changed. */
function mapCalls(body: readonly Stmt[], f: (c: CallExpr) => CallExpr): Stmt[] {
  let changed = false;
  const g = (e: Expr): Expr => { if (e.k !== "call") return e; const c = f(e); changed ||= c !== e; return c; };
  const out = body.map(function each(s): Stmt { return mapStmtDeep(s, g, (l) => l.map(each)); });
  return changed ? out : (body as Stmt[]);
}
