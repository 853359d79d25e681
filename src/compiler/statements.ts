// Statement lowering: declarations (a `let`'s type is the join of every value assigned to it), control
// flow (if, loops, for…of, labels, break/continue, return) and effects (assignments, ++/--, calls).

import { DTYPE_INFO, isArrayType, isComplexType, isFloat, isScalarType, isTupleType, sameType, typeToString, type ArrayType, type TupleType, type Type } from "../dtypes.js";
import { isRecordArrayType, isRecordType } from "../records.js";
import { complexPart } from "./complex.js";
import { lowerThrow } from "./console.js";
import { expr, valueType, type Typed, type Value } from "./context.js";
import { arrayElement, elementRef, elementType, loadElement, splitIndexing, tryAllocation } from "./expressions.js";
import { numberLiteral } from "./host-values.js";
import { promote, weakDefault } from "./infer.js";
import { constExpr, int32Const, type Expr, type Stmt, type VarExpr } from "./ir.js";
import type { Lowering, VarBinding } from "./lowering.js";
import { arith, lowerTupleLiteral } from "./operators.js";
import { childNodes, locOf, memberName, type Node } from "./parse.js";
import type {
  ArrayPattern, AssignmentExpression, BreakStatement, ContinueStatement, Expression, ForOfStatement, ForStatement, Identifier, IfStatement, LabeledStatement, Pattern,
  Statement, VariableDeclarator,
} from "acorn";
import { zeroConst } from "./walk.js";
import { assignField, assignRecord, assignRecordLocal, fieldOf, recordElement } from "./records.js";

/** The names for…of binds: the index (entries() only) and the value. */
interface LoopNames { readonly index: Identifier | null; readonly value: Identifier | null }

export function lowerStatements(L: Lowering, list: readonly Statement[]): void {
  for (const s of list) L.guard(s, () => lowerStatement(L, s));
}

function lowerStatement(L: Lowering, n: Statement): void {
  switch (n.type) {
    case "EmptyStatement": return;
    case "BlockStatement": L.withScope(() => lowerStatements(L, n.body)); return;
    case "VariableDeclaration":
      if (n.kind === "var") return lowerVar(L, n.declarations);
      for (const d of n.declarations) {
        const before = L.problems.length;
        L.guard(d, () => lowerDeclarator(L, d, n.kind === "const"));
        if (L.problems.length > before) L.poison(d.id);
      }
      return;
    case "ExpressionStatement": lowerEffect(L, n.expression); return;
    case "IfStatement": return lowerIf(L, n);
    case "ForStatement": return lowerFor(L, n);
    case "ForOfStatement": return lowerForOf(L, n);
    case "WhileStatement": return lowerLoop(L, n, n.test, n.body, null, true);
    case "DoWhileStatement": return lowerLoop(L, n, n.test, n.body, null, false);
    case "LabeledStatement": return lowerLabeled(L, n);
    case "BreakStatement": return lowerJump(L, n, "break");
    case "ContinueStatement": return lowerJump(L, n, "continue");
    case "ReturnStatement": return lowerReturn(L, n, n.argument ?? null);
    case "ThrowStatement": return lowerThrow(L, { ...n, argument: afterEffects(L, n.argument) });
    default: L.unsupported(n, `unsupported in kernels: ${n.type}`);
  }
}

function lowerDeclarator(L: Lowering, d: VariableDeclarator, isConst: boolean): void {
  const init = d.init ? afterEffects(L, d.init) : null;
  if (d.id.type === "ArrayPattern") return lowerDestructuring(L, { ...d, init }, d.id, isConst);
  const name = identifier(L, d.id).name;
  const builtin = init ? tryAllocation(L, init, name) : undefined;
  if (builtin) { L.declare(name, { b: "value", value: builtin }, d); return; }
  if (!init) return declareUnassigned(L, name, d, isConst);
  bindValue(L, d.id as Identifier, L.lowerValue(init), init, isConst, L.widenedType({ kind: "local", start: d.start }));
}

