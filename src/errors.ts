// The typed errors of numbats. Every failure a user can cause is one of these.

/** One problem in kernel source, with its position. */
export interface SourceProblem {
  /** what is wrong */
  readonly message: string;
  /** the line in the function's text (1-based) */
  readonly line: number;
  /** the column in the function's text (0-based) */
  readonly column: number;
}

/** Where a position of a kernel's text is in the file the user wrote (column 0-based). */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly lineText: string;
}

/**
 * `origin`: the function whose text `source` is, when known: two functions with the same text (two
 * `cuda.jit((x) => { x[0] = 1; })` on different lines) are told apart by it.
 */
type SourceLocator = (source: string, line: number, column: number, origin?: Function) => SourceLocation | undefined;
let locateInFile: SourceLocator = () => undefined;

/** Installed by the front end, which knows where each kernel was written. */
export function setSourceLocator(locator: SourceLocator): void {
  locateInFile = locator;
}

/** Where (line, column) of a kernel's text is in the user's file, when known. */
export const locateSource: SourceLocator = (source, line, column, origin) => locateInFile(source, line, column, origin);

/** Quoted lines longer than this show a window around the caret. */
const QUOTE_WIDTH = 120;

/** A source line with a caret under `column` (a long line shows the part around the caret). */
function caretLine(lineNumber: number, text: string, column: number): string {
  let from = 0, shown = text;
  if (text.length > QUOTE_WIDTH) {
    from = Math.max(0, Math.min(column - QUOTE_WIDTH / 2, text.length - QUOTE_WIDTH));
    shown = `${from > 0 ? "…" : ""}${text.slice(from, from + QUOTE_WIDTH)}${from + QUOTE_WIDTH < text.length ? "…" : ""}`;
  }
  const gutter = `${lineNumber} | `;
  return `${gutter}${shown}\n${" ".repeat(gutter.length + column - from + (from > 0 ? 1 : 0))}^`;
}

/** The source line of `problem` with a caret under its column. */
function excerpt(source: string, line: number, column: number): string {
  return caretLine(line, source.split("\n")[line - 1] ?? "", column);
}

/**
 * Defines data an error carries as non-enumerable properties: Node.js prints an error's enumerable
 * own properties after its stack, which would show every problem twice.
 */
export function defineHidden(target: object, values: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(values)) Object.defineProperty(target, key, { value, enumerable: false, configurable: true });
}

/** Sets a class's `name` on its prototype (not an own, printed property; survives minified class names). */
function named(cls: { prototype: Error }, name: string): void {
  Object.defineProperty(cls.prototype, "name", { value: name, enumerable: false, configurable: true, writable: true });
}

/** A problem of a {@link SourceError}: its place in the function's text, and in the user's file when known. */
export interface LocatedProblem extends SourceProblem {
  readonly location?: SourceLocation;
}

/** Where a problem is shown: the user's file when known, else the function's own text. */
function shownAt(source: string, p: SourceProblem, origin: Function | undefined): LocatedProblem {
  const location = source && p.line >= 1 ? locateSource(source, p.line, p.column, origin) : undefined;
  return location ? { ...p, location } : { ...p };
}

/**
 * Where (line, column) of a function's text is, in words (`at FILE line L, column C`, or `at line L,
 * column C` of the function when its file is not known), and that line quoted with a caret.
 */
export function sourcePosition(source: string, line: number, column: number, at = locateSource(source, line, column)): { where: string; quote: string } {
  return at
    ? { where: `at ${at.file} line ${at.line}, column ${at.column + 1}`, quote: caretLine(at.line, at.lineText, at.column) }
    : { where: `at line ${line}, column ${column + 1}`, quote: excerpt(source, line, column) };
}

function formatProblem(fnName: string, source: string, p: LocatedProblem): string {
  if (!source || p.line < 1) return `${p.message} (in '${fnName}')`;
  const { where, quote } = sourcePosition(source, p.line, p.column, p.location);
  return `${p.message} (in '${fnName}' ${where})\n${quote}`;
}

