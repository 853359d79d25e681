// Where a kernel's text is in the file the user wrote, for error excerpts and PTX line info.
//
// A function's text (Function.prototype.toString) is a slice of the script V8 ran, which may be a
// tool's rewrite: tsx prints a function on one line without its types, a bundler moves it into one
// big file. V8 knows where each function starts in its script ([[FunctionLocation]], read through an
// in-process inspector session), so every position in the text is a position in the script; then
//  - the script's source map (the one Node.js holds under tsx or `--enable-source-maps`, else the
//    one the script's `sourceMappingURL` comment names) maps it to the user's original file, line
//    and column;
//  - without a map, the script's own file is quoted when it is what ran and readable (hand-written
//    JS, an unminified bundle: where Node's own stack traces point);
//  - otherwise (minified code, a loader's rewrite without a map, code from `eval`) nothing is known,
//    and errors quote the function's own text at its own line numbers.

import { readFileSync } from "node:fs";
import type { Session } from "node:inspector";
import { findSourceMap, SourceMap, type SourceMapPayload } from "node:module";
import { relative, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import { setSourceLocator, type SourceLocation } from "../errors.js";
import { functionText, recordedSource, type RecordedSource } from "./recorded.js";

export interface SourceOrigin {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

const origins = new WeakMap<Function, SourceOrigin>();

/** Function texts → a function with that text, whose script says where the text is (first wins). */
const functionsByText = new Map<string, Function>();

function rememberFunction(fn: Function): void {
  const text = functionText(fn);
  if (!functionsByText.has(text)) functionsByText.set(text, fn);
}

/** The first frame of `stack` (below its own) in a file `skipFile` does not skip: file, line and column (1-based). */
export function callerFrame(stack: string | undefined, skipFile: (file: string) => boolean): SourceOrigin | undefined {
  for (const line of (stack ?? "").split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^()\s]+?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    const file = m[1]!.startsWith("file://") ? fileURLToPath(m[1]!) : m[1]!;
    if (!skipFile(file)) return { file, line: Number(m[2]), column: Number(m[3]) };
  }
  return undefined;
}

/**
 * Remembers where `cuda.jit(fn)` was called, from a stack captured at that moment, and the function
 * (and the plain functions passed in `env`) for placing error positions; returns that place.
 */
export function rememberOrigin(fn: Function, stack: string | undefined, skipFile: (file: string) => boolean, env?: Readonly<Record<string, unknown>>): SourceOrigin | undefined {
  rememberFunction(fn);
  for (const v of Object.values(env ?? {})) if (typeof v === "function") rememberFunction(v);
  const origin = recordedOrigin(fn) ?? callerFrame(stack, (file) => skipFile(file) || file.startsWith("node:"));
  if (!origin) return undefined;
  origins.set(fn, origin);
  for (const v of Object.values(env ?? {})) if (typeof v === "function" && !origins.has(v)) origins.set(v, origin);
  return origin;
}

/** Where a build plugin recorded that the function is (its own place, not that of the cuda.jit call). */
function recordedOrigin(fn: Function): SourceOrigin | undefined {
  const r = recordedSource(fn);
  return r && { file: r.file, line: r.line, column: r.column + 1 };
}

/** `file:line` of a place in the user's code, the file relative to the working directory when inside it. */
export const placeOf = (origin: SourceOrigin): string => `${displayName(origin.file)}:${origin.line}`;

/** Before a call of `callee` (the stack's column points at its name), the name its result is bound to. */
const BOUND = [
  // `const add = cuda.jit(`, `let add: K = …`, `add = …`, `kernels.add = …`
  /(?:^|[^\w$])([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=\s*(?:[A-Za-z_$][\w$]*\s*\.\s*)*$/,
  // `{ add: cuda.jit(`, an object literal's property (on its own line, or after `{` or `,`)
  /(?:^|[{,])\s*([A-Za-z_$][\w$]*)\s*:\s*(?:[A-Za-z_$][\w$]*\s*\.\s*)*$/,
];

/**
 * The name the result of the call of `callee` at `origin` is bound to, when the call's line shows it
 * (`const add = cuda.jit(…)` gives "add"); undefined when the line is not the user's readable code,
 * the call there is not of `callee`, or its result is not assigned.
 */
export function boundName(origin: SourceOrigin, callee: string): string | undefined {
  const line = readText(origin.file)?.line(origin.line - 1);
  const at = origin.column - 1;
  if (line === undefined || line.length > MAX_READABLE_LINE || !line.startsWith(callee, at) || /[\w$]/.test(line.charAt(at + callee.length))) return undefined;
  const before = line.slice(0, at);
  for (const pattern of BOUND) {
    const m = pattern.exec(before);
    if (m) return m[1];
  }
  return undefined;
}

/** Library device functions (no cuda.jit call site): remembered for placing error positions. */
export function rememberFunctions(fns: Iterable<Function>): void {
  for (const fn of fns) rememberFunction(fn);
}

/** Where `cuda.jit(fn)` was called, when known. */
export function originOf(fn: Function): SourceOrigin | undefined {
  return origins.get(fn);
}

// ---------------------------------------------------------------------------
// where a function's text is in the script that defined it

/** The script a function was defined in, and the offset of the function's text in it. */
interface ScriptPlace { readonly url: string; readonly script: Text; readonly start: number }

/** A text with its line starts, for (line, column) ↔ offset. */
class Text {
  private readonly starts = [0];
  constructor(readonly text: string) {
    for (let p = text.indexOf("\n"); p >= 0; p = text.indexOf("\n", p + 1)) this.starts.push(p + 1);
  }
  offset(line0: number, column0: number): number {
    return (this.starts[line0] ?? this.text.length) + column0;
  }
  /** 0-based line and column of an offset */
  position(offset: number): { line0: number; column0: number } {
    let lo = 0, hi = this.starts.length - 1; // the last line starting at or before `offset`
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid; else hi = mid - 1;
    }
    return { line0: lo, column0: offset - this.starts[lo]! };
  }
  /** a line's text without its end of line (undefined: no such line) */
  line(line0: number): string | undefined {
    const start = this.starts[line0];
    if (start === undefined) return undefined;
    const end = this.text.indexOf("\n", start);
    return this.text.slice(start, end < 0 ? undefined : end).replace(/\r$/, "");
  }
}

let inspector: Session | null | undefined;

/** An inspector command's result: the in-process session answers synchronously. */
function post(method: string, params?: object): any {
  let result: unknown, error: Error | null = null;
  inspector!.post(method, params, (e, r) => { error = e; result = r; });
  if (error) throw error;
  return result;
}

/** V8's [[FunctionLocation]] of `fn`: its script and the 0-based position of its parameter list. */
function functionLocation(fn: Function): { scriptId: string; lineNumber: number; columnNumber: number } | undefined {
  const key = "__numbatsFunctionLocation";
  (globalThis as Record<string, unknown>)[key] = fn;
  try {
    const { result } = post("Runtime.evaluate", { expression: `globalThis.${key}`, objectGroup: key });
    const { internalProperties } = post("Runtime.getProperties", { objectId: result.objectId, ownProperties: true });
    return internalProperties?.find((p: { name: string }) => p.name === "[[FunctionLocation]]")?.value?.value;
  } finally {
    post("Runtime.releaseObjectGroup", { objectGroup: key });
    delete (globalThis as Record<string, unknown>)[key];
  }
}

/** Scripts by id, read once: their URL and text (only the debugger domain tells them). */
const scripts = new Map<string, { readonly url: string; readonly script: Text } | null>();

function scriptById(scriptId: string): { readonly url: string; readonly script: Text } | null {
  let known = scripts.get(scriptId);
  if (known !== undefined) return known;
  let url = "";
  const onScript = (m: { params: { scriptId: string; url: string } }) => { if (m.params.scriptId === scriptId) url = m.params.url; };
  inspector!.on("Debugger.scriptParsed", onScript);
  try {
    post("Debugger.enable"); // reports every script, with its URL
    known = url ? { url, script: new Text(post("Debugger.getScriptSource", { scriptId }).scriptSource) } : null; // no URL: eval
  } finally {
    post("Debugger.disable");
    inspector!.off("Debugger.scriptParsed", onScript);
  }
  scripts.set(scriptId, known);
  return known;
}

/** Where V8 defined `fn`: its script, and where the function's text starts in it (at or before its parameters). */
function scriptPlace(fn: Function, text: string): ScriptPlace | undefined {
  try {
    if (inspector === undefined) {
      // loaded on first use: a Node.js built without the inspector has no such module
      const { Session } = process.getBuiltinModule("node:inspector");
      inspector = new Session();
      inspector.connect();
    }
  } catch {
    inspector = null; // a Node.js built without the inspector
  }
  if (!inspector) return undefined;
  try {
    const loc = functionLocation(fn);
    const found = loc && scriptById(loc.scriptId);
    if (!loc || !found) return undefined;
    const params = found.script.offset(loc.lineNumber, loc.columnNumber);
    const start = found.script.text.lastIndexOf(text, params);
    return start >= 0 && start + text.length > params ? { ...found, start } : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// the script's imports of numbats

/** `import { cuda as cuda2, float32 } from "numbats"`: the braces' contents. */
const IMPORTS_FROM_NUMBATS = /\bimport\s*\{([^}]*)\}\s*from\s*(["'])numbats\2/g;

/** Per script text: the names its ES import declarations bind from "numbats", local name → exported name. */
const importsByScript = new WeakMap<Text, ReadonlyMap<string, string>>();

/**
 * The names the script that defined `fn` imports from "numbats" under another name, local → exported.
 * A bundler that leaves numbats external and merges modules that import the same name renames all but
 * one (esbuild: `import { cuda as cuda2 } from "numbats"`); the declaration says what the name is.
 */
export function numbatsImportsOf(fn: Function): ReadonlyMap<string, string> {
  let imports = importsByFunction.get(fn);
  if (!imports) importsByFunction.set(fn, (imports = scriptImports(fn)));
  return imports;
}

/** Per function, its script's imports from numbats (finding a function's script takes a few inspector calls). */
const importsByFunction = new WeakMap<Function, ReadonlyMap<string, string>>();

function scriptImports(fn: Function): ReadonlyMap<string, string> {
  const at = scriptPlace(fn, functionText(fn));
  if (!at) return new Map();
  let imports = importsByScript.get(at.script);
  if (!imports) {
    const found = new Map<string, string>();
    for (const [, specifiers] of at.script.text.matchAll(IMPORTS_FROM_NUMBATS)) {
      for (const s of specifiers!.split(",")) {
        const m = /^\s*([A-Za-z_$][\w$]*)\s+as\s+([A-Za-z_$][\w$]*)\s*$/.exec(s);
        if (m && m[1] !== "type") found.set(m[2]!, m[1]!);
      }
    }
    importsByScript.set(at.script, (imports = found));
  }
  return imports;
}

// ---------------------------------------------------------------------------
// from the script to the user's file

/** A file's text read once per process (null: unreadable). */
const files = new Map<string, Text | null>();

function readText(path: string): Text | null {
  let t = files.get(path);
  if (t === undefined) {
    try {
      t = new Text(readFileSync(path, "utf8"));
    } catch {
      t = null;
    }
    files.set(path, t);
  }
  return t;
}

const pathOf = (url: string) => (url.startsWith("file:") ? fileURLToPath(url) : url);

/** The name shown for a file: relative to the working directory when inside it. */
function displayName(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

/**
 * The script's source map: the one Node.js holds (tsx, `--enable-source-maps`; ES modules are keyed
 * by URL, CommonJS by path), else the one its `sourceMappingURL` comment names (tsc or a bundler's
 * output run without `--enable-source-maps`).
 */
function sourceMapOf({ url, script }: ScriptPlace): SourceMap | undefined {
  try {
    return findSourceMap(url) ?? (url.startsWith("file:") ? findSourceMap(pathOf(url)) : undefined) ?? namedMap(url, script.text);
  } catch {
    return undefined; // an unreadable or malformed map
  }
}

/** The comment by which a tool's output names its source map (a file beside it, or inline). */
const NAMES_A_MAP = /^\/\/[#@] sourceMappingURL=(\S+)\s*$/gm;

function namedMap(scriptUrl: string, script: string): SourceMap | undefined {
  const named = [...script.matchAll(NAMES_A_MAP)].pop()?.[1];
  const mapUrl = named && new URL(named, scriptUrl).href;
  if (!mapUrl || !/^(file|data):/.test(mapUrl)) return undefined;
  const json = mapUrl.startsWith("data:")
    ? Buffer.from(mapUrl.slice(mapUrl.indexOf(",") + 1), /;base64,/.test(mapUrl) ? "base64" : "utf8").toString()
    : readFileSync(fileURLToPath(mapUrl), "utf8");
  const payload = JSON.parse(json) as SourceMapPayload;
  // as Node.js does when it loads a map: sources are relative to the map's file (an inline map's: the script's)
  const base = mapUrl.startsWith("data:") ? scriptUrl : mapUrl;
  const sources = payload.sources.map((s) => new URL((payload.sourceRoot ?? "") + s, base).href);
  return new SourceMap({ ...payload, sources });
}

/** Original sources' texts by URL, read once: the file, else the map's `sourcesContent`. */
const originals = new Map<string, Text | null>();

function originalText(map: SourceMap, source: string): Text | null {
  let t = originals.get(source);
  if (t === undefined) {
    t = source.startsWith("file:") || isAbsolute(source) ? readText(pathOf(source)) : null;
    if (!t) {
      const { sources = [], sourcesContent = [] } = map.payload;
      const content = sourcesContent[sources.findIndex((s) => s && source.endsWith(s.replace(/^(\.\.?\/)+/, "")))];
      t = typeof content === "string" ? new Text(content) : null;
    }
    originals.set(source, t);
  }
  return t;
}

/** Maps an offset in the function's text to the user's file (undefined: not known there). */
type Placement = (offset: number) => SourceLocation | undefined;

function mapped(map: SourceMap, { script, start }: ScriptPlace): Placement {
  return (offset) => {
    const { line0, column0 } = script.position(start + offset);
    const entry = map.findEntry(line0, column0) as { originalSource?: string; originalLine?: number; originalColumn?: number };
    if (!entry.originalSource || entry.originalLine === undefined) return undefined;
    const lineText = originalText(map, entry.originalSource)?.line(entry.originalLine);
    if (lineText === undefined) return undefined;
    return { file: displayName(pathOf(entry.originalSource)), line: entry.originalLine + 1, column: entry.originalColumn ?? 0, lineText };
  };
}

/** Lines longer than this are machine-written (minified): never quoted as the user's code. */
const MAX_READABLE_LINE = 500;

/** The script's own file, when that is what ran (it reads the same) and the function's lines are readable (not minified). */
function inScriptFile({ url, script, start }: ScriptPlace, length: number): Placement | undefined {
  const path = pathOf(url);
  if (!isAbsolute(path) || readText(path)?.text !== script.text) return undefined;
  const first = script.position(start).line0, last = script.position(start + length).line0;
  for (let l = first; l <= last; l++) if (script.line(l)!.length > MAX_READABLE_LINE) return undefined;
  const file = displayName(path);
  return (offset) => {
    const { line0, column0 } = script.position(start + offset);
    return { file, line: line0 + 1, column: column0, lineText: script.line(line0)! };
  };
}

/**
 * A recorded function's text is where the record says in its file, position for position (a
 * TypeScript file's types are spaces in it). The quoted line is the file's when the file is readable
 * here, else the record's own line, indented to its column.
 */
function inRecordedFile(r: RecordedSource): Placement {
  const own = new Text(r.source);
  const file = readText(r.file);
  return (offset) => {
    const { line0, column0 } = own.position(offset);
    const line = r.line + line0, column = line0 === 0 ? r.column + column0 : column0;
    const recordedLine = (line0 === 0 ? " ".repeat(r.column) : "") + own.line(line0)!;
    const fileLine = file?.line(line - 1);
    // the file may have changed since the build: quote it only where it still reads as the record does
    const lineText = fileLine !== undefined && sameCode(fileLine, recordedLine) ? fileLine : recordedLine;
    return { file: displayName(r.file), line, column, lineText };
  };
}

/** Whether a file's line is the record's line, but for the types the record has as spaces. */
function sameCode(fileLine: string, recordedLine: string): boolean {
  if (fileLine.length !== recordedLine.length) return false;
  for (let i = 0; i < fileLine.length; i++) if (recordedLine[i] !== " " && recordedLine[i] !== fileLine[i]) return false;
  return true;
}

/** Where a function's text is, worked out at its first error or `.loc` (at null: only its own text is known). */
interface TextPlacement { readonly own: Text; readonly at: Placement | null }

/** per function text, for texts known only as text (the first function with that text decides) */
const placementsByText = new Map<string, TextPlacement>();
/** per function, for texts whose function is known: functions with the same text on different lines each have their own */
const placementsByFunction = new WeakMap<Function, TextPlacement>();

function place(fn: Function | undefined, text: string): TextPlacement {
  const recorded = fn && recordedSource(fn);
  if (recorded?.source === text) return { own: new Text(text), at: inRecordedFile(recorded) };
  const at = fn && scriptPlace(fn, text);
  const map = at && sourceMapOf(at);
  return { own: new Text(text), at: (at && (map ? mapped(map, at) : inScriptFile(at, text.length))) ?? null };
}

/** The placement of `text`: `origin`'s own when `text` is its text, else that of the first function seen with the text. */
function placementOf(text: string, origin: Function | undefined): TextPlacement {
  if (origin && functionText(origin) === text) {
    let placement = placementsByFunction.get(origin);
    if (!placement) placementsByFunction.set(origin, (placement = place(origin, text)));
    return placement;
  }
  let placement = placementsByText.get(text);
  if (!placement) placementsByText.set(text, (placement = place(functionsByText.get(text), text)));
  return placement;
}

/** The file position of (line, column) of a function's text, when the function's file is known. */
function locate(text: string, line: number, column: number, origin?: Function): SourceLocation | undefined {
  const placement = placementOf(text, origin);
  return placement.at?.(placement.own.offset(line - 1, column));
}

setSourceLocator(locate);