/** `let name;`: a local whose type is the join of the values assigned to it (known from the next round on). */
function declareUnassigned(L: Lowering, name: string, d: Node, isConst: boolean): void {
  const decl = { kind: "local", start: d.start } as const;
  const override = L.widenedType(decl);
  if (!override) {
    // the type comes from the first assignment; ask for another round once it is known
    L.declare(name, { b: "var", name: L.freshName(name), type: "void", decl, isConst }, d);
    return;
  }
  const v: VarBinding = { b: "var", name: L.freshName(name), type: override, decl, isConst };
  L.emit({ k: "let", name: v.name, type: override, init: isScalarType(override) ? zeroConst(override) : undefined, loc: locOf(d) });
  L.declare(name, v, d);
}

/**
 * Declares each `var` of a function body (the names its `var` statements declare, wherever they are) at
 * the top of the body, as `let name;`: a `var` is the function's, not its block's. Parameters are
 * declared already (`var a` of a parameter `a` is that parameter).
 */
export function hoistVars(L: Lowering, body: Node): void {
  const seen = new Set<string>();
  const visit = (n: Node): void => {
    if (n.type === "VariableDeclaration" && n.kind === "var") {
      for (const d of n.declarations) {
        if (d.id.type !== "Identifier" || seen.has(d.id.name) || L.lookup(d.id.name)) continue;
        seen.add(d.id.name);
        declareUnassigned(L, d.id.name, d, false);
      }
    }
    // statements hold the declarations: expressions (and the nested functions the syntax check rejects) hold none
    for (const [, c] of childNodes(n)) if (isStatementLike(c)) visit(c);
  };
  visit(body);
}

const isStatementLike = (n: Node): boolean => n.type.endsWith("Statement") || n.type === "VariableDeclaration";

/** `var a = 1, b;` in a body whose vars are hoisted: assignments of the declarations that have values. */
function lowerVar(L: Lowering, declarations: readonly VariableDeclarator[]): void {
  for (const d of declarations) {
    const init = d.init;
    if (!init || d.id.type !== "Identifier") continue;
    L.guard(d, () => lowerAssignment(L, { type: "AssignmentExpression", operator: "=", left: d.id as Identifier, right: init, start: d.start, end: d.end, loc: d.loc }));
  }
}

/**
 * The expression a place holds once the statements a minifier joined into it have run: each item of
 * `a = 1, b(), c` but the last is lowered here as a statement, in order; the last is returned.
 */
function afterEffects(L: Lowering, n: Expression): Expression {
  while (n.type === "SequenceExpression") {
    for (const e of n.expressions.slice(0, -1)) lowerEffect(L, e);
    n = n.expressions[n.expressions.length - 1]!;
  }
  return n;
}

/** Declares `id` bound to `value` (of the expression `init`); `override`: the type widening asked for. */
function bindValue(L: Lowering, id: Identifier, value: Value, init: Node, isConst: boolean, override?: Type): void {
  // a `const` bound to a constant is a named literal: it stays weak (`const k = 0.25`)
  if (value.v !== "expr" || (isConst && value.e.k === "const")) { L.declare(id.name, { b: "value", value }, id); return; }
  // an array of records is one array per field, which no local holds: the name stands for them (an alias, as array locals are references)
  if (isRecordArrayType(value.e.type) && value.e.k === "tuple") { L.declare(id.name, { b: "value", value }, id); return; }
  const decl = { kind: "local", start: id.start } as const;
  const type = override ? L.joinInto(decl, override, valueType(value)) : valueType(value);
  const v: VarBinding = { b: "var", name: L.freshName(id.name), type, decl, isConst };
  L.emit({ k: "let", name: v.name, type, init: L.convert(value, type, init), loc: locOf(id) });
  L.declare(id.name, v, id);
}

