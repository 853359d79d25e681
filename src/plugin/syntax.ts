// What the build plugin needs of a syntax tree, for the trees of acorn (with its TypeScript plugin)
// and of Babel alike: nodes with a type and their offsets in the file, and TypeScript's type syntax
// blanked out of a function's text.

/** A node of an ESTree-like tree (acorn's or Babel's): its type, offsets in the file, and children. */
export interface SyntaxNode {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly [key: string]: unknown;
}

/** Keys of a node that hold no child nodes (positions, comments, Babel's extra data). */
const NOT_CHILDREN = new Set(["type", "start", "end", "loc", "range", "extra", "leadingComments", "trailingComments", "innerComments"]);

export const isNode = (v: unknown): v is SyntaxNode =>
  typeof v === "object" && v !== null && typeof (v as SyntaxNode).type === "string" && typeof (v as SyntaxNode).start === "number";

/** A node's children, with the key each is under. */
export function* children(node: SyntaxNode): Generator<[SyntaxNode, string]> {
  for (const key of Object.keys(node)) {
    if (NOT_CHILDREN.has(key)) continue;
    const v = node[key];
    if (Array.isArray(v)) {
      for (const c of v) if (isNode(c)) yield [c, key];
    } else if (isNode(v)) yield [v, key];
  }
}

/** TypeScript expressions that wrap a JavaScript one: all of the node outside `expression` is type syntax. */
const TYPED_EXPRESSIONS = new Set(["TSAsExpression", "TSSatisfiesExpression", "TSNonNullExpression", "TSTypeAssertion", "TSInstantiationExpression"]);

/**
 * Whether a node is TypeScript type syntax as a whole (an annotation, type parameters or arguments, a
 * type alias or interface): the wrappers of JavaScript expressions are not, their operand is code.
 */
export const isTypeSyntax = (node: SyntaxNode): boolean => node.type.startsWith("TS") && !TYPED_EXPRESSIONS.has(node.type) && node.type !== "TSEnumDeclaration";

export const isTypedExpression = (node: SyntaxNode): boolean => TYPED_EXPRESSIONS.has(node.type);

const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);
export const isFunction = (node: SyntaxNode): boolean => FUNCTIONS.has(node.type);

type Range = readonly [number, number];

/**
 * The ranges of `fn`'s text that are TypeScript only: annotations, type parameters and arguments,
 * `as T`/`satisfies T`/`<T>x`/`x!`, the `?` of an optional parameter, the `!` of a definite
 * assignment, a `this` parameter, type declarations.
 */
function typeRanges(fn: SyntaxNode): Range[] {
  const ranges: Range[] = [];
  const visit = (node: SyntaxNode): void => {
    if (isTypeSyntax(node)) { ranges.push([node.start, node.end]); return; }
    if (isTypedExpression(node)) {
      const e = node.expression as SyntaxNode;
      // <T>x: the type before the operand; the others: everything after it
      ranges.push(node.type === "TSTypeAssertion" ? [node.start, e.start] : [e.end, node.end]);
    }
    const marker = optionalOrDefinite(node);
    if (marker !== undefined) ranges.push([marker, marker + 1]);
    if (isFunction(node)) thisParameter(node, ranges);
    for (const [c] of children(node)) visit(c);
  };
  visit(fn);
  return ranges;
}

/** The offset of the `?` of `a?: T` or the `!` of `let a!: T`, which follow the identifier's name. */
function optionalOrDefinite(node: SyntaxNode): number | undefined {
  if (node.type === "Identifier" && node.optional === true) return node.start + (node.name as string).length;
  if (node.type === "VariableDeclarator" && node.definite === true) {
    const id = node.id as SyntaxNode;
    if (id.type === "Identifier") return id.start + (id.name as string).length;
  }
  return undefined;
}

/** `function f(this: T, a)`: the `this` parameter and its comma are TypeScript only. */
function thisParameter(fn: SyntaxNode, ranges: Range[]): void {
  const params = fn.params as SyntaxNode[];
  const first = params[0];
  if (first?.type === "Identifier" && first.name === "this") ranges.push([first.start, params[1]?.start ?? first.end]);
}

/**
 * `fn`'s text in `code` with its TypeScript-only syntax replaced by spaces (line breaks kept), so that
 * it is JavaScript with every character where it is in the file. For JavaScript, the text itself.
 */
export function blankedText(code: string, fn: SyntaxNode): string {
  const chars = code.slice(fn.start, fn.end).split("");
  for (const [from, to] of typeRanges(fn)) {
    for (let i = from; i < to; i++) if (!/[\n\r\u2028\u2029]/.test(chars[i - fn.start]!)) chars[i - fn.start] = " ";
  }
  return chars.join("");
}
