// The typed errors of SPEC §8. Every failure a user can cause is one of these.

/** One problem in kernel source, with its position. */
export interface SourceProblem {
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

/** The source line of `problem` with a caret under its column. */
export function excerpt(source: string, line: number, column: number): string {
  const text = source.split("\n")[line - 1] ?? "";
  const gutter = `${line} | `;
  return `${gutter}${text}\n${" ".repeat(gutter.length + column)}^`;
}

function formatProblems(fnName: string, source: string, problems: readonly SourceProblem[]): string {
  const head = problems.length === 1 ? "" : `${problems.length} problems in kernel '${fnName}':\n`;
  return head + problems
    .map((p) => `${p.message} (in '${fnName}' at line ${p.line}, column ${p.column + 1})\n${excerpt(source, p.line, p.column)}`)
    .join("\n\n");
}

/** An error located in kernel source: every problem found, the first one's position. */
abstract class SourceError extends Error {
  readonly problems: readonly SourceProblem[];
  readonly line: number;
  readonly column: number;
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
  override readonly name = "CompileError";
}

/** A well-formed kernel whose types do not fit (shows the expression and the types). */
export class TypingError extends SourceError {
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
  readonly call: string;
  readonly code: number;
  readonly errorName: string;
  constructor(call: string, code: number, errorName: string, errorText: string, detail = "", summary?: string) {
    super(summary ?? `${call} failed: ${errorName} (${code}): ${errorText}${detail ? `\n${detail}` : ""}`);
    this.name = "CudaError";
    this.call = call;
    this.code = code;
    this.errorName = errorName;
  }
}