function formatProblems(fnName: string, source: string, problems: readonly LocatedProblem[]): string {
  const head = problems.length === 1 ? "" : `${problems.length} problems in kernel '${fnName}':\n`;
  return head + problems.map((p) => formatProblem(fnName, source, p)).join("\n\n");
}

/**
 * An error located in kernel source: every problem found, and where the first one is.
 *
 * `file`, `line`, `column` and `sourceLine` are where the message points: the file the user wrote
 * when it is known (`file` set; under tsx or with source maps, the original file), else the
 * function's own text (`file` undefined, `line` counted from the function's first line). `line` is
 * 1-based; `column` is 0-based, so `sourceLine.slice(column)` starts at the caret (the message prints
 * it 1-based, as editors do). Each of `problems` keeps its place in the function's text (`line`,
 * `column`) and, when known, in the file (`location`). None of these is enumerable, so Node.js prints
 * the message once.
 */
abstract class SourceError extends Error {
  /** every problem the compile found, in source order, each with its place in the file when known */
  declare readonly problems: readonly LocatedProblem[];
  /** the file the message points into, when known (else the position is in the function's own text) */
  declare readonly file: string | undefined;
  /** the line the message points at (1-based) */
  declare readonly line: number;
  /** the column the message points at (0-based) */
  declare readonly column: number;
  /** the text of that line */
  declare readonly sourceLine: string;
  /** `origin`: the function whose text `source` is, when known (it places the problems in its file) */
  constructor(fnName: string, source: string, problems: readonly SourceProblem[], origin?: Function) {
    const located = problems.map((p) => shownAt(source, p, origin));
    super(formatProblems(fnName, source, located));
    const first = located[0];
    const at = first?.location;
    defineHidden(this, {
      problems: located,
      file: at?.file,
      line: at?.line ?? first?.line ?? 0,
      column: at?.column ?? first?.column ?? 0,
      sourceLine: at?.lineText ?? source.split("\n")[(first?.line ?? 0) - 1] ?? "",
    });
  }
}

/** Unsupported syntax or an unknown name; lists every problem one compile found. */
export class CompileError extends SourceError {}
named(CompileError, "CompileError");

/** A well-formed kernel whose types do not fit (shows the expression and the types). */
export class TypingError extends SourceError {}
named(TypingError, "TypingError");

/**
 * A state the compiler should never reach: a bug in numbats, not in the kernel. `line` and `column`
 * (1-based line, 0-based column in the function's text) say where it was compiling, when known.
 */
export class InternalCompilerError extends Error {
  declare readonly line: number | undefined;
  declare readonly column: number | undefined;
  constructor(what: string, at?: { readonly line: number; readonly column: number }) {
    const where = at ? ` (compiling line ${at.line}, column ${at.column + 1} of the function)` : "";
    super(`numbats internal compiler error: ${what}${where}; please report it as a numbats bug, with the kernel that caused it`);
    defineHidden(this, { line: at?.line, column: at?.column });
  }
}
named(InternalCompilerError, "InternalCompilerError");

/** A bad launch: configuration, shared memory, arguments, or a fault inside the kernel on the simulator. */
export class LaunchError extends Error {}
named(LaunchError, "LaunchError");

/** A sanitizer check (NUMBATS_SANITIZE) that a finding belongs to. */
export type SanitizerTool = "memcheck" | "racecheck" | "initcheck" | "synccheck";

/** One problem the sanitizer found in a launch. */
export interface SanitizerFinding {
  readonly tool: SanitizerTool;
  /**
   * racecheck: "read-after-write", "write-after-read" or "write-after-write" (the second access named last);
   * initcheck: "uninitialized-read"; synccheck: "divergent-barrier", "barrier-after-exit", "warp-mask-exited";
   * memcheck: "out-of-bounds", "use-after-free"
   */
  readonly kind: string;
  /** the array accessed (the kernel's name for it), when the finding is about an element */
  readonly array?: string;
  /** the element's index, one entry per dimension */
  readonly index?: readonly number[];
  /** the threads involved (threadIdx as [x, y, z]), in the order of `where` */
  readonly threads: readonly (readonly [number, number, number])[];
  /** their blocks (blockIdx as [x, y, z]) */
  readonly blocks: readonly (readonly [number, number, number])[];
  /** `file:line` of each access or operation in the user's source */
  readonly where: readonly string[];
}

