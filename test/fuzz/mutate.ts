// Random mutations of a kernel's source text, for the source-robustness fuzzer (`npm run
// fuzz:source`, docs/testing.md): delete, duplicate or swap statements; replace an identifier, a
// property name, an operator, a literal or an expression; wrap a statement or an expression in syntax
// the kernel language does not have; nest an expression thousands of levels deep. Each mutation
// splices the text at the offsets of acorn's nodes, so the rest of the kernel stays byte for byte as
// it was; a mutant must be valid JavaScript (V8 must accept it as a function), as any source numbats
// is handed is.

import * as acorn from "acorn";

type Node = acorn.AnyNode;
/** A source of random numbers in [0, 1). */
export type Rng = () => number;

/** The mutated text and what was done to it, in order. */
export interface Mutant {
  readonly source: string;
  readonly mutations: readonly string[];
}

/** 2**53 + 1: the first integer a double cannot hold (it reads as 2**53). */
const TWO_53_PLUS_1 = "9007199254740993";
/** a 70-digit bigint, far beyond int64 */
const BIG = `${"1234567890".repeat(7)}n`;

/** What a literal becomes: the list, plus other edge values of each kind. */
const LITERALS = [
  "NaN", "Infinity", "(-Infinity)", "(-0)", TWO_53_PLUS_1, "1e309", BIG, `(-${BIG})`, '"text"',
  "0", "(-1)", "0.5", "2147483648", "4294967296", "9223372036854775808n", "(-9223372036854775809n)", "1n", "true", "null", "1e-320",
  '"float32"', '"constructor"', '"%s %d %lld %f %c %%"', '""',
];

/** Names that are not in any kernel's scope, some of them properties every JS object has. */
const UNKNOWN_NAMES = [
  "nope", "undefined", "arguments", "globalThis", "eval", "Object", "Array", "Symbol", "process",
  "toString", "constructor", "__proto__", "hasOwnProperty", "valueOf", "prototype", "length",
];

/** Property names to put after a dot, besides those the kernel uses. */
const PROPERTIES = [
  "length", "shape", "strides", "x", "y", "z", "re", "im", "grid", "threadIdx", "blockDim", "local", "shared", "atomic",
  "entries", "buffer", "constructor", "__proto__", "toString", "valueOf", "prototype", "call", "nope",
];

const BINARY_OPERATORS = [
  "+", "-", "*", "/", "%", "**", "<<", ">>", ">>>", "&", "|", "^", "<", "<=", ">", ">=", "==", "!=", "===", "!==",
  "&&", "||", "??", "in", "instanceof", ",",
];
const ASSIGNMENT_OPERATORS = ["=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??="];

/** Statement wrappers: `S` is the statement's text. */
const STATEMENT_WRAPS: readonly [string, (s: string) => string][] = [
  ["try/catch", (s) => `try { ${s} } catch (e) { }`],
  ["try/finally", (s) => `try { ${s} } finally { }`],
  ["with", (s) => `with (Math) { ${s} }`],
  ["a label on a block", (s) => `lbl: { ${s} }`],
  ["a label", (s) => `lbl: ${s}`],
  ["a closure", (s) => `(() => { ${s} })();`],
  ["a class", (s) => `new (class { run() { ${s} } })().run();`],
  ["a generator", (s) => `function* gen() { ${s} } gen().next();`],
  ["a getter", (s) => `({ get v() { ${s} return 0; } }).v;`],
];

/** Expression wrappers: `e` is the expression's text; a few rewrite the node itself. */
const EXPRESSION_WRAPS: readonly [string, (e: string, n: Node, text: string) => string][] = [
  ["a closure", (e) => `(() => ${e})()`],
  ["a generator", (e) => `(function* () { yield ${e}; })().next().value`],
  ["a class", (e) => `new (class { v() { return ${e}; } })().v()`],
  ["a getter", (e) => `({ get v() { return ${e}; } }).v`],
  ["spread", spread],
  ["optional chaining", optionalChain],
  ["a template literal", (e) => `\`\${${e}}\``],
];

