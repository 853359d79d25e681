// The records (src/compiler/recorded.ts) of one of numbats' own modules' top-level functions, read from
// its TypeScript source with TypeScript's parser: each function's text with its types replaced by spaces
// (so every position is the .ts file's), where it starts, and the module-level names it uses.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

export interface OwnFunction {
  /** the binding the function is exported as, in the compiled module too */
  readonly name: string;
  readonly source: string;
  /** the .ts file, relative to the package root */
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** the module-level bindings and imports the function uses (values, not types) */
  readonly names: readonly string[];
}

/** The records of `module`'s (a path from `root`) top-level function declarations and `const f = (…) => …`. */
export function recordedFunctions(root: string, module: string): OwnFunction[] {
  const sf = ts.createSourceFile(module, readFileSync(join(root, module), "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const moduleNames = moduleValueNames(sf);
  const found: OwnFunction[] = [];
  const add = (name: string, fn: ts.FunctionLikeDeclaration, start: number) => {
    const { line, character } = sf.getLineAndCharacterOfPosition(start);
    const names = [...usedNames(fn)].filter((n) => moduleNames.has(n) && !declaredIn(fn).has(n)).sort();
    found.push({ name, source: blankTypes(sf, fn, start), file: module, line: line + 1, column: character, names });
  };
  for (const s of sf.statements) {
    if (ts.isFunctionDeclaration(s) && s.name && s.body) add(s.name.text, s, keyword(sf, s, ts.SyntaxKind.FunctionKeyword));
    if (!ts.isVariableStatement(s)) continue;
    for (const d of s.declarationList.declarations) {
      const init = d.initializer;
      if (ts.isIdentifier(d.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) add(d.name.text, init, init.getStart(sf));
    }
  }
  return found;
}

/** Where `node`'s first token of `kind` starts (a function declaration's text starts at `function`, after `export`). */
function keyword(sf: ts.SourceFile, node: ts.Node, kind: ts.SyntaxKind): number {
  const token = node.getChildren(sf).find((c) => c.kind === kind);
  if (!token) throw new Error(`${sf.fileName}: no ${ts.SyntaxKind[kind]} in the declaration at offset ${node.getStart(sf)}`);
  return token.getStart(sf);
}

/** The names a module binds to values at its top level: its functions, variables, classes and value imports. */
function moduleValueNames(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s) && s.importClause && !s.importClause.isTypeOnly) {
      const c = s.importClause;
      if (c.name) names.add(c.name.text);
      if (c.namedBindings && ts.isNamespaceImport(c.namedBindings)) names.add(c.namedBindings.name.text);
      if (c.namedBindings && ts.isNamedImports(c.namedBindings)) for (const e of c.namedBindings.elements) if (!e.isTypeOnly) names.add(e.name.text);
    }
    if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name) names.add(s.name.text);
    if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
  }
  return names;
}

/** Identifiers `fn` reads as values (not property names, declarations or types). */
function usedNames(fn: ts.Node): Set<string> {
  const used = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isTypeNode(n)) return;
    if (ts.isIdentifier(n) && isReference(n)) used.add(n.text);
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(fn, visit);
  return used;
}

function isReference(id: ts.Identifier): boolean {
  const p = id.parent;
  if (ts.isPropertyAccessExpression(p) && p.name === id) return false;
  if ((ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p) || ts.isPropertyDeclaration(p)) && p.name === id) return false;
  if ((ts.isParameter(p) || ts.isVariableDeclaration(p) || ts.isFunctionDeclaration(p) || ts.isFunctionExpression(p) || ts.isBindingElement(p)) && p.name === id) return false;
  return !ts.isLabeledStatement(p) && !ts.isBreakOrContinueStatement(p);
}

/** The names `fn` declares itself (parameters, variables, inner functions), which hide the module's. */
function declaredIn(fn: ts.Node): Set<string> {
  const names = new Set<string>();
  const visit = (n: ts.Node): void => {
    if ((ts.isParameter(n) || ts.isVariableDeclaration(n) || ts.isBindingElement(n) || ts.isFunctionDeclaration(n)) && n.name && ts.isIdentifier(n.name)) names.add(n.name.text);
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(fn, visit);
  return names;
}

/** `fn`'s text from `start`, with TypeScript's own syntax replaced by spaces (line breaks kept). */
function blankTypes(sf: ts.SourceFile, fn: ts.Node, start: number): string {
  const text = sf.text;
  const out = text.slice(start, fn.end).split("");
  const blank = (from: number, to: number) => {
    for (let i = Math.max(from, start); i < to; i++) if (out[i - start] !== "\n" && out[i - start] !== "\r") out[i - start] = " ";
  };
  /** the position of `ch`, the first token before `pos` */
  const back = (pos: number, ch: string) => {
    let i = pos - 1;
    while (/\s/.test(text[i]!)) i--;
    if (text[i] !== ch) throw new Error(`${sf.fileName}: expected '${ch}' before offset ${pos}`);
    return i;
  };
  const angles = (list: ts.NodeArray<ts.Node>) => blank(back(list.pos, "<") , text.indexOf(">", list.end) + 1);
  const visit = (n: ts.Node): void => {
    const typed = n as { type?: ts.TypeNode; typeParameters?: ts.NodeArray<ts.Node>; typeArguments?: ts.NodeArray<ts.Node>; questionToken?: ts.Node };
    if (typed.type && !ts.isTypeNode(n) && !ts.isAsExpression(n) && !ts.isSatisfiesExpression(n) && !ts.isTypeAssertionExpression(n)) {
      blank(back(typed.type.getStart(sf), ":"), typed.type.end);
    }
    if (ts.isParameter(n) && n.questionToken) blank(n.questionToken.getStart(sf), n.questionToken.end);
    if (ts.isAsExpression(n) || ts.isSatisfiesExpression(n) || ts.isNonNullExpression(n)) blank(n.expression.end, n.end);
    if (ts.isTypeAssertionExpression(n)) blank(n.getStart(sf), n.expression.getStart(sf));
    if (typed.typeParameters) angles(typed.typeParameters);
    if (typed.typeArguments && !ts.isTypeNode(n)) angles(typed.typeArguments);
    if (!ts.isTypeNode(n)) ts.forEachChild(n, visit);
  };
  visit(fn);
  return out.join("");
}