/** `const [x, y] = cuda.grid(2)`, a device function's tuple result, or an array literal. */
function lowerDestructuring(L: Lowering, d: VariableDeclarator, pattern: ArrayPattern, isConst: boolean): void {
  const init = d.init ?? L.fail(d, "destructuring needs a value: const [x, y] = …");
  for (const el of pattern.elements) if (el && el.type !== "Identifier") L.unsupported(el, "unsupported in kernels: nested destructuring");
  const names = pattern.elements as readonly (Identifier | null)[];
  // `const [a, b] = [0.25, x]`: every item is evaluated, then each name bound as `const a = 0.25` binds it
  if (isConst && init.type === "ArrayExpression" && names.length <= init.elements.length && init.elements.every((e) => e && e.type !== "SpreadElement")) {
    const values = (init.elements as Expression[]).map((e) => L.lowerValue(e));
    names.forEach((id, i) => { if (id) bindValue(L, id, values[i]!, init.elements[i]!, true); });
    return;
  }
  const tuple = L.lowerExpr(init);
  if (!isTupleType(tuple.e.type)) L.fail(init, `destructuring needs a tuple (cuda.grid(2), a device function returning [a, b]); got ${typeToString(tuple.e.type)}`);
  const items = tuple.e.type.items;
  const elements = pattern.elements;
  if (elements.length > items.length) L.fail(pattern, `destructuring ${elements.length} names from a tuple of ${items.length}`);
  const tv = L.temporary("tuple", tuple.e, d);
  elements.forEach((el, i) => {
    if (!el || el.type !== "Identifier") return;
    const type = items[i]!;
    const v: VarBinding = { b: "var", name: L.freshName(el.name), type, decl: { kind: "local", start: el.start }, isConst };
    L.emit({ k: "let", name: v.name, type, init: { k: "tupleGet", type, tuple: tv, index: i }, loc: locOf(el) });
    L.declare(el.name, v, el);
  });
}

function lowerIf(L: Lowering, n: IfStatement): void {
  const cond = testValue(L, n.test);
  const then = L.collect(() => L.withScope(() => L.guard(n.consequent, () => lowerStatement(L, n.consequent))));
  const alternate = n.alternate;
  const els = alternate ? L.collect(() => L.withScope(() => L.guard(alternate, () => lowerStatement(L, alternate)))) : [];
  L.emit({ k: "if", cond, then, else: els, loc: locOf(n) });
}

function lowerFor(L: Lowering, n: ForStatement, userLabel?: string): void {
  L.withScope(() => {
    if (n.init) {
      if (n.init.type === "VariableDeclaration") lowerStatement(L, n.init);
      else lowerEffect(L, n.init);
    }
    lowerLoop(L, n, n.test ?? null, n.body, n.update ?? null, true, userLabel);
  });
}

function lowerLoop(L: Lowering, n: Node, test: Expression | null, body: Statement, update: Expression | null, testFirst: boolean, userLabel?: string): void {
  const updates = () => (update ? L.collect(() => lowerEffect(L, update)) : []);
  if (!test || !hasEffects(test)) return emitLoop(L, n, test ? L.condition(test) : null, body, updates, testFirst, userLabel);
  // `while (a(), c)`: a() runs before each test, so the test goes inside the loop, where `continue` reaches it too
  const exit = (label: string): void => {
    const cond = testValue(L, test);
    L.emit({ k: "if", cond: { k: "unary", op: "not", type: "bool", x: cond }, then: [{ k: "break", label, loc: locOf(test) }], else: [], loc: locOf(test) });
  };
  if (testFirst) emitLoop(L, n, null, body, updates, true, userLabel, exit);
  else emitLoop(L, n, null, body, (label) => L.collect(() => exit(label)), false, userLabel); // a do…while has no update
}

/**
 * A test's value, once the statements a minifier joined into it ran, each where it runs in JavaScript:
 * `a = f(), a > 0`; `a && (s = 1, b)` (s = 1 only when a holds); `!(…)`; `c ? (s, a) : b`.
 */
function testValue(L: Lowering, n: Expression): Expr {
  const e = afterEffects(L, n);
  if (!hasEffects(e)) return L.condition(e);
  const loc = locOf(e);
  if (e.type === "UnaryExpression" && e.operator === "!") return { k: "unary", op: "not", type: "bool", x: testValue(L, e.argument), loc };
  const assigned = (t: VarExpr, value: Expression) => L.collect(() => L.emit({ k: "assign", name: t.name, value: testValue(L, value), loc: locOf(value) }));
  if (e.type === "LogicalExpression" && e.operator !== "??") {
    const t = L.temporary("test", testValue(L, e.left), e);
    const right = assigned(t, e.right);
    L.emit({ k: "if", cond: t, then: e.operator === "&&" ? right : [], else: e.operator === "&&" ? [] : right, loc });
    return t;
  }
  if (e.type === "ConditionalExpression") {
    const cond = testValue(L, e.test);
    const t = L.temporary("test", constExpr("bool", false), e);
    L.emit({ k: "if", cond, then: assigned(t, e.consequent), else: assigned(t, e.alternate), loc });
    return t;
  }
  return L.condition(e); // what it reports
}

