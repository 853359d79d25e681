// Where a kernel's text came from: the file it was written in, so that
//  - literals keep the spelling the user wrote: the kernel language types `1.0` as a float and `1` as
//    an int, but esbuild (and so tsx) prints `1.0` as `1` and `1000` as `1e3`;
//  - errors quote the user's own line: tsx prints a function with its whitespace minified, all on
//    one line, types stripped.
// The file is the one that called `cuda.jit` (its position comes from the source-mapped stack). When
// the function's text is not in that file verbatim, literals are recovered by matching the sequence of
// numeric literals against the file's numeric tokens, and error positions by aligning the two token
// streams.

import { readFileSync } from "node:fs";
import { relative, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import { setSourceLocator, type SourceLocation } from "../errors.js";
import { childNodes, type Node } from "./parse.js";

export interface SourceOrigin {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

const origins = new WeakMap<Function, SourceOrigin>();

/**
 * Remembers where `cuda.jit(fn)` was called, from a stack captured at that moment. Plain functions
 * passed in `env` are taken to come from the same file, unless they were placed already.
 */
export function rememberOrigin(fn: Function, stack: string | undefined, skipFile: (file: string) => boolean, env?: Readonly<Record<string, unknown>>): void {
  for (const line of (stack ?? "").split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^()\s]+?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    const file = m[1]!.startsWith("file://") ? fileURLToPath(m[1]!) : m[1]!;
    if (skipFile(file) || file.startsWith("node:")) continue;
    const origin = { file, line: Number(m[2]), column: Number(m[3]) };
    origins.set(fn, origin);
    for (const v of Object.values(env ?? {})) if (typeof v === "function" && !origins.has(v)) origins.set(v, origin);
    return;
  }
}

/**
 * Records that `fns` were written in `file` (for library code compiled from
 * our own sources, which has no cuda.jit call site); each is looked up by its
 * `function NAME` declaration.
 */
export function rememberSourceFile(fns: Iterable<Function>, file: string): void {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return;
  }
  for (const fn of fns) {
    const at = text.indexOf(`function ${fn.name}(`);
    if (at >= 0) origins.set(fn, { file, line: text.slice(0, at).split("\n").length, column: 1 });
  }
}

// ---------------------------------------------------------------------------
// tokens

interface Token { readonly start: number; readonly kind: "name" | "number" | "string" | "punct"; readonly text: string }

/** `prev` is the character before the literal (whitespace skipped): it tells `o[0]` from `f(0, 3)`. */
interface NumericLiteral { start: number; value: number; float: boolean; prev: string }

/** JS/TS tokens: names, numbers, strings (by content), single punctuation characters; comments skipped. */
const TOKEN = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|"((?:\\.|[^"\\\n])*)"|'((?:\\.|[^'\\\n])*)'|`((?:\\.|[^`\\])*)`|([A-Za-z_$][\w$]*)|(0[xXoObB][\da-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)(n?)|(\S)/g;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let m; (m = TOKEN.exec(text)); ) {
    const str = m[1] ?? m[2] ?? m[3];
    if (str !== undefined) out.push({ start: m.index, kind: "string", text: str });
    else if (m[4] !== undefined) out.push({ start: m.index, kind: "name", text: m[4] });
    else if (m[5] !== undefined) out.push({ start: m.index, kind: "number", text: m[6] ? `${m[5]}n` : String(Number(m[5].replace(/_/g, ""))) });
    else if (m[7] !== undefined) out.push({ start: m.index, kind: "punct", text: m[7] });
  }
  return out;
}

function prevChar(text: string, pos: number): string {
  let i = pos - 1;
  while (i >= 0 && /\s/.test(text[i]!)) i--;
  return text[i] ?? "";
}

const isFloatSpelling = (raw: string) => !/^0[xXoObB]/.test(raw) && /[.eE]/.test(raw);

/** Numeric (non-bigint) tokens of JS/TS text, skipping strings, templates, comments and identifiers. */
function scanNumbers(text: string): NumericLiteral[] {
  const out: NumericLiteral[] = [];
  TOKEN.lastIndex = 0;
  for (let m; (m = TOKEN.exec(text)); ) {
    if (m[5] === undefined || m[6] === "n") continue;
    out.push({ start: m.index, value: Number(m[5].replace(/_/g, "")), float: isFloatSpelling(m[5]), prev: prevChar(text, m.index) });
  }
  return out;
}

/** A module's text, read once per process (its functions' text cannot change either), and its tokens when needed. */
interface SourceFile { readonly text: string; numbers?: NumericLiteral[]; tokens?: Token[]; lineStarts?: number[] }
const sourceFiles = new Map<string, SourceFile | null>();

function sourceFile(path: string): SourceFile | null {
  let file = sourceFiles.get(path);
  if (file === undefined) {
    try {
      const text = readFileSync(path, "utf8");
      file = { text };
    } catch {
      file = null;
    }
    sourceFiles.set(path, file);
  }
  return file;
}