/**
 * A sanitized launch found problems (races, reads of uninitialised memory, divergent barriers, use of
 * freed memory): `findings` lists each distinct one; the message shows the first few with their source
 * lines. The user's host arrays are left as they were before the launch.
 */
export class SanitizerError extends LaunchError {
  /** every distinct finding of the launch, in the order found */
  declare readonly findings: readonly SanitizerFinding[];
  constructor(message: string, findings: readonly SanitizerFinding[]) {
    super(message);
    defineHidden(this, { findings });
  }
}
named(SanitizerError, "SanitizerError");

/**
 * A CUDA driver call failed: names the call, the error's name and text (`call`, `code` and
 * `errorName` carry them, not enumerable). `summary`, when given, is the message instead (no usable
 * driver for NUMBATS_TARGET=cuda, where the reason already names the call).
 */
export class CudaError extends Error {
  /** the driver call that failed, e.g. "cuModuleLoadDataEx" */
  declare readonly call: string;
  /** the CUresult error code */
  declare readonly code: number;
  /** the error's name, e.g. "CUDA_ERROR_OUT_OF_MEMORY" */
  declare readonly errorName: string;
  constructor(call: string, code: number, errorName: string, errorText: string, detail = "", summary?: string) {
    super(summary ?? `${call} failed: ${errorName} (${code}): ${errorText}${detail ? `\n${detail}` : ""}`);
    defineHidden(this, { call, code, errorName });
  }
}
named(CudaError, "CudaError");

/**
 * A failed NCCL call (collectives between GPUs): the call, NCCL's result code and its text as
 * ncclGetErrorString gives it. A missing NCCL library is one too (call "dlopen(libnccl)", code -1),
 * naming every place it was looked for.
 */
export class NcclError extends Error {
  /** the NCCL call that failed, e.g. "ncclAllReduce" */
  declare readonly call: string;
  /** the ncclResult_t code (-1: the library could not be loaded) */
  declare readonly code: number;
  constructor(call: string, code: number, errorText: string, detail = "") {
    super(`${call} failed: ${errorText}${code >= 0 ? ` (ncclResult_t ${code})` : ""}${detail ? `\n${detail}` : ""}`);
    defineHidden(this, { call, code });
  }
}
named(NcclError, "NcclError");

/**
 * A kernel ran `throw new Error("…")`: raised by the host's next synchronising call after the launch
 * (`cuda.synchronize()`, `stream.synchronize()`, a copy to the host, a launch with host arrays). It
 * names the kernel, the message, the first thread that threw and its block, and, when the kernel was
 * compiled with `debug`, the throw's `file:line`. The device stays usable.
 */
export class KernelError extends LaunchError {
  /** the kernel's name */
  declare readonly kernel: string;
  /** the message the kernel threw */
  declare readonly reason: string;
  /** threadIdx of the thread that threw, as [x, y, z] */
  declare readonly thread: readonly [number, number, number];
  /** blockIdx of that thread, as [x, y, z] */
  declare readonly block: readonly [number, number, number];
  /** `file:line` of the throw (kernels compiled with `debug`), else undefined */
  declare readonly location: string | undefined;
  constructor(kernel: string, reason: string, thread: readonly [number, number, number], block: readonly [number, number, number], location?: string) {
    super(`kernel '${kernel}' threw: ${reason} (thread (${thread.join(", ")}) of block (${block.join(", ")})${location ? `, at ${location}` : ""})`);
    defineHidden(this, { kernel, reason, thread, block, location });
  }
}
named(KernelError, "KernelError");
