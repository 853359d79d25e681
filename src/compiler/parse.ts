// Source text → ESTree AST of one function (acorn), with positions relative
// to the function's own text so errors can quote it.

import * as acorn from "acorn";
import type { SourceProblem } from "../errors.js";
import { CompileError, InternalCompilerError } from "../errors.js";
import { functionName, functionText } from "./recorded.js";

/** Any ESTree node acorn makes; narrow it by `n.type`. */
export type Node = acorn.AnyNode;

export interface ParsedFunction {
  readonly name: string;
  /** the name a function expression or declaration calls itself by */
  readonly selfName?: string;
  readonly params: readonly acorn.Pattern[];
  /** the body block, or the expression of a concise arrow */
  readonly body: acorn.BlockStatement | acorn.Expression;
  /** the function's text as given by Function.prototype.toString (or the caller) */
  readonly source: string;
  /** the function itself, which says where its text is in the user's file */
  readonly origin: Function;
}

/** Wrappers that make any function text an expression; `prefix` shifts columns on line 1. */
const WRAPPERS: readonly { prefix: string; suffix: string; pick: (e: acorn.Expression) => Node | undefined }[] = [
  { prefix: "(", suffix: "\n)", pick: (e) => e },
  // methods: `name(a) { … }` (from object literals and classes)
  { prefix: "({", suffix: "\n})", pick: (e) => (e.type === "ObjectExpression" && e.properties[0]?.type === "Property" ? e.properties[0].value : undefined) },
];

const isFunctionNode = (n: Node | undefined): n is acorn.FunctionExpression | acorn.ArrowFunctionExpression =>
  n?.type === "FunctionExpression" || n?.type === "ArrowFunctionExpression";

/**
 * How deeply a kernel's syntax may nest (a sum of 300 terms is 300 levels; check.ts reports deeper): the
 * compiler and the code it makes recurse over it, and a JavaScript stack overflows from some 1,000 levels.
 */
export const MAX_NESTING = 256;

const TOO_DEEP = "Not enough stack space to parse input";

/**
 * acorn with its stack-overflow guard testing the error's class, where acorn tests its message with a
 * regular expression: compiled at the deepest point of the recursion, that can make V8 abort the whole
 * process (a fatal out-of-memory error in its RegExpCompiler, for if-blocks nested 1,800 deep).
 */
const Parser = acorn.Parser.extend((Base) => class extends Base {
  catchStackOverflow<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      if (e instanceof RangeError) (this as unknown as { raise(at: number, message: string): never; start: number }).raise((this as unknown as { start: number }).start, TOO_DEEP);
      throw e;
    }
  }
});

export function parseFunction(fn: Function, displayName?: string): ParsedFunction {
  const source = functionText(fn);
  const name = displayName ?? (functionName(fn) || "kernel");
  if (/^class\b/.test(source)) fail(name, fn, source, "a class is not a kernel; pass a function");
  if (source.endsWith("{ [native code] }")) fail(name, fn, source, "a native or bound function has no source to compile; pass the function itself");
  for (const w of WRAPPERS) {
    let program: acorn.Program;
    try {
      program = Parser.parse(w.prefix + source + w.suffix, { ecmaVersion: "latest", locations: true, ranges: true });
    } catch (e) {
      if ((e as Error).message.startsWith(TOO_DEEP)) fail(name, fn, source, `the function nests too deeply to parse; kernels nest at most ${MAX_NESTING} levels (split the expression or statement into smaller ones)`);
      continue;
    }
    const stmt = program.body[0];
    const fnNode = stmt?.type === "ExpressionStatement" ? w.pick(stmt.expression) : undefined;
    if (!isFunctionNode(fnNode)) continue;
    shiftPositions(program, w.prefix.length);
    if (fnNode.async || fnNode.generator) {
      fail(name, fn, source, `${fnNode.async ? "an async" : "a generator"} function cannot be a kernel`, fnNode);
    }
    return { name, selfName: fnNode.id?.name ?? undefined, params: fnNode.params, body: fnNode.body, source, origin: fn };
  }
  return fail(name, fn, source, "cannot parse the function's source text");
}

/** The AST nodes directly under `n`, with the property that holds each. */
export function* childNodes(n: Node): Generator<[string, Node]> {
  for (const key of Object.keys(n)) {
    if (key === "loc" || key === "range") continue;
    const v = (n as unknown as Record<string, unknown>)[key] as { type?: unknown } | readonly ({ type?: unknown } | null)[] | null;
    if (Array.isArray(v)) {
      for (const c of v) if (c && typeof c.type === "string") yield [key, c as Node];
    } else if (v && typeof (v as { type?: unknown }).type === "string") {
      yield [key, v as Node];
    }
  }
}

/** Makes `start`/`end`/columns relative to the function text instead of the wrapper. */
function shiftPositions(n: Node, by: number, shifted = new Set<object>()): void {
  n.start -= by;
  n.end -= by;
  // acorn shares one start position among nested nodes (a call, its callee, the callee's object)
  const start = n.loc?.start;
  if (start && start.line === 1 && !shifted.has(start)) {
    start.column -= by;
    shifted.add(start);
  }
  for (const [, c] of childNodes(n)) shiftPositions(c, by, shifted);
}

function fail(name: string, fn: Function, source: string, message: string, node?: Node): never {
  const problem: SourceProblem = node
    ? { message, line: node.loc!.start.line, column: Math.max(0, node.loc!.start.column) }
    : { message, line: 1, column: 0 };
  throw new CompileError(name, source, [problem], fn);
}

/** Loc of a node for IR nodes and errors */
export const locOf = (n: Node) => ({ line: n.loc!.start.line, column: Math.max(0, n.loc!.start.column) });

/** The nodes of a binary operation's operands (where a conversion of each is reported), else `n` for both. */
export function operandNodes(n: Node): readonly [Node, Node] {
  return n.type === "BinaryExpression" || n.type === "AssignmentExpression" || n.type === "LogicalExpression" ? [n.left, n.right] : [n, n];
}

/** The property name of `a.name` (a member expression that is not computed; `a.#name` too). */
export function memberName(m: acorn.MemberExpression): string {
  if (m.property.type === "Identifier" || m.property.type === "PrivateIdentifier") return m.property.name;
  throw new InternalCompilerError("a computed member expression has no property name", locOf(m));
}
