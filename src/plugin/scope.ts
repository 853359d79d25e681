// The scopes of a module as acorn parses it (JavaScript or TypeScript): which names each scope
// declares, what a name used at a place refers to, and every identifier that is a reference. Enough
// to tell a kernel's free names that the module binds from its locals and from globals.

import { children, isFunction, isTypeSyntax, type SyntaxNode } from "./syntax.js";

/** What a name is bound to: its declaration, and the function a `function f` or `const f = …` binds. */
export interface Binding {
  readonly kind: "import" | "var" | "let" | "const" | "function" | "class" | "param" | "catch" | "enum";
  /** the import declaration, variable declarator, function or class that binds the name */
  readonly declaration: SyntaxNode;
  /** the function a function declaration or a `const f = function/arrow` binds */
  readonly fn?: SyntaxNode;
}

export interface Scope {
  readonly node: SyntaxNode;
  readonly parent: Scope | undefined;
  /** var-scoped: a function's or the module's (where `var` and nested blocks' functions hoist to) */
  readonly isFunction: boolean;
  readonly names: Map<string, Binding>;
}

/** An identifier that refers to a binding (or a global), and the scope it appears in. */
export interface Reference {
  readonly node: SyntaxNode;
  readonly scope: Scope;
}

export interface ModuleScopes {
  readonly module: Scope;
  /** each function's own scope (its parameters and body) */
  readonly functions: Map<SyntaxNode, Scope>;
  /** every call, with the scope it is made in */
  readonly calls: { node: SyntaxNode; scope: Scope }[];
  readonly references: Reference[];
}

/** The scope that binds `name` where `scope` is, or undefined for a global. */
export function resolve(name: string, scope: Scope | undefined): Scope | undefined {
  for (let s = scope; s; s = s.parent) if (s.names.has(name)) return s;
  return undefined;
}

/** The names a binding pattern declares (`a`, `{ a, b: [c] }`, `...d`, `e = 1`). */
export function patternNames(p: SyntaxNode): string[] {
  switch (p.type) {
    case "Identifier": return [p.name as string];
    case "ObjectPattern": return (p.properties as SyntaxNode[]).flatMap((q) => patternNames((q.type === "RestElement" ? q : q.value) as SyntaxNode));
    case "ArrayPattern": return (p.elements as (SyntaxNode | null)[]).flatMap((e) => (e ? patternNames(e) : []));
    case "RestElement": return patternNames(p.argument as SyntaxNode);
    case "AssignmentPattern": return patternNames(p.left as SyntaxNode);
    case "TSParameterProperty": return patternNames(p.parameter as SyntaxNode);
    default: return [];
  }
}

/** Nodes with a block scope of their own (a function's body block shares the function's). */
const BLOCK_SCOPES = new Set(["BlockStatement", "ForStatement", "ForInStatement", "ForOfStatement", "SwitchStatement", "CatchClause", "StaticBlock"]);

/** Under these keys of these nodes an identifier names a property or label, not a binding. */
const NOT_REFERENCES: Readonly<Record<string, (parent: SyntaxNode) => boolean>> = {
  property: (p) => (p.type === "MemberExpression" || p.type === "MetaProperty") && !p.computed,
  key: (p) => !p.computed,
  label: () => true,
  meta: (p) => p.type === "MetaProperty",
  imported: () => true,
  exported: () => true,
  id: () => true,
};