function spread(e: string, n: Node, text: string): string {
  if (n.type !== "CallExpression" || n.arguments.length === 0) return `[...[${e}]][0]`;
  const first = n.arguments[0]!, last = n.arguments[n.arguments.length - 1]!;
  return `${text.slice(n.start, first.start)}...[${text.slice(first.start, last.end)}]${text.slice(last.end, n.end)}`;
}

function optionalChain(e: string, n: Node, text: string): string {
  if (n.type === "MemberExpression") {
    const object = text.slice(n.object.start, n.object.end), property = text.slice(n.property.start, n.property.end);
    return n.computed ? `(${object})?.[${property}]` : `(${object})?.${property}`;
  }
  if (n.type === "CallExpression") {
    return `(${text.slice(n.callee.start, n.callee.end)})?.(${n.arguments.map((a) => text.slice(a.start, a.end)).join(", ")})`;
  }
  return `(${e})?.valueOf()`;
}

/** One node with what holds it. */
interface Place { readonly node: Node; readonly parent: Node | undefined; readonly key: string }

/** The nodes of a function's text: offsets are into `text` (the "(" of the parse is taken off). */
class Parsed {
  readonly places: Place[] = [];
  /** every statement of a block (the function body's too), with its block */
  readonly statements: { block: acorn.BlockStatement | acorn.StaticBlock; index: number }[] = [];
  constructor(readonly text: string) {
    const program = acorn.parse(`(${text}\n)`, { ecmaVersion: "latest" });
    const stmt = program.body[0];
    const fn = stmt?.type === "ExpressionStatement" ? stmt.expression : undefined;
    if (!fn || (fn.type !== "ArrowFunctionExpression" && fn.type !== "FunctionExpression")) throw new Error("not a function expression");
    this.visit(fn, undefined, "");
  }

  private visit(n: Node, parent: Node | undefined, key: string): void {
    n.start -= 1;
    n.end -= 1;
    this.places.push({ node: n, parent, key });
    if (n.type === "BlockStatement" || n.type === "StaticBlock") n.body.forEach((_, index) => this.statements.push({ block: n, index }));
    for (const k of Object.keys(n)) {
      const v = (n as unknown as Record<string, unknown>)[k];
      for (const c of Array.isArray(v) ? v : [v]) {
        if (c && typeof c === "object" && typeof (c as { type?: unknown }).type === "string") this.visit(c as Node, n, k);
      }
    }
  }

  slice(n: { start: number; end: number }): string {
    return this.text.slice(n.start, n.end);
  }

  /** The text with [start, end) replaced. */
  splice(start: number, end: number, by: string): string {
    return this.text.slice(0, start) + by + this.text.slice(end);
  }

  /** Identifiers that name a value (not a property after a dot, a key or a label). */
  names(): Place[] {
    return this.places.filter(({ node, parent, key }) => node.type === "Identifier"
      && !(parent?.type === "MemberExpression" && key === "property" && !parent.computed)
      && !(parent?.type === "Property" && key === "key" && !parent.computed)
      && !(parent?.type === "MethodDefinition" || parent?.type === "PropertyDefinition")
      && !(parent && "label" in parent && key === "label"));
  }
}

const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** One kind of mutation: the new text and a description, or undefined when the kernel has nothing it applies to. */
type Mutation = (p: Parsed, r: Rng) => { text: string; what: string } | undefined;

const deleteStatement: Mutation = (p, r) => {
  if (!p.statements.length) return undefined;
  const { block, index } = pick(r, p.statements);
  const s = block.body[index]!;
  return { text: p.splice(s.start, s.end, ""), what: `delete statement \`${short(p.slice(s))}\`` };
};

const duplicateStatement: Mutation = (p, r) => {
  if (!p.statements.length) return undefined;
  const { block, index } = pick(r, p.statements);
  const s = block.body[index]!;
  return { text: p.splice(s.end, s.end, `\n${p.slice(s)}`), what: `duplicate statement \`${short(p.slice(s))}\`` };
};

