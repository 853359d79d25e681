// The typed errors of SPEC §8. Every failure a user can cause is one of these.

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

type SourceLocator = (source: string, line: number, column: number) => SourceLocation | undefined;
let locateInFile: SourceLocator = () => undefined;

/** Installed by the front end, which knows where each kernel was written. */
export function setSourceLocator(locator: SourceLocator): void {
  locateInFile = locator;
}

/** Where (line, column) of a kernel's text is in the user's file, when known. */
export const locateSource: SourceLocator = (source, line, column) => locateInFile(source, line, column);

/** A source line with a caret under `column`. */
function caretLine(lineNumber: number, text: string, column: number): string {
  const gutter = `${lineNumber} | `;
  return `${gutter}${text}\n${" ".repeat(gutter.length + column)}^`;
}

/** The source line of `problem` with a caret under its column. */
export function excerpt(source: string, line: number, column: number): string {
  return caretLine(line, source.split("\n")[line - 1] ?? "", column);
}

/**
 * One problem: its message, where it is, and the line with a caret. The line is quoted from the file
 * the user wrote when the front end knows it (the function's text itself may be a tool's rewrite:
 * tsx prints a function on one line without its types).
 */
function formatProblem(fnName: string, source: string, p: SourceProblem): string {
  if (!source || p.line < 1) return `${p.message} (in '${fnName}')`;
  const at = locateSource(source, p.line, p.column);
  if (at) return `${p.message} (in '${fnName}' at ${at.file} line ${at.line}, column ${at.column + 1})\n${caretLine(at.line, at.lineText, at.column)}`;
  return `${p.message} (in '${fnName}' at line ${p.line}, column ${p.column + 1})\n${excerpt(source, p.line, p.column)}`;
}

function formatProblems(fnName: string, source: string, problems: readonly SourceProblem[]): string {
  const head = problems.length === 1 ? "" : `${problems.length} problems in kernel '${fnName}':\n`;
  return head + problems.map((p) => formatProblem(fnName, source, p)).join("\n\n");
}

/** An error located in kernel source: every problem found, the first one's position. */
abstract class SourceError extends Error {
  /** every problem the compile found, in source order */
  readonly problems: readonly SourceProblem[];
  /** the first problem's line in the function's text (1-based) */
  readonly line: number;
  /** the first problem's column in the function's text (0-based) */
  readonly column: number;
  /** the text of the first problem's line */
  readonly sourceLine: string;
  constructor(fnName: string, source: string, problems: readonly SourceProblem[]) {
    super(formatProblems(fnName, source, problems));
    this.problems = problems;
    this.line = problems[0]?.line ?? 0;
    this.column = problems[0]?.column ?? 0;
    this.sourceLine = source.split("\n")[this.line - 1] ?? "";
  }
}

/** Unsupported syntax or an unknown name; lists every problem one compile found. */
export class CompileError extends SourceError {
  /** "CompileError" */
  override readonly name = "CompileError";
}

/** A well-formed kernel whose types do not fit (shows the expression and the types). */
export class TypingError extends SourceError {
  /** "TypingError" */
  override readonly name = "TypingError";
}

/** A bad launch: configuration, shared memory, arguments, or a fault inside the kernel on the simulator. */
export class LaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LaunchError";
  }
}

/**
 * A CUDA driver call failed: names the call, the error's name and text. `summary`, when given, is the
 * message instead (no usable driver for NUMBATS_TARGET=cuda, where the reason already names the call).
 */
export class CudaError extends Error {
  /** the driver call that failed, e.g. "cuModuleLoadDataEx" */
  readonly call: string;
  /** the CUresult error code */
  readonly code: number;
  /** the error's name, e.g. "CUDA_ERROR_OUT_OF_MEMORY" */
  readonly errorName: string;
  constructor(call: string, code: number, errorName: string, errorText: string, detail = "", summary?: string) {
    super(summary ?? `${call} failed: ${errorName} (${code}): ${errorText}${detail ? `\n${detail}` : ""}`);
    this.name = "CudaError";
    this.call = call;
    this.code = code;
    this.errorName = errorName;
  }
}
