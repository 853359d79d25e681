// Runs a playground program (JavaScript: kernels and their launches, `await` at its top level) on
// numbats' simulator or on WebGPU, and gathers what the page shows: what it printed, each kernel's typed
// IR, PTX and (on WebGPU) WGSL, the sanitizer's findings with their source lines, and any error with its
// source line and caret. Each function the
// program passes to cuda.jit (reduce, vectorize, guvectorize) carries a record of where it is in the
// editor (as numbats' build plugin records a file's), so that numbats' messages name editor lines.

import * as numbats from "numbats";
import type { Kernel, SanitizerFinding } from "numbats";

/** The file name numbats' messages give the editor's text. */
export const FILE = "playground";

/** The targets a program runs on here. */
export type Target = "sim" | "webgpu";

export interface RunRequest {
  readonly code: string;
  readonly target: Target;
  /** run every launch with the sanitizer's checks */
  readonly sanitize: boolean;
}

export interface KernelView {
  readonly name: string;
  readonly ir: string;
  readonly ptx: string;
  /** the WGSL it ran as on WebGPU; on the simulator, why there is none */
  readonly wgsl: string;
}

/** A sanitizer finding, each place it names with that line of the editor's text. */
export interface FindingView {
  readonly tool: string;
  readonly kind: string;
  readonly what: string;
  readonly places: readonly { readonly line: number; readonly text: string }[];
}

export interface RunReply {
  /** what ran the kernels: "WebGPU (<adapter>)" or "the CPU simulator" ("" where none was compiled) */
  readonly ranOn: string;
  readonly output: string;
  readonly error: string;
  readonly kernels: readonly KernelView[];
  readonly findings: readonly FindingView[];
  readonly ms: number;
}

const COMPILING = ["jit", "reduce", "vectorize", "guvectorize"] as const;

/** PTX as the simulated device's compute capability (8.0) gets it, whichever target ran the kernel */
const PTX_TARGET = { computeCapability: [8, 0] } as const;

/** Where `text` (a function's own text) is in `code`: 1-based line, 0-based column; searched from `from`. */
function place(code: string, text: string, from: number): { at: number; line: number; column: number } | undefined {
  const at = code.indexOf(text, from);
  if (at < 0) return undefined;
  const before = code.slice(0, at);
  return { at, line: before.split("\n").length, column: at - (before.lastIndexOf("\n") + 1) };
}

/** The names the program declares at its top level (unindented declarations): what kernels may call. */
const topLevelNames = (code: string): string[] =>
  [...new Set([...code.matchAll(/^(?:const|let|var|function\*?|class)\s+([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]!))];

/** A value as console.log shows it, compactly: typed arrays with their type and first elements. */
function show(v: unknown): string {
  if (typeof v === "string") return v;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    const items = Array.from(v as unknown as ArrayLike<number | bigint>).slice(0, 32).map(String);
    const length = (v as unknown as ArrayLike<unknown>).length;
    return `${v.constructor.name}(${length}) [${items.join(", ")}${length > 32 ? ", …" : ""}]`;
  }
  if (v instanceof Error) return `${v.name}: ${v.message}`;
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "object" && v !== null) {
    try {
      return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));
    } catch {
      return String(v);
    }
  }
  return String(v);
}

/** `file:line` places of a finding, with the editor's line. */
function findingView(f: SanitizerFinding, lines: readonly string[]): FindingView {
  const places = f.where.map((w) => {
    const line = Number(/:(\d+)$/.exec(w)?.[1]);
    return { line, text: lines[line - 1] ?? "" };
  });
  const what = f.array === undefined ? "" : `${f.array}${f.index ? `[${f.index.join(", ")}]` : ""}`;
  return { tool: f.tool, kind: f.kind, what, places };
}

/** One kernel's views, compiled for the signatures its launches used; `onWebGpu`: its code is WGSL. */
function kernelView(name: string, k: Kernel, onWebGpu: boolean): KernelView {
  if (k.signatures.length === 0) {
    const none = "(not compiled: launch it, or give options.signature)";
    return { name, ir: none, ptx: none, wgsl: none };
  }
  const each = (view: (sig: string) => string) => k.signatures.map((sig) => {
    try {
      return `// ${sig}\n${view(sig)}`;
    } catch (e) {
      return `// ${sig}\n${(e as Error).message}`;
    }
  }).join("\n\n");
  return {
    name,
    ir: each((sig) => k.inspectTypes(sig)),
    ptx: each((sig) => k.inspectAsm(sig, PTX_TARGET)),
    // on WebGPU, the code the target runs (inspectAsm without a PTX target) is the WGSL
    wgsl: onWebGpu ? each((sig) => k.inspectAsm(sig)) : "(the kernels ran on the simulator: run on WebGPU to see their WGSL)",
  };
}