/** The scopes, calls and references of a module's tree. */
export function analyzeScopes(program: SyntaxNode): ModuleScopes {
  const module: Scope = { node: program, parent: undefined, isFunction: true, names: new Map() };
  const result: ModuleScopes = { module, functions: new Map(), calls: [], references: [] };
  const varScope = (s: Scope): Scope => (s.isFunction ? s : varScope(s.parent!));
  const declare = (scope: Scope, p: SyntaxNode, binding: Binding) => { for (const n of patternNames(p)) scope.names.set(n, binding); };

  const visitPattern = (p: SyntaxNode, scope: Scope): void => {
    // a binding pattern: its defaults and computed keys are expressions, its names are not references
    if (p.type === "AssignmentPattern") { visitPattern(p.left as SyntaxNode, scope); visit(p.right as SyntaxNode, p, "right", scope); return; }
    for (const [c, key] of children(p)) {
      if (key === "key" && p.type === "Property" && p.computed) visit(c, p, key, scope);
      else if (c.type !== "Identifier" && !isTypeSyntax(c)) visitPattern(c, scope);
    }
  };

  const visitFunction = (fn: SyntaxNode, scope: Scope): void => {
    const id = fn.id as SyntaxNode | null | undefined;
    if (id && fn.type === "FunctionDeclaration") declare(isBlock(scope) ? scope : varScope(scope), id, { kind: "function", declaration: fn, fn });
    const own: Scope = { node: fn, parent: scope, isFunction: true, names: new Map() };
    result.functions.set(fn, own);
    if (id && fn.type === "FunctionExpression") declare(own, id, { kind: "function", declaration: fn, fn });
    for (const p of fn.params as SyntaxNode[]) { declare(own, p, { kind: "param", declaration: fn }); visitPattern(p, own); }
    const body = fn.body as SyntaxNode;
    if (body.type === "BlockStatement") for (const [c, key] of children(body)) visit(c, body, key, own);
    else visit(body, fn, "body", own);
  };

  const visitDeclarator = (d: SyntaxNode, kind: "var" | "let" | "const", scope: Scope): void => {
    const id = d.id as SyntaxNode;
    const init = d.init as SyntaxNode | null;
    const fn = kind === "const" && id.type === "Identifier" && init && (init.type === "FunctionExpression" || init.type === "ArrowFunctionExpression") ? init : undefined;
    declare(kind === "var" ? varScope(scope) : scope, id, { kind, declaration: d, ...(fn ? { fn } : {}) });
    visitPattern(id, scope);
    if (init) visit(init, d, "init", scope);
  };

  const visit = (node: SyntaxNode, parent: SyntaxNode, key: string, scope: Scope): void => {
    if (isTypeSyntax(node)) return;
    if (node.type === "Identifier") {
      if (!NOT_REFERENCES[key]?.(parent)) result.references.push({ node, scope });
      return;
    }
    if (isFunction(node)) { visitFunction(node, scope); return; }
    if (node.type === "ImportDeclaration") {
      if (node.importKind !== "type") for (const s of node.specifiers as SyntaxNode[]) if (s.importKind !== "type") declare(module, s.local as SyntaxNode, { kind: "import", declaration: node });
      return;
    }
    if (node.type === "VariableDeclaration") {
      if (node.declare === true) return; // `declare const x: T` binds a type only
      for (const d of node.declarations as SyntaxNode[]) visitDeclarator(d, node.kind as "var" | "let" | "const", scope);
      return;
    }
    if ((node.type === "ClassDeclaration" || node.type === "TSEnumDeclaration") && node.id) {
      declare(scope, node.id as SyntaxNode, { kind: node.type === "ClassDeclaration" ? "class" : "enum", declaration: node });
    }
    if (node.type === "CallExpression") result.calls.push({ node, scope });
    let inner = scope;
    if (BLOCK_SCOPES.has(node.type)) inner = { node, parent: scope, isFunction: false, names: new Map() };
    if (node.type === "CatchClause" && node.param) { declare(inner, node.param as SyntaxNode, { kind: "catch", declaration: node }); visitPattern(node.param as SyntaxNode, inner); }
    for (const [c, k] of children(node)) {
      if (node.type === "CatchClause" && k === "param") continue;
      visit(c, node, k, inner);
    }
  };

  for (const [c, key] of children(program)) visit(c, program, key, module);
  return result;
}

const isBlock = (s: Scope): boolean => !s.isFunction;