/** Whether a test holds statements (an assignment, ++/--, a sequence but `(0, ns.f)`, how tsc and esbuild call imports). */
function hasEffects(n: Node): boolean {
  if (n.type === "AssignmentExpression" || n.type === "UpdateExpression") return true;
  if (n.type === "SequenceExpression" && !n.expressions.slice(0, -1).every((e) => e.type === "Literal")) return true;
  for (const [, c] of childNodes(n)) if (hasEffects(c)) return true;
  return false;
}

/**
 * A loop of `body`; `bind` runs first in the body's scope (declaring for…of's variables, or testing a
 * condition that needs statements), `update` runs after the body; both are given the loop's label.
 */
function emitLoop(L: Lowering, n: Node, cond: Expr | null, body: Statement, update: (label: string) => Stmt[], testFirst: boolean, userLabel?: string, bind?: (label: string) => void): void {
  const label = L.freshName(userLabel ?? "loop");
  L.loops.push({ label, userLabel, isLoop: true });
  try {
    const bodyStmts = L.collect(() => L.withScope(() => { bind?.(label); L.guard(body, () => lowerStatement(L, body)); }));
    const updateStmts = update(label);
    // a do…while condition is lowered after the body so it sees the body's locals' types; scoping is the same
    L.emit({ k: "loop", label, cond, testFirst, body: bodyStmts, update: updateStmts, loc: locOf(n) });
  } finally {
    L.loops.pop();
  }
}

/**
 * `for (const v of a)` over a 1-d array (a loop over its indices) or a tuple (unrolled: each item may
 * have its own type), and `for (const [i, v] of a.entries())`.
 */
function lowerForOf(L: Lowering, n: ForOfStatement, userLabel?: string): void {
  if (n.await) L.unsupported(n, "unsupported in kernels: for await");
  const decl = n.left;
  if (decl.type !== "VariableDeclaration" || decl.declarations.length !== 1) {
    return L.unsupported(decl, "for…of in kernels declares its variable: for (const v of a), or for (const [i, v] of a.entries())");
  }
  const pattern = decl.declarations[0]!.id;
  const isConst = decl.kind === "const";
  const right = n.right;
  const entries = right.type === "CallExpression" && right.callee.type === "MemberExpression" && !right.callee.computed &&
    memberName(right.callee) === "entries" ? right.callee : undefined;
  if (entries && right.type === "CallExpression" && right.arguments.length > 0) L.fail(right, "entries() takes no arguments");
  const names = entries ? entryNames(L, pattern) : { index: null, value: loopVariable(L, pattern) };
  const source: Node = entries ? entries.object : right;
  const seq = L.lowerExpr(source).e;
  if (isTupleType(seq.type)) return lowerTupleForOf(L, n, seq, names, isConst, userLabel);
  if (!isArrayType(seq.type) || seq.type.ndim !== 1) {
    L.fail(source, `for…of needs a 1-d array or a tuple; got ${typeToString(seq.type)}`);
  }
  L.withScope(() => {
    const array = seq.k === "var" ? seq : L.temporary("items", seq, decl);
    const index: Expr = L.temporary("i", int32Const(0), decl);
    const length: Expr = { k: "arrayAttr", attr: "shape", type: "int32", array, dim: 0, loc: locOf(source) };
    const cond: Expr = { k: "compare", op: "lt", type: "bool", a: index, b: length };
    const next: Stmt[] = [{ k: "assign", name: (index as { name: string }).name, value: { k: "binary", op: "add", type: "int32", a: index, b: int32Const(1) } }];
    const element: Expr = { k: "load", type: (array.type as ArrayType).dtype, array, index: [index], loc: locOf(source) };
    emitLoop(L, n, cond, n.body, () => next, true, userLabel, () => bindLoopNames(L, names, index, element, isConst));
  });
}

