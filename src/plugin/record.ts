// The build plugin's transform: finds the functions a module passes to numbats' compiler (cuda.jit,
// cuda.reduce, cuda.vectorize, cuda.guvectorize, functions in their `env`) and wraps each where it is
// passed in an expression that attaches its record (compiler/recorded.ts): the original text with
// TypeScript's types blanked, where it is in the file, and what its free names denote. Minifiers and
// instrumenters that run afterwards rewrite the function, not the record.

import { isAbsolute, relative, sep } from "node:path";
import { Parser } from "acorn";
import { tsPlugin } from "@sveltejs/acorn-typescript";
import MagicString from "magic-string";
import { analyzeScopes, resolve, type ModuleScopes, type Scope } from "./scope.js";
import { blankedText, children, isFunction, type SyntaxNode } from "./syntax.js";

/** Where a function is passed, and what to attach to it there. */
export interface KernelSite {
  /** offsets of the expression to wrap: the function itself, or the name it is passed by */
  readonly start: number;
  readonly end: number;
  /** the key of a shorthand property (`env: { f }`), which must become `f: wrapped` */
  readonly shorthand?: string;
  /** the record, as a JavaScript object expression evaluated where the function is passed */
  readonly record: string;
}

/**
 * What the transform found in a module: the sites; the statements to add at the module's end, which
 * record its other top-level functions (a kernel written here may be passed to cuda.jit in another
 * module); and why a function it found could not be recorded.
 */
export interface ModuleKernels {
  readonly sites: readonly KernelSite[];
  readonly appended: readonly string[];
  readonly warnings: readonly string[];
}

/** The expression a site's function is wrapped in: `RECORD_HELPER(fn, record)` attaches the record and returns fn. */
export const RECORD_HELPER = '((f, r) => Object.defineProperty(f, Symbol.for("numbats.source"), { value: r, configurable: true }))';

/** The numbats calls whose function arguments (and the functions in their `env` option) are compiled from their text. */
const COMPILING_CALLS = new Set(["jit", "reduce", "vectorize", "guvectorize"]);

const PARSERS: Readonly<Record<string, typeof Parser>> = (() => {
  const ts = Parser.extend(tsPlugin());
  const tsx = Parser.extend(tsPlugin({ jsx: true }));
  return { ".js": Parser, ".mjs": Parser, ".cjs": Parser, ".ts": ts, ".mts": ts, ".cts": ts, ".tsx": tsx, ".jsx": tsx };
})();

