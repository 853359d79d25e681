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
  /** `effects`: assignments and ++/-- are allowed here (statement position). */
  const visit = (n: Node, effects: boolean, depth: number): void => {
    if (depth > MAX_NESTING) {
      // once: the first node past the limit, in source order
      if (!tooDeep) report(n, `nesting more than ${MAX_NESTING} levels deep (split the expression or statement into smaller ones)`);
      tooDeep = true;
      return;
    }
    const bad = UNSUPPORTED[n.type];
    if (bad) { report(n, bad); return; }
    if (n.type === "ThrowStatement") {
      if (!thrownMessage(n.argument)) report(n.argument, "throwing anything but `new Error(\"message\")` with a string literal message");
      return;
    }
    if (n.type === "Literal" && n.regex) { report(n, UNSUPPORTED.RegExpLiteral!); return; }
    if (n.type === "VariableDeclaration" && n.kind === "var") report(n, "`var` (use let or const)");
    if ((n.type === "BinaryExpression" || n.type === "UnaryExpression" || n.type === "LogicalExpression" || n.type === "AssignmentExpression")
        && BAD_OPERATORS[n.operator]) report(n, BAD_OPERATORS[n.operator]!);
    if ((n.type === "AssignmentExpression" || n.type === "UpdateExpression") && !effects) {
      report(n, "an assignment or ++/-- inside an expression (write it as its own statement)");
    }
    if (n.type === "MemberExpression" && n.optional) report(n, UNSUPPORTED.ChainExpression!);
    if (n.type === "CallExpression" && n.optional) report(n, UNSUPPORTED.ChainExpression!);
    for (const [key, child] of childNodes(n)) {
      visit(child, allowsEffects(n, key, effects), depth + 1);
    }
  };
  visit(body, body.type === "BlockStatement", 1);
  return problems;
}

/** The message of `new Error("message")` (or `Error("message")`), the one form a kernel may throw. */
export function thrownMessage(n: Node): string | undefined {
  const isError = (n.type === "NewExpression" || n.type === "CallExpression") && n.callee.type === "Identifier" && n.callee.name === "Error";
  const [message, ...rest] = isError ? n.arguments : [];
  return message?.type === "Literal" && typeof message.value === "string" && rest.length === 0 ? message.value : undefined;
}

function allowsEffects(parent: Node, key: string, effects: boolean): boolean {
  switch (parent.type) {
    case "ExpressionStatement": return key === "expression";
    case "ForStatement": return key === "init" || key === "update";
    case "SequenceExpression": return effects;
    case "AssignmentExpression": return false;
    default: return false;
  }
}