/** A tuple's for…of: one block per item, inside one block that `break` leaves (`continue` leaves the item's). */
function lowerTupleForOf(L: Lowering, n: ForOfStatement, seq: Expr, names: LoopNames, isConst: boolean, userLabel?: string): void {
  const items = (seq.type as TupleType).items;
  const label = L.freshName(userLabel ?? "loop");
  const tuple = seq.k === "var" ? seq : L.temporary("items", seq, n);
  const body = L.collect(() => items.forEach((type, k) => {
    const continueLabel = L.freshName("item");
    L.loops.push({ label, userLabel, isLoop: true, continueLabel });
    try {
      const item = L.collect(() => L.withScope(() => {
        bindLoopNames(L, names, int32Const(k), { k: "tupleGet", type, tuple, index: k }, isConst);
        L.guard(n.body, () => lowerStatement(L, n.body));
      }));
      L.emit({ k: "block", label: continueLabel, body: item, loc: locOf(n) });
    } finally {
      L.loops.pop();
    }
  }));
  L.emit({ k: "block", label, body, loc: locOf(n) });
}

/** The variable of `for (const v of …)`. */
function loopVariable(L: Lowering, p: Pattern): Identifier {
  if (p.type !== "Identifier") return L.unsupported(p, "unsupported in kernels: destructuring the items of for…of (only `const [i, v] of a.entries()`)");
  return p;
}

/** The `[i, v]` of `for (const [i, v] of a.entries())` (either may be left out). */
function entryNames(L: Lowering, p: Pattern): LoopNames {
  const els = p.type === "ArrayPattern" ? p.elements : [];
  const names = els.filter((e): e is Identifier | null => !e || e.type === "Identifier");
  if (p.type !== "ArrayPattern" || els.length > 2 || names.length < els.length) {
    L.unsupported(p, "entries() gives [index, value] pairs: for (const [i, v] of a.entries())");
  }
  return { index: names[0] ?? null, value: names[1] ?? null };
}

/** Declares the loop's index and value names for one iteration, as copies (the body may reassign a `let`). */
function bindLoopNames(L: Lowering, names: LoopNames, index: Expr, value: Expr, isConst: boolean): void {
  for (const [id, e] of [[names.index, index], [names.value, value]] as const) {
    if (!id) continue;
    // over a tuple, a `const` index is an int32 constant (so `t[i]` indexes), a constant number item a
    // literal; a bool or bigint item stays the typed constant it is (a number would lose its type or bits)
    if (isConst && e.k === "const") {
      L.declare(id.name, { b: "value", value: id === names.index || typeof e.value !== "number" ? expr(e) : numberLiteral(e.value) }, id);
      continue;
    }
    const v: VarBinding = { b: "var", name: L.freshName(id.name), type: e.type, decl: { kind: "local", start: id.start }, isConst };
    L.emit({ k: "let", name: v.name, type: e.type, init: e, loc: locOf(id) });
    L.declare(id.name, v, id);
  }
}

function lowerLabeled(L: Lowering, n: LabeledStatement): void {
  const userLabel = n.label.name;
  const b = n.body;
  if (b.type === "ForStatement") return lowerFor(L, b, userLabel);
  if (b.type === "ForOfStatement") return lowerForOf(L, b, userLabel);
  if (b.type === "WhileStatement") return lowerLoop(L, b, b.test, b.body, null, true, userLabel);
  if (b.type === "DoWhileStatement") return lowerLoop(L, b, b.test, b.body, null, false, userLabel);
  const label = L.freshName(userLabel);
  L.loops.push({ label, userLabel, isLoop: false });
  try {
    const body = L.collect(() => L.withScope(() => lowerStatement(L, b)));
    L.emit({ k: "block", label, body, loc: locOf(n) });
  } finally {
    L.loops.pop();
  }
}