const swapStatements: Mutation = (p, r) => {
  const blocks = p.statements.filter(({ block }) => block.body.length >= 2);
  if (!blocks.length) return undefined;
  const { block, index } = pick(r, blocks);
  const other = r() < 0.6 ? (index + 1 < block.body.length ? index + 1 : index - 1) : pick(r, block.body.map((_, j) => j).filter((j) => j !== index));
  const [a, b] = [block.body[Math.min(index, other)]!, block.body[Math.max(index, other)]!];
  const text = p.text.slice(0, a.start) + p.slice(b) + p.text.slice(a.end, b.start) + p.slice(a) + p.text.slice(b.end);
  return { text, what: `swap statements \`${short(p.slice(a))}\` and \`${short(p.slice(b))}\`` };
};

const replaceName: Mutation = (p, r) => {
  const names = p.names();
  if (!names.length) return undefined;
  const { node } = pick(r, names);
  const inScope = [...new Set(names.map((n) => (n.node as acorn.Identifier).name))];
  const by = r() < 0.6 ? pick(r, inScope) : pick(r, UNKNOWN_NAMES);
  return { text: p.splice(node.start, node.end, by), what: `replace name \`${p.slice(node)}\` with \`${by}\`` };
};

const replaceProperty: Mutation = (p, r) => {
  const members = p.places.filter(({ node }) => node.type === "MemberExpression" && !node.computed && node.property.type === "Identifier");
  if (!members.length) return undefined;
  const m = pick(r, members).node as acorn.MemberExpression;
  const used = members.map(({ node }) => ((node as acorn.MemberExpression).property as acorn.Identifier).name);
  const by = pick(r, r() < 0.5 ? used : PROPERTIES);
  return { text: p.splice(m.property.start, m.property.end, by), what: `replace property \`${p.slice(m)}\` with \`.${by}\`` };
};

const replaceLiteral: Mutation = (p, r) => {
  const literals = p.places.filter(({ node }) => node.type === "Literal");
  if (!literals.length) return undefined;
  const { node } = pick(r, literals);
  const by = pick(r, LITERALS);
  return { text: p.splice(node.start, node.end, by), what: `replace literal \`${short(p.slice(node))}\` with \`${by}\`` };
};

const replaceOperator: Mutation = (p, r) => {
  const ops = p.places.filter(({ node }) => node.type === "BinaryExpression" || node.type === "LogicalExpression" || node.type === "AssignmentExpression");
  if (!ops.length) return undefined;
  const n = pick(r, ops).node as acorn.BinaryExpression | acorn.LogicalExpression | acorn.AssignmentExpression;
  const between = p.text.slice(n.left.end, n.right.start);
  const at = between.indexOf(n.operator);
  if (at < 0) return undefined;
  const by = pick(r, n.type === "AssignmentExpression" ? ASSIGNMENT_OPERATORS : BINARY_OPERATORS);
  const start = n.left.end + at;
  // spaces keep words apart (`a in b`) and stop `a - -0` from becoming `a--0`
  return { text: p.splice(start, start + n.operator.length, ` ${by} `), what: `replace operator \`${n.operator}\` in \`${short(p.slice(n))}\` with \`${by}\`` };
};

const wrapStatement: Mutation = (p, r) => {
  if (!p.statements.length) return undefined;
  const { block, index } = pick(r, p.statements);
  const s = block.body[index]!;
  const [what, wrap] = pick(r, STATEMENT_WRAPS);
  return { text: p.splice(s.start, s.end, wrap(p.slice(s))), what: `wrap statement \`${short(p.slice(s))}\` in ${what}` };
};

/** Node types that are expressions wherever they appear (an identifier may be a declaration's name). */
const EXPRESSIONS = new Set([
  "Identifier", "Literal", "MemberExpression", "CallExpression", "BinaryExpression", "LogicalExpression",
  "UnaryExpression", "ConditionalExpression", "ArrayExpression",
]);

/** The expressions of the kernel's body (not a property after a dot, a declaration's name or a parameter). */
const expressions = (p: Parsed): Place[] => p.places.filter(({ node, parent, key }) => EXPRESSIONS.has(node.type) && parent !== undefined
  && !(parent.type === "MemberExpression" && key === "property" && !parent.computed)
  && !(parent.type === "VariableDeclarator" && key === "id")
  && !((parent.type === "ArrowFunctionExpression" || parent.type === "FunctionExpression") && key !== "body"));

