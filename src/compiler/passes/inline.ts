// Inlines every device-function call (user functions and the math library),
// so targets never see `call` nodes. A callee's locals and labels get a
// fresh prefix; its `return`s become an assignment plus a `break` out of a
// labelled block. Calls in conditionally evaluated places (the right of
// && / ||, the arms of ?:, loop conditions) keep their conditional
// evaluation by becoming if statements.

import { isScalarType } from "../../dtypes.js";
import type { Expr, FunctionIR, Stmt, VarExpr } from "../ir.js";
import { INTRINSICS } from "../intrinsics.js";
import { int32Const } from "../ir.js";
import { foldExpr } from "./fold.js";
import { exprHas, mapBodyExprs, mapExprChildren, mapStmtExprs, zeroConst } from "../walk.js";

export function inlineCalls(fn: FunctionIR): FunctionIR {
  const inliner = new Inliner([...fn.strings]);
  const body = inliner.block(fn.body);
  return { ...fn, body, strings: inliner.strings };
}

const hasCall = (e: Expr): boolean => exprHas(e, (x) => x.k === "call");

class Inliner {
  private counter = 0;

  /** the caller's string table, which inlined bodies' strings join */
  constructor(readonly strings: string[]) {}

  block(stmts: readonly Stmt[]): Stmt[] {
    const out: Stmt[] = [];
    for (const s of stmts) this.stmt(s, out);
    return out;
  }

  private stmt(s: Stmt, out: Stmt[]): void {
    switch (s.k) {
      case "if":
        out.push({ ...s, cond: this.hoist(s.cond, out), then: this.block(s.then), else: this.block(s.else) });
        return;
      case "block":
        out.push({ ...s, body: this.block(s.body) });
        return;
      case "loop": {
        const body = this.block(s.body);
        const update = this.block(s.update);
        if (!s.cond || !hasCall(s.cond)) { out.push({ ...s, body, update }); return; }
        // the condition needs statements: test it inside the loop, where `continue` re-runs it after the update
        const pre: Stmt[] = [];
        const cond = this.hoist(s.cond, pre);
        const exit: Stmt = { k: "if", cond: { k: "unary", op: "not", type: "bool", x: cond }, then: [{ k: "break", label: s.label }], else: [] };
        if (s.testFirst) out.push({ ...s, cond: null, body: [...pre, exit, ...body], update });
        else out.push({ ...s, cond: null, body, update: [...update, ...pre, exit] });
        return;
      }
      default:
        out.push(mapStmtExprs(s, (e) => this.hoist(e, out)));
    }
  }

  /** Returns a call-free version of `e`, appending the statements it needs to `out`. */
  hoist(e: Expr, out: Stmt[]): Expr {
    if (!hasCall(e)) return e;
    if (e.k === "call") return this.inlineCall(e.fn, e.args.map((a) => this.hoist(a, out)), out);
    if (e.k === "logical" && hasCall(e.b)) {
      const t = this.temp("bool", this.hoist(e.a, out), out);
      const rhs: Stmt[] = [];
      rhs.push({ k: "assign", name: t.name, value: this.hoist(e.b, rhs) });
      const test: Expr = e.op === "and" ? t : { k: "unary", op: "not", type: "bool", x: t };
      out.push({ k: "if", cond: test, then: rhs, else: [] });
      return t;
    }
    if (e.k === "select" && !e.eager && (hasCall(e.a) || hasCall(e.b))) {
      const cond = this.hoist(e.cond, out);
      const t = this.temp(e.type, undefined, out);
      const arm = (x: Expr): Stmt[] => { const s: Stmt[] = []; s.push({ k: "assign", name: t.name, value: this.hoist(x, s) }); return s; };
      out.push({ k: "if", cond, then: arm(e.a), else: arm(e.b) });
      return t;
    }
    return mapExprChildren(e, (c) => this.hoist(c, out));
  }

  private temp(type: Expr["type"], init: Expr | undefined, out: Stmt[]): VarExpr {
    const name = `tmp.${this.counter++}`;
    out.push({ k: "let", name, type, init: init ?? (isScalarType(type) ? zeroConst(type) : undefined) });
    return { k: "var", type, name };
  }

  /** `fn`'s body with its string indices (print formats, %s strings, assert messages) into the caller's table */
  private adoptStrings(fn: FunctionIR): readonly Stmt[] {
    if (!fn.strings.length) return fn.body;
    const index = fn.strings.map((s) => {
      const i = this.strings.indexOf(s);
      return i >= 0 ? i : this.strings.push(s) - 1;
    });
    return mapBodyExprs(fn.body, (e) => {
      if (e.k !== "intrinsic") return e;
      const at = INTRINSICS[e.name].stringArg;
      const old = at === undefined ? undefined : e.args[at];
      if (old?.k !== "const") return e;
      return { ...e, args: e.args.map((a, i) => (i === at ? int32Const(index[Number(old.value)]!) : a)) };
    });
  }