function lowerJump(L: Lowering, n: BreakStatement | ContinueStatement, kind: "break" | "continue"): void {
  const want = n.label?.name;
  for (let i = L.loops.length - 1; i >= 0; i--) {
    const l = L.loops[i]!;
    if (want ? l.userLabel === want : l.isLoop) {
      if (kind === "continue" && !l.isLoop) L.fail(n, `cannot continue the non-loop label '${want}'`);
      if (kind === "continue" && l.continueLabel) L.emit({ k: "break", label: l.continueLabel, loc: locOf(n) });
      else L.emit({ k: kind, label: l.label, loc: locOf(n) });
      return;
    }
  }
  L.fail(n, want ? `unknown label '${want}'` : `'${kind}' outside a loop`);
}

export function lowerReturn(L: Lowering, n: Node, argument: Expression | null): void {
  const arg = argument && returnedValue(L, argument);
  if (L.kind === "kernel") {
    if (arg) L.fail(arg, "a kernel cannot return a value (write results into an array)");
    L.emit({ k: "return", loc: locOf(n) });
    return;
  }
  if (!arg) {
    unifyReturn(L, n, "void");
    L.emit({ k: "return", loc: locOf(n) });
    return;
  }
  const v = arg.type === "ArrayExpression" ? lowerTupleLiteral(L, arg) : L.lowerExpr(arg);
  const t = v.weak ? weakDefault(v.weak) : v.e.type;
  const rt = unifyReturn(L, arg, t);
  L.emit({ k: "return", value: isScalarType(rt) ? L.convert(v, rt, arg) : v.e, loc: locOf(n) });
}

/** What `return arg` gives once the statements joined into it ran (`return a(), b`): null for `return void a()` (nothing). */
function returnedValue(L: Lowering, arg: Expression): Expression | null {
  const last = afterEffects(L, arg);
  if (last.type !== "UnaryExpression" || last.operator !== "void") return last;
  lowerEffect(L, last);
  return null;
}

/** The first return fixes the type; int and float returns widen it to the float type. */
function unifyReturn(L: Lowering, n: Node, t: Type): Type {
  const cur = L.returnType;
  if (cur === undefined) { L.returnType = t; return t; }
  if (sameType(cur, t)) return cur;
  if (isScalarType(cur) && isScalarType(t)) {
    if (isFloat(t) && !isFloat(cur) || (isFloat(t) && isFloat(cur) && DTYPE_INFO[t].bits > DTYPE_INFO[cur].bits)) {
      L.widenReturn(promote(cur, t));
    }
    return cur;
  }
  L.fail(n, `this function returns ${typeToString(t)} here but ${typeToString(cur)} elsewhere`);
}

// ------------------------------------------------------------------ effects (assignments, ++, calls)

function lowerEffect(L: Lowering, n: Expression): void {
  switch (n.type) {
    case "SequenceExpression": for (const e of n.expressions) lowerEffect(L, e); return;
    case "AssignmentExpression": return lowerAssignment(L, n);
    case "UpdateExpression": return assignTo(L, n.argument, (cur) => arith(L, n, n.operator === "++" ? "+" : "-", cur, { e: int32Const(1), weak: "int" }));
    case "CallExpression": {
      const v = L.lowerValue(n);
      if (v.v === "expr" && v.e.k !== "const") L.emit({ k: "expr", expr: v.e, loc: locOf(n) });
      return;
    }
    // what minifiers print for `if (c) s;`, `if (!c) s;` and `if (c) s; else t;`
    case "LogicalExpression": {
      if (n.operator === "??") break;
      const cond = L.condition(n.left);
      const effect = L.collect(() => lowerEffect(L, n.right));
      L.emit({ k: "if", cond, then: n.operator === "&&" ? effect : [], else: n.operator === "&&" ? [] : effect, loc: locOf(n) });
      return;
    }
    case "ConditionalExpression": {
      const cond = L.condition(n.test);
      L.emit({ k: "if", cond, then: L.collect(() => lowerEffect(L, n.consequent)), else: L.collect(() => lowerEffect(L, n.alternate)), loc: locOf(n) });
      return;
    }
    // `void s` runs s (`void 0`, nothing)
    case "UnaryExpression":
      if (n.operator !== "void") break;
      if (n.argument.type !== "Literal") lowerEffect(L, n.argument);
      return;
    case "Literal":
      if (typeof n.value === "string") return; // "use strict" and other directives
  }
  L.unsupported(n, "unsupported in kernels: an expression statement without effect");
}

