// Which numeric literals were written as floats (`1.0`, `1e3`).
//
// The kernel language types `1.0` as a float and `1` as an int, but
// esbuild (and so tsx) prints `1.0` as `1`. When the function's text is not
// what the user wrote, we look for the original spelling in the file that
// called `cuda.jit` (its position comes from the source-mapped stack), by
// matching the sequence of numeric literals of the function against the
// file's numeric tokens.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { childNodes, type Node } from "./parse.js";

export interface SourceOrigin {
  readonly file: string;
  readonly line: number;
}

const origins = new WeakMap<Function, SourceOrigin>();

/** Remembers where `cuda.jit(fn)` was called, from a stack captured at that moment. */
export function rememberOrigin(fn: Function, stack: string | undefined, skipFile: (file: string) => boolean): void {
  for (const line of (stack ?? "").split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^()\s]+?):(\d+):\d+\)?\s*$/.exec(line);
    if (!m) continue;
    const file = m[1]!.startsWith("file://") ? fileURLToPath(m[1]!) : m[1]!;
    if (skipFile(file) || file.startsWith("node:")) continue;
    origins.set(fn, { file, line: Number(m[2]) });
    return;
  }
}

/** `prev` is the character before the literal (whitespace skipped): it tells `o[0]` from `f(0, 3)`. */
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
    if (at >= 0) origins.set(fn, { file, line: text.slice(0, at).split("\n").length });
  }
}

interface NumericLiteral { start: number; value: number; float: boolean; prev: string }

function prevChar(text: string, pos: number): string {
  let i = pos - 1;
  while (i >= 0 && /\s/.test(text[i]!)) i--;
  return text[i] ?? "";
}

const isFloatSpelling = (raw: string) => !/^0[xXoObB]/.test(raw) && /[.eE]/.test(raw);

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

/** Start offsets (in the function text) of literals spelled as floats. */
export function recoverLiteralSpelling(fn: Function, source: string, body: Node): Set<number> {
  const lits = numericLiterals(body, source);
  const result = new Set(lits.filter((l) => l.float).map((l) => l.start));
  // esbuild prints `1.0` as `1` and `1000` as `1e3`: any integral value may be misspelled
  const origin = origins.get(fn);
  if (!lits.some((l) => Number.isInteger(l.value)) || !origin) return result;
  const file = scannedFile(origin.file);
  if (!file) return result;
  const { text, tokens } = file;
  if (text.includes(source)) return result; // the user's own spelling
  const offset = findSequence(tokens, lits, lineStart(text, origin.line));
  if (offset < 0) return result;
  return new Set(lits.filter((_, i) => tokens[offset + i]!.float).map((l) => l.start));
}

/** A module's text and numeric tokens, read once per process (its functions' text cannot change either). */
const scannedFiles = new Map<string, { text: string; tokens: NumericLiteral[] } | null>();

function scannedFile(path: string): { text: string; tokens: NumericLiteral[] } | null {
  let file = scannedFiles.get(path);
  if (file === undefined) {
    try {
      const text = readFileSync(path, "utf8");
      file = { text, tokens: scanNumbers(text) };
    } catch {
      file = null;
    }
    scannedFiles.set(path, file);
  }
  return file;
}

function lineStart(text: string, line: number): number {
  let pos = 0;
  for (let l = 1; l < line && pos >= 0; l++) pos = text.indexOf("\n", pos) + 1;
  return Math.max(0, pos);
}

/** The run of file tokens equal to the literals (value and preceding character), preferring the one nearest the call site. */
function findSequence(tokens: readonly NumericLiteral[], lits: readonly NumericLiteral[], near: number): number {
  let best = -1;
  for (let i = 0; i + lits.length <= tokens.length; i++) {
    if (!lits.every((l, j) => Object.is(tokens[i + j]!.value, l.value) && tokens[i + j]!.prev === l.prev)) continue;
    if (best < 0 || Math.abs(tokens[i]!.start - near) < Math.abs(tokens[best]!.start - near)) best = i;
  }
  return best;
}

/** Numeric tokens of JS/TS text, skipping strings, templates, comments and identifiers. */
function scanNumbers(text: string): NumericLiteral[] {
  const out: NumericLiteral[] = [];
  const re = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`|[A-Za-z_$][\w$]*|(0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)(n?)/g;
  for (let m; (m = re.exec(text)); ) {
    if (m[1] === undefined || m[2] === "n") continue;
    out.push({ start: m.index, value: Number(m[1].replace(/_/g, "")), float: isFloatSpelling(m[1]), prev: prevChar(text, m.index) });
  }
  return out;
}