const replaceExpression: Mutation = (p, r) => {
  const exprs = expressions(p);
  if (exprs.length < 2) return undefined;
  const { node } = pick(r, exprs), by = p.slice(pick(r, exprs).node);
  return { text: p.splice(node.start, node.end, `(${by})`), what: `replace \`${short(p.slice(node))}\` with \`${short(by)}\`` };
};

/** Ways to nest an expression `k` levels deep. */
const NESTINGS: readonly [string, (e: string, k: number) => string][] = [
  ["negations", (e, k) => `${"-(".repeat(k)}${e}${")".repeat(k)}`],
  ["a sum", (e, k) => `${e}${" + 0".repeat(k)}`],
  ["conditionals", (e, k) => `${"(true ? ".repeat(k)}${e}${" : 0)".repeat(k)}`],
  ["calls", (e, k) => `${"Math.abs(".repeat(k)}${e}${")".repeat(k)}`],
];

const nestExpression: Mutation = (p, r) => {
  const exprs = expressions(p);
  if (!exprs.length) return undefined;
  const { node } = pick(r, exprs);
  const [what, nest] = pick(r, NESTINGS), k = pick(r, [50, 300, 1000, 3000]);
  return { text: p.splice(node.start, node.end, nest(p.slice(node), k)), what: `nest \`${short(p.slice(node))}\` in ${k} ${what}` };
};

const wrapExpression: Mutation = (p, r) => {
  const exprs = expressions(p);
  if (!exprs.length) return undefined;
  const { node } = pick(r, exprs);
  const [what, wrap] = pick(r, EXPRESSION_WRAPS);
  return { text: p.splice(node.start, node.end, wrap(p.slice(node), node, p.text)), what: `wrap \`${short(p.slice(node))}\` in ${what}` };
};

/** The mutations with their weights. */
const MUTATIONS: readonly [Mutation, number][] = [
  [deleteStatement, 2], [duplicateStatement, 2], [swapStatements, 2],
  [replaceName, 3], [replaceProperty, 1], [replaceLiteral, 3], [replaceOperator, 1], [replaceExpression, 2],
  [wrapStatement, 2], [wrapExpression, 2], [nestExpression, 1],
];
const TOTAL_WEIGHT = MUTATIONS.reduce((s, [, w]) => s + w, 0);

function pickMutation(r: Rng): Mutation {
  let x = r() * TOTAL_WEIGHT;
  for (const [m, w] of MUTATIONS) if ((x -= w) < 0) return m;
  return MUTATIONS[MUTATIONS.length - 1]![0];
}

const short = (s: string) => {
  const one = s.replace(/\s+/g, " ");
  return one.length > 60 ? `${one.slice(0, 57)}…` : one;
};

/** Whether V8 takes `text` as a function expression (its early errors included). */
export function isFunctionText(text: string): boolean {
  try {
    return typeof new Function(`return (${text}\n);`)() === "function";
  } catch {
    return false;
  }
}

/**
 * Applies 1 to 3 random mutations to a function's text; each must leave text V8 takes as a function
 * (a mutation that does not is drawn again, up to a limit). Deterministic for a given `r`.
 */
export function mutate(source: string, r: Rng): Mutant {
  const count = r() < 0.6 ? 1 : r() < 0.75 ? 2 : 3;
  let text = source;
  const mutations: string[] = [];
  for (let k = 0; k < count; k++) {
    let parsed: Parsed;
    try {
      parsed = new Parsed(text);
    } catch {
      break; // V8 takes some texts acorn does not (`f() = 1`, an error only when it runs): the mutant is kept as it is
    }
    for (let tries = 0; tries < 30; tries++) {
      const m = pickMutation(r)(parsed, r);
      if (m && m.text !== text && isFunctionText(m.text)) {
        text = m.text;
        mutations.push(m.what);
        break;
      }
    }
  }
  return { source: text, mutations };
}

/** A well-mixed 32-bit seed from a case number (consecutive numbers give unrelated streams). */
export function mixSeed(n: number): number {
  let h = (n ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0 || 1;
}