function lowerAssignment(L: Lowering, n: AssignmentExpression): void {
  const op: string = n.operator;
  if (op === "=") {
    if (n.left.type === "Identifier") {
      const b = L.lookup(n.left.name);
      if (b?.b === "var" && isArrayType(b.type)) {
        const v = L.lowerExpr(n.right);
        if (!sameType(v.e.type, b.type)) L.fail(n.right, `array '${n.left.name}' is ${typeToString(b.type)}; cannot assign ${typeToString(v.e.type)}`);
        if (b.isConst) L.fail(n.left, `'${n.left.name}' is const`);
        L.emit({ k: "assign", name: b.name, value: v.e, loc: locOf(n) });
        return;
      }
    }
    return assignTo(L, n.left, () => L.lowerExpr(n.right));
  }
  const bin = op.slice(0, -1);
  assignTo(L, n.left, (cur) => arith(L, n, bin, cur, L.lowerExpr(n.right)));
}

/** Stores `compute(current)` into a local or an array element, converting to its type. */
function assignTo(L: Lowering, target: Node, compute: (current: Typed) => Typed): void {
  if (target.type === "Identifier") {
    const b = L.lookup(target.name);
    if (!b || b.b !== "var") L.fail(target, `cannot assign to '${target.name}'`);
    if (b.isConst && b.decl.kind === "local") L.fail(target, `'${target.name}' is const`);
    if (b.type === "void") {
      // declared without a value: its type comes from the assignments; ask for another round once known
      const t = valueType(compute({ e: constExpr("int32", 0) }));
      const known = L.widenedType(b.decl);
      L.widen(b.decl, known ? L.joinInto(b.decl, known, t) : t);
      return;
    }
    const cur: Expr = { k: "var", type: b.type, name: b.name };
    if (isRecordType(b.type)) { L.emit(assignRecordLocal(L, b.name, cur, compute, target)); return; }
    if (!isScalarType(b.type) && !isComplexType(b.type)) L.fail(target, `cannot assign to '${target.name}' of type ${typeToString(b.type)}`);
    const v = compute({ e: cur });
    // a `let` (or a parameter) holds the join of every value assigned to it
    L.joinInto(b.decl, b.type, valueType(v));
    L.emit({ k: "assign", name: b.name, value: L.convert(v, b.type, target), loc: locOf(target) });
    return;
  }
  if (target.type === "MemberExpression") {
    if (assignField(L, target, compute)) return;
    if (target.computed) {
      const { base, indexNodes } = splitIndexing(target);
      const records = L.lowerValue(base);
      if (records.v === "expr" && isRecordArrayType(records.e.type)) {
        const { index } = arrayElement(L, expr(fieldOf(records.e, 0)), base, indexNodes, target);
        return assignRecord(L, recordElement(L, records.e, index, target), compute, target);
      }
    }
    const { array, index } = elementRef(L, target);
    const at = array.type as ArrayType;
    if (at.space === "const") L.fail(target, "constant arrays are read-only (a host array in env is copied into constant memory when the kernel compiles; for an array kernels write, put a DeviceArray in env: cuda.toDevice(array))");
    const v = compute({ e: loadElement(array, index, target) });
    L.markWritten(array);
    const value = L.convert(v, elementType(at), target);
    if (at.complex) {
      // a complex element is two stores, of its parts
      const z = value.k === "tuple" || value.k === "var" ? value : L.temporary("z", value, target);
      [0, 1].forEach((k) => L.emit({ k: "store", array, index: [...index, int32Const(k)], value: complexPart(z, k ? "im" : "re")!, loc: locOf(target) }));
      return;
    }
    L.emit({ k: "store", array, index, value, loc: locOf(target) });
    return;
  }
  L.unsupported(target, "unsupported in kernels: this assignment target");
}

/** A plain name where the syntax check admits no other form (a declaration's or a parameter's). */
function identifier(L: Lowering, p: Pattern): Identifier {
  return p.type === "Identifier" ? p : L.unsupported(p, "unsupported in kernels: destructuring other than const [a, b] = tuple");
}