  private inlineCall(fn: FunctionIR, args: readonly Expr[], out: Stmt[]): Expr {
    // '.' never occurs in source identifiers, so inlined names cannot collide with the caller's or callee's own
    const prefix = `${fn.name}.${this.counter++}.`;
    const rename = new Map<string, Expr>();
    const assigned = assignedNames(fn.body);
    let constantArgs = false;
    fn.params.forEach((p, i) => {
      const arg = args[i]!;
      // arrays (and plain variables of the caller) are aliased, not copied
      if (!isScalarType(p.type) && arg.k === "var") { rename.set(p.name, arg); return; }
      // a constant for a parameter the callee never assigns is substituted, so the body can fold
      if (arg.k === "const" && arg.type === p.type && !assigned.has(p.name)) { rename.set(p.name, arg); constantArgs = true; return; }
      const local: VarExpr = { k: "var", type: p.type, name: prefix + p.name };
      out.push({ k: "let", name: local.name, type: p.type, init: arg });
      rename.set(p.name, local);
    });
    // the callee's own body is renamed before the calls in it are inlined: each inlined body is renamed
    // once, not again at every level of the call chain above it
    const renamed = renameBody(this.adoptStrings(fn), prefix, rename);
    const body = constantArgs ? foldBody(renamed, `${prefix}.then`) : renamed;
    const returns = countReturns(body);
    const last = body[body.length - 1];
    const result: VarExpr | undefined = fn.returnType === "void" ? undefined : { k: "var", type: fn.returnType, name: `${prefix}.result` };
    if (result) out.push({ k: "let", name: result.name, type: result.type, init: isScalarType(result.type) ? zeroConst(result.type) : undefined });
    if (returns === 1 && last?.k === "return") {
      // straight-line body: no block needed
      const tail: Stmt[] = result && last.value ? [{ k: "assign", name: result.name, value: last.value }] : [];
      out.push(...this.block([...body.slice(0, -1), ...tail]));
    } else {
      const label = `${prefix}.return`;
      out.push({ k: "block", label, body: this.block(replaceReturns(body, label, result)) });
    }
    return result ?? { k: "const", type: "int32", value: 0 };
  }
}

function assignedNames(body: readonly Stmt[]): Set<string> {
  const out = new Set<string>();
  const visit = (ss: readonly Stmt[]) => ss.forEach((s) => {
    if (s.k === "assign") out.add(s.name);
    else if (s.k === "if") { visit(s.then); visit(s.else); }
    else if (s.k === "loop") { visit(s.body); visit(s.update); }
    else if (s.k === "block") visit(s.body);
  });
  visit(body);
  return out;
}

/**
 * Constants folded through a body (after constant arguments were substituted), and each `if` whose
 * condition became a constant replaced by the branch taken — as a labelled block, so its `let`s keep
 * their scope.
 */
function foldBody(body: readonly Stmt[], labelPrefix: string): Stmt[] {
  let n = 0;
  const prune = (ss: readonly Stmt[]): Stmt[] => ss.flatMap((s): Stmt[] => {
    switch (s.k) {
      case "if": {
        if (s.cond.k !== "const") return [{ ...s, then: prune(s.then), else: prune(s.else) }];
        const taken = prune(s.cond.value ? s.then : s.else);
        return taken.length ? [{ k: "block", label: `${labelPrefix}${n++}`, body: taken, loc: s.loc }] : [];
      }
      case "loop": return [{ ...s, body: prune(s.body), update: prune(s.update) }];
      case "block": return [{ ...s, body: prune(s.body) }];
      default: return [s];
    }
  });
  return prune(mapBodyExprs(body, foldExpr));
}

function countReturns(body: readonly Stmt[]): number {
  let n = 0;
  const visit = (s: readonly Stmt[]) => s.forEach((x) => {
    if (x.k === "return") n++;
    else if (x.k === "if") { visit(x.then); visit(x.else); }
    else if (x.k === "loop") { visit(x.body); visit(x.update); }
    else if (x.k === "block") visit(x.body);
  });
  visit(body);
  return n;
}

function replaceReturns(body: readonly Stmt[], label: string, result: VarExpr | undefined): Stmt[] {
  return body.flatMap((s): Stmt[] => {
    switch (s.k) {
      case "return": {
        const brk: Stmt = { k: "break", label, loc: s.loc };
        return result && s.value ? [{ k: "assign", name: result.name, value: s.value, loc: s.loc }, brk] : [brk];
      }
      case "if": return [{ ...s, then: replaceReturns(s.then, label, result), else: replaceReturns(s.else, label, result) }];
      case "loop": return [{ ...s, body: replaceReturns(s.body, label, result), update: replaceReturns(s.update, label, result) }];
      case "block": return [{ ...s, body: replaceReturns(s.body, label, result) }];
      default: return [s];
    }
  });
}

/** Prefixes a callee's local names and labels; parameters map to the caller's values. */
function renameBody(body: readonly Stmt[], prefix: string, params: ReadonlyMap<string, Expr>): Stmt[] {
  const locals = new Set<string>();
  const expr = (e: Expr): Expr => {
    if (e.k === "var") return params.get(e.name) ?? (locals.has(e.name) ? { ...e, name: prefix + e.name } : e);
    return mapExprChildren(e, expr);
  };
  const stmt = (s: Stmt): Stmt => {
    switch (s.k) {
      case "let": case "alloc": locals.add(s.name); break;
    }
    const m = mapStmtExprs(s, expr);
    switch (m.k) {
      case "let": case "alloc": return { ...m, name: prefix + m.name };
      case "assign": return { ...m, name: params.has(m.name) ? (params.get(m.name) as VarExpr).name : prefix + m.name };
      case "if": return { ...m, then: m.then.map(stmt), else: m.else.map(stmt) };
      case "loop": return { ...m, label: prefix + m.label, body: m.body.map(stmt), update: m.update.map(stmt) };
      case "block": return { ...m, label: prefix + m.label, body: m.body.map(stmt) };
      case "break": case "continue": return { ...m, label: prefix + m.label };
      default: return m;
    }
  };
  return body.map(stmt);
}