function offsetOf(text: string, line: number, column: number): number {
  let pos = 0;
  for (let l = 1; l < line && pos >= 0; l++) pos = text.indexOf("\n", pos) + 1;
  return Math.max(0, pos) + column;
}

/** The candidate nearest the call site, preferring one that starts at or after it (an inline function). */
function nearest(starts: Iterable<number>, call: number): number {
  let best = -1, bestCost = Infinity;
  for (const s of starts) {
    const cost = s >= call ? s - call : 2 * (call - s) + 1;
    if (cost < bestCost) { best = s; bestCost = cost; }
  }
  return best;
}

const callOffset = (text: string, o: SourceOrigin) => offsetOf(text, o.line, o.column - 1);

// ---------------------------------------------------------------------------
// literal spelling

function numericLiterals(body: Node, source: string): NumericLiteral[] {
  const out: NumericLiteral[] = [];
  const visit = (n: Node) => {
    if (n.type === "Literal" && typeof n.value === "number") {
      out.push({ start: n.start, value: n.value, float: isFloatSpelling(n.raw), prev: prevChar(source, n.start) });
    }
    for (const [, c] of childNodes(n)) visit(c);
  };
  visit(body);
  return out.sort((a, b) => a.start - b.start);
}

/** Function texts → where they were written, for error excerpts (filled as functions are parsed). */
const textOrigins = new Map<string, SourceOrigin>();

/** Start offsets (in the function text) of literals spelled as floats. */
export function recoverLiteralSpelling(fn: Function, source: string, body: Node): Set<number> {
  const lits = numericLiterals(body, source);
  const result = new Set(lits.filter((l) => l.float).map((l) => l.start));
  const origin = origins.get(fn);
  if (!origin) return result;
  if (!textOrigins.has(source)) textOrigins.set(source, origin);
  // esbuild prints `1.0` as `1` and `1000` as `1e3`: any integral value may be misspelled
  if (!lits.some((l) => Number.isInteger(l.value))) return result;
  const file = sourceFile(origin.file);
  if (!file) return result;
  if (file.text.includes(source)) return result; // the user's own spelling
  const offset = findSequence(file, source, lits, callOffset(file.text, origin));
  if (offset < 0) return result;
  return new Set(lits.filter((_, i) => file.numbers![offset + i]!.float).map((l) => l.start));
}

/**
 * The run of the file's numeric tokens equal to the function's literals (value and preceding
 * character) whose surroundings hold the function's names in order, nearest the call site.
 */
function findSequence(file: SourceFile, source: string, lits: readonly NumericLiteral[], call: number): number {
  const tokens = (file.numbers ??= scanNumbers(file.text));
  const names = tokenize(source).filter((t) => t.kind === "name").map((t) => t.text);
  const runs = new Map<number, number>(); // start offset → token index
  for (let i = 0; i + lits.length <= tokens.length; i++) {
    if (!lits.every((l, j) => Object.is(tokens[i + j]!.value, l.value) && tokens[i + j]!.prev === l.prev)) continue;
    // the function's text around its literals, with room for the types tsx removed
    const from = file.text.lastIndexOf("\n", tokens[i]!.start - 2 * lits[0]!.start - 64) + 1;
    const to = tokens[i + lits.length - 1]!.start + 2 * (source.length - lits[lits.length - 1]!.start) + 64;
    if (namesInOrder(names, file.text.slice(from, to))) runs.set(tokens[i]!.start, i);
  }
  return runs.get(nearest(runs.keys(), call)) ?? -1;
}

/** esbuild renames a name that shadows another by appending a number (`o` → `o2`). */
const sameName = (printed: string, written: string) => printed === written || printed.replace(/\d+$/, "") === written;

/** Whether nearly all of `names` occur in `text` in this order. */
function namesInOrder(names: readonly string[], text: string): boolean {
  const there = tokenize(text).filter((t) => t.kind === "name").map((t) => t.text);
  let k = 0, found = 0;
  for (const name of names) {
    let at = k;
    while (at < there.length && !sameName(name, there[at]!)) at++;
    if (at < there.length) { found++; k = at + 1; }
  }
  return found >= 0.9 * names.length;
}

// ---------------------------------------------------------------------------
// error positions in the original file

/**
 * Aligns the function's tokens with the file's: the best-scoring way to read the function's tokens in
 * order within the file (a match +2, a function token with no partner −1, file tokens skipped −1
 * inside the match, free before and after it: TypeScript's annotations are what tsx removed), nearest
 * the call site among equals. Only for error messages, so an O(function × file) table is fine.
 */
