// The kernel-language syntax check: every construct outside the kernel language (docs/language.md) is
// reported, all at once, before any typing happens.

import type { SourceProblem } from "../errors.js";
import type { Node } from "./parse.js";
import { childNodes, locOf, MAX_NESTING } from "./parse.js";

/** What users call the constructs we reject. */
const UNSUPPORTED: Record<string, string> = {
  TryStatement: "try/catch",
  SwitchStatement: "switch (use if/else)",
  ForInStatement: "for…in (use an indexed for loop)",
  WithStatement: "with",
  FunctionDeclaration: "a nested function (closures are not supported; use a device function)",
  FunctionExpression: "a nested function (closures are not supported; use a device function)",
  ArrowFunctionExpression: "an arrow function inside a kernel (closures are not supported; use a device function)",
  ClassDeclaration: "a class",
  ClassExpression: "a class",
  ObjectExpression: "an object literal",
  ObjectPattern: "object destructuring",
  TemplateLiteral: "a template string (strings are only allowed as console.log and console.assert arguments)",
  TaggedTemplateExpression: "a tagged template",
  NewExpression: "`new` (no allocation inside kernels; use cuda.local.array or cuda.shared.array)",
  ThisExpression: "`this`",
  AwaitExpression: "await",
  YieldExpression: "yield",
  SpreadElement: "spread arguments",
  RestElement: "rest parameters",
  AssignmentPattern: "default parameter values",
  ChainExpression: "optional chaining (?.)",
  ImportExpression: "import()",
  MetaProperty: "new.target / import.meta",
  DebuggerStatement: "debugger",
  Super: "super",
  RegExpLiteral: "a regular expression",
};

const BAD_OPERATORS: Record<string, string> = {
  in: "the `in` operator",
  instanceof: "instanceof",
  typeof: "typeof",
  delete: "delete",
  void: "void",
  "??": "the ?? operator",
  "??=": "the ??= operator",
  "&&=": "the &&= operator",
  "||=": "the ||= operator",
};

/** Returns every syntax problem of a function body and its parameters. */
export function checkSyntax(params: readonly Node[], body: Node): SourceProblem[] {
  const problems: SourceProblem[] = [];
  const report = (n: Node, what: string) => problems.push({ message: `unsupported in kernels: ${what}`, ...locOf(n) });

  for (const p of params) {
    if (p.type !== "Identifier") report(p, UNSUPPORTED[p.type] ?? "this parameter form (use plain names)");
  }

  let tooDeep = false;
  const visit = (n: Node, place: Place, depth: number): void => {
    if (depth > MAX_NESTING) {
      // once: the first node past the limit, in source order
      if (!tooDeep) report(n, `nesting more than ${MAX_NESTING} levels deep (split the expression or statement into smaller ones)`);
      tooDeep = true;
      return;
    }
    const bad = UNSUPPORTED[n.type];
    if (bad) { report(n, bad); return; }
    if (n.type === "ThrowStatement") {
      // `throw a(), new Error("…")`: a minifier's join of a statement and the throw
      const items = n.argument.type === "SequenceExpression" ? n.argument.expressions : [n.argument];
      items.slice(0, -1).forEach((e) => visit(e, "statement", depth + 1));
      if (!thrownMessage(items[items.length - 1]!)) report(n.argument, "throwing anything but `new Error(\"message\")` with a string literal message");
      return;
    }
    if (n.type === "Literal" && n.regex) { report(n, UNSUPPORTED.RegExpLiteral!); return; }
    if (n.type === "ForOfStatement" && n.left.type === "VariableDeclaration" && n.left.kind === "var") report(n.left, "`var` in a for…of head (use let or const)");
    if (n.type === "VariableDeclaration" && n.kind === "var" && n.declarations.some((d) => d.id.type !== "Identifier")) report(n, "destructuring with `var` (use const [a, b] = …)");
    const voidStatement = n.type === "UnaryExpression" && n.operator === "void" && (place === "statement" || place === "return");
    if ((n.type === "BinaryExpression" || n.type === "UnaryExpression" || n.type === "LogicalExpression" || n.type === "AssignmentExpression")
        && BAD_OPERATORS[n.operator] && !voidStatement) report(n, BAD_OPERATORS[n.operator]!);
    if ((n.type === "AssignmentExpression" || n.type === "UpdateExpression") && place !== "statement") {
      report(n, "an assignment or ++/-- inside an expression (write it as its own statement)");
    }
    if (n.type === "MemberExpression" && n.optional) report(n, UNSUPPORTED.ChainExpression!);
    if (n.type === "CallExpression" && n.optional) report(n, UNSUPPORTED.ChainExpression!);
    for (const [key, child] of childNodes(n)) {
      visit(child, placeOf(n, key, child, place), depth + 1);
    }
  };
  visit(body, body.type === "BlockStatement" ? "statement" : "return", 1);
  return problems;
}

/** The message of `new Error("message")` (or `Error("message")`), the one form a kernel may throw. */
export function thrownMessage(n: Node): string | undefined {
  const isError = (n.type === "NewExpression" || n.type === "CallExpression") && n.callee.type === "Identifier" && n.callee.name === "Error";
  const [message, ...rest] = isError ? n.arguments : [];
  return message?.type === "Literal" && typeof message.value === "string" && rest.length === 0 ? message.value : undefined;
}

/**
 * Where an expression is, for what it may contain: "statement", its value unused (assignments, ++/--
 * and `void` allowed); "test", the test of an if or a loop; "head", a declaration's value; "return",
 * what a return gives; "value", inside another expression. A sequence (`a = 1, b(), c`) in any place but
 * a value is statements joined by a minifier: each item but the last is a statement, the last is in the
 * sequence's place. As statements, minifiers also print `c && s`, `c || s` and `c ? s : t` (an if) and
 * `void s`; into tests they move statements as `a && (s, b)`, `!(…)` and `c ? (s, a) : b`.
 */
type Place = "statement" | "test" | "head" | "return" | "value";

function placeOf(parent: Node, key: string, child: Node, place: Place): Place {
  switch (parent.type) {
    case "ExpressionStatement": return "statement";
    case "ForStatement": return key === "test" ? "test" : key === "init" || key === "update" ? "statement" : "value";
    case "IfStatement": case "WhileStatement": case "DoWhileStatement": return key === "test" ? "test" : "value";
    case "VariableDeclarator": return key === "init" ? "head" : "value";
    case "ReturnStatement": return "return";
    case "SequenceExpression": return place === "value" ? "value" : child === parent.expressions[parent.expressions.length - 1] ? place : "statement";
    case "LogicalExpression": return place === "test" && parent.operator !== "??" ? "test" : place === "statement" && key === "right" ? "statement" : "value";
    case "ConditionalExpression": return place === "test" ? "test" : place === "statement" && key !== "test" ? "statement" : "value";
    case "UnaryExpression": return parent.operator === "void" && place !== "value" ? "statement" : parent.operator === "!" && place === "test" ? "test" : "value";
    default: return "value";
  }
}