/** numbats' settings for a run: its target and the sanitizer (before numbats' ready() chooses the target). */
export function settle({ target, sanitize }: RunRequest): void {
  numbats.env.NUMBATS_TARGET = target;
  if (sanitize) numbats.env.NUMBATS_SANITIZE = "all";
}

/**
 * Runs the program once, in a fresh numbats (a new worker per run: settings and state start clean), on
 * the target the runner readied (settle, then numbats' ready()).
 */
export async function runProgram({ code, sanitize }: RunRequest): Promise<RunReply> {
  const printed: string[] = [];
  numbats.setOutput((line) => printed.push(line));
  const console = { log: (...a: unknown[]) => printed.push(a.map(show).join(" ")) };
  const kernels: [string, Kernel][] = [];
  let searchFrom = 0;

  /** records where `fn` is in the editor, and its binding's name (returned), before numbats compiles it */
  const record = (fn: Function, names: () => Record<string, unknown>): string | undefined => {
    const text = fn.toString();
    const p = place(code, text, searchFrom) ?? place(code, text, 0);
    if (!p) return undefined;
    searchFrom = p.at + text.length;
    const name = /(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*cuda\.\w+\(\s*$/.exec(code.slice(0, p.at))?.[1] ?? (fn.name || undefined);
    Object.defineProperty(fn, Symbol.for("numbats.source"), { value: { source: text, name, file: FILE, line: p.line, column: p.column, names }, configurable: true });
    return name;
  };

  let names: () => Record<string, unknown> = () => ({});
  type Compiling = (fn: Function, ...rest: unknown[]) => unknown;
  const cuda: Record<string, unknown> = Object.create(numbats.cuda);
  for (const api of COMPILING) {
    const original = (numbats.cuda as unknown as Record<string, Compiling>)[api]!;
    cuda[api] = (fn: Function, ...rest: unknown[]) => {
      const name = typeof fn === "function" ? record(fn, () => names()) : undefined;
      const made = original.call(numbats.cuda, fn, ...rest);
      if (made instanceof numbats.Kernel) kernels.push([name ?? made.name, made]);
      return made;
    };
  }

  // cuda.detect() prints with the console's log: into the output, as the program's own lines
  cuda.detect = (): boolean => {
    const log = globalThis.console.log;
    globalThis.console.log = console.log;
    try {
      return numbats.cuda.detect();
    } finally {
      globalThis.console.log = log;
    }
  };

  const scope: Record<string, unknown> = { ...numbats, cuda, console, __names: (read: () => Record<string, unknown>) => { names = read; } };
  // the names getter is a hoisted function: bound before the program's first line runs
  // (each name read on its own: one not yet initialised when a kernel compiles is left out)
  const reads = topLevelNames(code).map((n) => `try { o.${n} = ${n}; } catch {}`).join(" ");
  const body = `__names(__namesOfProgram);\n${code}\n;function __namesOfProgram() { const o = {}; ${reads} return o; }`;
  const t0 = performance.now();
  let error = "";
  let findings: FindingView[] = [];
  // an async function: the program may await (WebGPU's launches and copies to the host are async)
  const AsyncFunction = (async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
  try {
    await new AsyncFunction(...Object.keys(scope), body)(...Object.values(scope));
  } catch (e) {
    error = e instanceof Error ? `${e.name}: ${e.message}` : `thrown: ${show(e)}`;
    if (e instanceof numbats.SanitizerError) findings = e.findings.map((f) => findingView(f, code.split("\n")));
  }
  const ms = performance.now() - t0;
  // a GPU here is WebGPU (a browser has no CUDA); the sanitizer runs kernels on the simulator
  let ranOn = "", onWebGpu = false;
  if (kernels.some(([, k]) => k.signatures.length > 0)) {
    try {
      onWebGpu = numbats.cuda.isAvailable();
      ranOn = onWebGpu ? `WebGPU (${numbats.cuda.getCurrentDevice().name})` : "the CPU simulator";
    } catch { /* no target could be chosen: the error says why */ }
  }
  return { ranOn, output: printed.join("\n"), error, kernels: kernels.map(([n, k]) => kernelView(n, k, onWebGpu)), findings, ms };
}