/** A module id without a bundler's query (`?v=…`) or hash. */
const cleanId = (id: string): string => id.replace(/[?#].*$/, "");

/** Whether the transform can read a module of this id: JavaScript or TypeScript, with or without JSX. */
export const transformable = (id: string): boolean => parserOf(cleanId(id)) !== undefined;

const parserOf = (file: string): typeof Parser | undefined => PARSERS[/\.[cm]?[jt]sx?$/.exec(file)?.[0] ?? ""];

/** Whether a module may use numbats at all: the transform parses only those. */
export const mentionsNumbats = (code: string): boolean => /numbats|\bcuda\b/.test(code);

/**
 * The functions `code` (the module `id`, as it is in its file) passes to numbats, each with its
 * record; `root` is the directory the record's file is relative to.
 */
export function findKernels(code: string, id: string, root: string): ModuleKernels {
  const file = cleanId(id);
  const parser = parserOf(file);
  if (!parser || !mentionsNumbats(code)) return { sites: [], appended: [], warnings: [] };
  let program: SyntaxNode;
  try {
    program = parseModule(parser, code);
  } catch (e) {
    // a module the bundler reads but this parser cannot (another syntax extension): if it has
    // kernels, they compile from their own text as without the plugin
    return { sites: [], appended: [], warnings: [`numbats: ${file} was not searched for kernels: ${(e as Error).message}`] };
  }
  const scopes = analyzeScopes(program);
  const numbats = numbatsBindings(program);
  const named = assignedNames(program);
  const sites: KernelSite[] = [];
  const warnings: string[] = [];
  const where = displayFile(file, root);
  const recorded = new Set<SyntaxNode>();
  /**
   * The record of `fn` where `scope` is, or undefined when its text would not parse (with a warning
   * for a function passed to numbats; another may be host code with JSX, say, and is left alone).
   */
  const recordOf = (fn: SyntaxNode, name: string | undefined, scope: Scope, passed: boolean): string | undefined => {
    const source = blankedText(code, fn);
    const problem = parseProblem(source);
    const { line, column } = (fn.loc as { start: { line: number; column: number } }).start;
    if (problem) {
      if (passed) warnings.push(`numbats: the function at ${where}:${line}:${column + 1} was not recorded: its text without types does not parse (${problem})`);
      return undefined;
    }
    recorded.add(fn);
    return recordText({ source, name, file: where, line, column }, freeNames(fn, scope, scopes));
  };
  for (const call of scopes.calls) {
    if (!isCompilingCall(call.node, call.scope, numbats, scopes.module)) continue;
    for (const f of functionsPassed(call.node, call.scope, named.get(call.node))) {
      const record = recordOf(f.fn, f.name, call.scope, true);
      if (record) sites.push({ start: f.at.start, end: f.at.end, ...(f.shorthand ? { shorthand: f.shorthand } : {}), record });
    }
  }
  // in a module that imports numbats, every other top-level function, recorded where it is declared
  const appended: string[] = [];
  if (numbats.imported) {
    for (const [name, binding] of scopes.module.names) {
      if (!binding.fn || !isFunction(binding.fn) || recorded.has(binding.fn)) continue;
      const record = recordOf(binding.fn, name, scopes.module, false);
      if (record) appended.push(`${RECORD_HELPER}(${name}, ${record});\n`);
    }
  }
  return { sites, appended, warnings };
}

/** A function a module binds at its top level, as its record's fields and the free names it uses. */
export interface TopLevelFunction extends RecordFields {
  readonly name: string;
  readonly names: readonly string[];
}

/**
 * The records of the functions `code` (the module `id`) binds at its top level: function declarations
 * and `const f = function/arrow`. numbats' package build records its math library's functions, which
 * the compiler compiles from their text though nothing passes them to cuda.jit, with these.
 */
export function topLevelFunctions(code: string, id: string, root: string): TopLevelFunction[] {
  const file = cleanId(id);
  const parser = parserOf(file);
  if (!parser) throw new Error(`numbats: ${file} is not a JavaScript or TypeScript module`);
  const scopes = analyzeScopes(parseModule(parser, code));
  const found: TopLevelFunction[] = [];
  for (const [name, binding] of scopes.module.names) {
    if (!binding.fn) continue;
    const { line, column } = (binding.fn.loc as { start: { line: number; column: number } }).start;
    const names = freeNames(binding.fn, scopes.module, scopes).sort();
    found.push({ name, source: blankedText(code, binding.fn), file: displayFile(file, root), line, column, names });
  }
  return found;
}

/** The statement that attaches a top-level function's record to it. */
export const recordStatement = (f: TopLevelFunction): string => `${RECORD_HELPER}(${f.name}, ${recordText(f, f.names)});\n`;

/** `code` with each site's function wrapped so that it carries its record, and the source map of the change. */
export function recordKernels(code: string, id: string, root: string): { code: string; map: ReturnType<MagicString["generateMap"]>; warnings: readonly string[] } | { code: undefined; warnings: readonly string[] } {
  const { sites, appended, warnings } = findKernels(code, id, root);
  if (sites.length === 0 && appended.length === 0) return { code: undefined, warnings };
  const ms = new MagicString(code);
  for (const s of sites) {
    ms.prependLeft(s.start, `${s.shorthand ? `${s.shorthand}: ` : ""}${RECORD_HELPER}(`);
    ms.appendRight(s.end, `, ${s.record})`);
  }
  if (appended.length > 0) ms.append(`\n${appended.join("")}`);
  return { code: ms.toString(), map: ms.generateMap({ hires: true, source: cleanId(id), includeContent: true }), warnings };
}

function parseModule(parser: typeof Parser, code: string): SyntaxNode {
  const options = { ecmaVersion: "latest", locations: true, allowHashBang: true, allowReturnOutsideFunction: true } as const;
  try {
    return parser.parse(code, { ...options, sourceType: "module" }) as unknown as SyntaxNode;
  } catch (asModule) {
    try {
      return parser.parse(code, { ...options, sourceType: "script" }) as unknown as SyntaxNode; // sloppy-mode CommonJS
    } catch {
      throw asModule;
    }
  }
}

/** Why a recorded text would not parse as a JavaScript function, if it would not. */
function parseProblem(source: string): string | undefined {
  try {
    Parser.parse(`(${source}\n)`, { ecmaVersion: "latest" });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The record's file: relative to the build's root, with `/` separators; absolute when outside the root. */
function displayFile(file: string, root: string): string {
  const rel = relative(root, file);
  return rel.startsWith("..") || isAbsolute(rel) ? file : rel.split(sep).join("/");
}

// ---------------------------------------------------------------------------
// which calls compile functions

/** The module's names for numbats' `cuda` namespace and for the numbats module itself. */
interface NumbatsBindings {
  readonly cuda: Set<string>;
  readonly module: Set<string>;
  /** whether the module imports or requires anything of numbats (a dtype alone, say) */
  readonly imported: boolean;
}

/**
 * `import { cuda as c } from "numbats"`, `import * as nb from "numbats"`, `const { cuda } = require("numbats")`,
 * `const nb = require("numbats")`; also `cuda` imported from a module of the app's own that re-exports it.
 */
function numbatsBindings(program: SyntaxNode): NumbatsBindings {
  const found = { cuda: new Set<string>(), module: new Set<string>() };
  let importsNumbats = false;
  for (const stmt of program.body as SyntaxNode[]) {
    if (stmt.type === "ImportDeclaration" && stmt.importKind !== "type") {
      const fromNumbats = (stmt.source as SyntaxNode).value === "numbats";
      importsNumbats ||= fromNumbats;
      for (const s of stmt.specifiers as SyntaxNode[]) {
        const local = (s.local as SyntaxNode).name as string;
        if (s.type === "ImportSpecifier" && s.importKind !== "type" && importedName(s) === "cuda") found.cuda.add(local);
        else if (s.type !== "ImportSpecifier" && fromNumbats) found.module.add(local);
      }
    }
    if (stmt.type === "VariableDeclaration") for (const d of stmt.declarations as SyntaxNode[]) requiredNumbats(d, found);
  }
  return { ...found, imported: importsNumbats || found.cuda.size > 0 || found.module.size > 0 };
}

const importedName = (s: SyntaxNode): unknown => {
  const imported = s.imported as SyntaxNode;
  return imported.type === "Identifier" ? imported.name : imported.value;
};

const isRequireNumbats = (e: SyntaxNode | null): boolean =>
  e?.type === "CallExpression" && (e.callee as SyntaxNode).type === "Identifier" && (e.callee as SyntaxNode).name === "require" &&
  (e.arguments as SyntaxNode[]).length === 1 && (e.arguments as SyntaxNode[])[0]!.value === "numbats";

/** `const nb = require("numbats")`, `const { cuda: c } = require("numbats")`, `const c = require("numbats").cuda`. */
function requiredNumbats(d: SyntaxNode, found: Pick<NumbatsBindings, "cuda" | "module">): void {
  const id = d.id as SyntaxNode;
  const init = d.init as SyntaxNode | null;
  if (isRequireNumbats(init)) {
    if (id.type === "Identifier") found.module.add(id.name as string);
    if (id.type === "ObjectPattern") {
      for (const p of id.properties as SyntaxNode[]) {
        if (p.type === "Property" && !p.computed && propertyName(p) === "cuda" && (p.value as SyntaxNode).type === "Identifier") found.cuda.add((p.value as SyntaxNode).name as string);
      }
    }
  } else if (init?.type === "MemberExpression" && !init.computed && isRequireNumbats(init.object as SyntaxNode) && (init.property as SyntaxNode).name === "cuda" && id.type === "Identifier") {
    found.cuda.add(id.name as string);
  }
}

/** A property's key as a name: `a`, `"a"`; undefined for a computed key. */
const propertyName = (p: SyntaxNode): string | undefined => {
  if (p.computed) return undefined;
  const key = p.key as SyntaxNode;
  return key.type === "Identifier" ? (key.name as string) : typeof key.value === "string" ? key.value : undefined;
};

/** `cuda.jit(…)`, `c.reduce(…)` for an alias `c`, `nb.cuda.vectorize(…)`: the module's numbats bindings, not shadowed. */
function isCompilingCall(call: SyntaxNode, scope: Scope, numbats: NumbatsBindings, module: Scope): boolean {
  const callee = call.callee as SyntaxNode;
  if (callee.type !== "MemberExpression" || callee.computed || !COMPILING_CALLS.has((callee.property as SyntaxNode).name as string)) return false;
  const ns = callee.object as SyntaxNode;
  const moduleBinding = (n: SyntaxNode, names: Set<string>) => n.type === "Identifier" && names.has(n.name as string) && resolve(n.name as string, scope) === module;
  if (moduleBinding(ns, numbats.cuda)) return true;
  return ns.type === "MemberExpression" && !ns.computed && (ns.property as SyntaxNode).name === "cuda" && moduleBinding(ns.object as SyntaxNode, numbats.module);
}

// ---------------------------------------------------------------------------
// which functions a call passes

/** A function a call passes: the function, the expression that passes it, and its name. */
interface Passed {
  readonly fn: SyntaxNode;
  readonly at: SyntaxNode;
  readonly name?: string;
  readonly shorthand?: string;
}

/**
 * The functions among a call's arguments (inline, or a name bound to a function in scope) and among
 * its options' `env` values; an inline function without a name of its own takes the name it is bound
 * to (`const dev = cuda.jit((x) => …, …)`, `env: { op: (a, b) => … }`).
 */
function functionsPassed(call: SyntaxNode, scope: Scope, assigned: string | undefined): Passed[] {
  const found: Passed[] = [];
  const take = (e: SyntaxNode, name: string | undefined, shorthand?: string) => {
    const p = passedFunction(e, scope, name);
    if (p) found.push(shorthand ? { ...p, shorthand } : p);
  };
  for (const arg of call.arguments as SyntaxNode[]) {
    if (arg.type !== "ObjectExpression") { take(arg, assigned); continue; }
    const env = (arg.properties as SyntaxNode[]).find((o) => o.type === "Property" && propertyName(o) === "env")?.value as SyntaxNode | undefined;
    if (env?.type !== "ObjectExpression") continue;
    for (const p of env.properties as SyntaxNode[]) {
      const key = p.type === "Property" && !p.method && p.kind === "init" ? propertyName(p) : undefined;
      if (key !== undefined) take(p.value as SyntaxNode, key, p.shorthand ? key : undefined);
    }
  }
  return found;
}

function passedFunction(e: SyntaxNode, scope: Scope, name: string | undefined): Passed | undefined {
  if (isFunction(e)) return { fn: e, at: e, ...nameOf(e, name) };
  if (e.type !== "Identifier") return undefined;
  const fn = resolve(e.name as string, scope)?.names.get(e.name as string)?.fn;
  return fn ? { fn, at: e, name: e.name as string, ...nameOf(fn, undefined) } : undefined;
}

const nameOf = (fn: SyntaxNode, otherwise: string | undefined): { name?: string } => {
  const own = (fn.id as SyntaxNode | null | undefined)?.name as string | undefined;
  const name = own ?? otherwise;
  return name === undefined ? {} : { name };
};

/** The name each call's result is bound to: `const k = CALL`, `k = CALL`, `{ k: CALL }`. */
function assignedNames(program: SyntaxNode): Map<SyntaxNode, string> {
  const names = new Map<SyntaxNode, string>();
  const visit = (node: SyntaxNode): void => {
    const [target, value] = node.type === "VariableDeclarator" ? [node.id, node.init]
      : node.type === "AssignmentExpression" ? [node.left, node.right]
      : node.type === "Property" && !node.computed ? [node.key, node.value] : [undefined, undefined];
    if ((value as SyntaxNode | undefined)?.type === "CallExpression" && (target as SyntaxNode).type === "Identifier") names.set(value as SyntaxNode, (target as SyntaxNode).name as string);
    for (const [c] of children(node)) visit(c);
  };
  visit(program);
  return names;
}

// ---------------------------------------------------------------------------
// the record

/**
 * The free names of `fn` that are bound outside it (module bindings, imports, an enclosing function's
 * variables) and mean the same where it is passed (`at`): globals and its own locals are not free names.
 */
function freeNames(fn: SyntaxNode, at: Scope, scopes: ModuleScopes): string[] {
  const names = new Set<string>();
  const inside = (n: SyntaxNode) => n.start >= fn.start && n.end <= fn.end;
  for (const ref of scopes.references) {
    if (!inside(ref.node)) continue;
    const name = ref.node.name as string;
    const binder = resolve(name, ref.scope);
    if (binder && !inside(binder.node) && resolve(name, at) === binder) names.add(name);
  }
  return [...names];
}

export interface RecordFields {
  readonly source: string;
  readonly name: string | undefined;
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** The record as an object expression; `names` is a thunk, read when the function compiles. */
function recordText(r: RecordFields, names: readonly string[]): string {
  const fields = [
    `source: ${JSON.stringify(r.source)}`,
    ...(r.name !== undefined ? [`name: ${JSON.stringify(r.name)}`] : []),
    `file: ${JSON.stringify(r.file)}`, `line: ${r.line}`, `column: ${r.column}`,
    `names: () => ({${names.map((n) => ` ${n}: ${n}`).join(",")} })`,
  ];
  return `{ ${fields.join(", ")} }`;
}