function align(source: string, file: SourceFile, call: number): { tokens: Token[]; at: Int32Array } | null {
  const r = tokenize(source);
  const o = (file.tokens ??= tokenize(file.text));
  const n = r.length, m = o.length;
  if (n === 0 || m === 0 || n * m > 50_000_000) return null;
  const same = (a: Token, b: Token) => a.kind === b.kind && (a.kind === "name" ? sameName(a.text, b.text) : a.text === b.text);
  // score rows and a direction per cell: 0 diagonal, 1 up (skip a function token), 2 left (skip a file token)
  const dir = new Uint8Array((n + 1) * (m + 1));
  let prev = new Int32Array(m + 1), cur = new Int32Array(m + 1);
  for (let i = 1; i <= n; i++) {
    cur[0] = prev[0]! - 1;
    dir[i * (m + 1)] = 1;
    for (let j = 1; j <= m; j++) {
      const diag = prev[j - 1]! + (same(r[i - 1]!, o[j - 1]!) ? 2 : -1);
      const up = prev[j]! - 1, left = cur[j - 1]! - 1;
      let best = diag, d = 0;
      if (up > best) { best = up; d = 1; }
      if (left > best) { best = left; d = 2; }
      cur[j] = best;
      dir[i * (m + 1) + j] = d;
    }
    [prev, cur] = [cur, prev];
  }
  // the function's last token may end anywhere: the best end, nearest the call site among equals
  let top = -Infinity;
  for (let j = 1; j <= m; j++) top = Math.max(top, prev[j]!);
  const ends: number[] = [];
  for (let j = 1; j <= m; j++) if (prev[j] === top) ends.push(j);
  const byStart = new Map<number, number>();
  for (const j of ends) byStart.set(o[j - 1]!.start, j);
  let j = byStart.get(nearest(byStart.keys(), call))!;
  const at = new Int32Array(n).fill(-1);
  let matched = 0;
  for (let i = n; i > 0 && j > 0; ) {
    const d = dir[i * (m + 1) + j]!;
    if (d === 0) {
      if (same(r[i - 1]!, o[j - 1]!)) { at[i - 1] = o[j - 1]!.start; matched++; }
      i--; j--;
    } else if (d === 1) i--;
    else j--;
  }
  // a poor match is a different function (one defined in another module): no mapping then
  return matched >= 0.6 * n ? { tokens: r, at } : null;
}

/** Where a function's text is in its file: offset in the text → offset in the file (−1: unknown). */
interface Placement { readonly path: string; readonly file: SourceFile; readonly at: (offset: number) => number }

/** Per function text, worked out at its first error or `.loc` (null: not found in its file). */
const placements = new Map<string, Placement | null>();

function place(source: string): Placement | null {
  const origin = textOrigins.get(source);
  const file = origin && sourceFile(origin.file);
  if (!origin || !file) return null;
  const call = callOffset(file.text, origin);
  const verbatim: number[] = [];
  for (let p = file.text.indexOf(source); p >= 0; p = file.text.indexOf(source, p + 1)) verbatim.push(p);
  if (verbatim.length) {
    const base = nearest(verbatim, call);
    return { path: origin.file, file, at: (offset) => base + offset };
  }
  const a = align(source, file, call);
  if (!a) return null;
  // the token at the offset, else the nearest matched token after it, else before it
  const at = (offset: number): number => {
    let k = a.tokens.findIndex((t) => t.start >= offset);
    if (k < 0) k = a.tokens.length - 1;
    for (let d = 0; k + d < a.tokens.length || k - d >= 0; d++) {
      if (k + d < a.tokens.length && a.at[k + d]! >= 0) return a.at[k + d]!;
      if (d > 0 && k - d >= 0 && a.at[k - d]! >= 0) return a.at[k - d]!;
    }
    return -1;
  };
  return { path: origin.file, file, at };
}

/** The file position of (line, column) of a function's text, when the function's file is known. */
function locate(source: string, line: number, column: number): SourceLocation | undefined {
  let placement = placements.get(source);
  if (placement === undefined) placements.set(source, (placement = place(source)));
  const at = placement?.at(offsetOf(source, line, column)) ?? -1;
  if (!placement || at < 0) return undefined;
  const { text } = placement.file;
  const starts = (placement.file.lineStarts ??= lineStarts(text));
  let lo = 0, hi = starts.length - 1; // the last line starting at or before `at`
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid; else hi = mid - 1;
  }
  const lineEnd = text.indexOf("\n", at);
  const cwdRelative = relative(process.cwd(), placement.path);
  return {
    file: cwdRelative.startsWith("..") || isAbsolute(cwdRelative) ? placement.path : cwdRelative,
    line: lo + 1,
    column: at - starts[lo]!,
    lineText: text.slice(starts[lo], lineEnd < 0 ? undefined : lineEnd),
  };
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let p = text.indexOf("\n"); p >= 0; p = text.indexOf("\n", p + 1)) starts.push(p + 1);
  return starts;
}

setSourceLocator(locate);

/** Where `cuda.jit(fn)` was called for `fn` (the file is the function's module), if known. */
export function originOf(fn: Function): SourceOrigin | undefined {
  return origins.get(fn);
}
