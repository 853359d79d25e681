// NVRTC, NVIDIA's runtime compiler of CUDA C++, through koffi: compiles a source to relocatable PTX,
// LTO-IR (for nvJitLink) or a relocatable cubin, for linking with numbats' kernels. It needs no GPU and
// no driver. Found as library-search.ts says; loaded on first use.
//
// A source that does not compile is a CompileError: each of NVRTC's errors in its file becomes a
// problem at its line, with the source line and a caret.

import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { CompileError, CudaError, defineHidden, type SourceProblem } from "../../../errors.js";
import { openLibrary, realLibraryHost, type LibraryHost, type LibrarySpec, type OpenedLibrary } from "./library-search.js";

export const NVRTC_LIBRARY: LibrarySpec = {
  title: "NVRTC",
  envVar: "NUMBATS_NVRTC_LIBRARY",
  wheel: "nvidia-cuda-nvrtc",
  names: { linux: ["libnvrtc.so.13", "libnvrtc.so.12"], win32: ["nvrtc64_130_0.dll", "nvrtc64_120_0.dll"] },
  wheelDirs: ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"],
  // dlopened by name at compile time (NVRTC_ERROR_BUILTIN_OPERATION_FAILURE when the loader cannot find it)
  companions: /^(lib)?nvrtc-builtins(64_\d+\.dll|\.so\.\d+\.\d+)$/,
};

/** C prototypes from nvrtc.h (nvrtcResult is a C enum: int; nvrtcProgram an opaque pointer). */
const PROTOTYPES = {
  nvrtcVersion: "int nvrtcVersion(_Out_ int *major, _Out_ int *minor)",
  nvrtcGetErrorString: "const char *nvrtcGetErrorString(int result)",
  nvrtcCreateProgram: "int nvrtcCreateProgram(_Out_ void **prog, const char *src, const char *name, int numHeaders, const char **headers, const char **includeNames)",
  nvrtcDestroyProgram: "int nvrtcDestroyProgram(_Inout_ void **prog)",
  nvrtcCompileProgram: "int nvrtcCompileProgram(void *prog, int numOptions, const char **options)",
  nvrtcGetProgramLogSize: "int nvrtcGetProgramLogSize(void *prog, _Out_ size_t *size)",
  nvrtcGetProgramLog: "int nvrtcGetProgramLog(void *prog, void *log)",
  nvrtcGetPTXSize: "int nvrtcGetPTXSize(void *prog, _Out_ size_t *size)",
  nvrtcGetPTX: "int nvrtcGetPTX(void *prog, void *ptx)",
  nvrtcGetLTOIRSize: "int nvrtcGetLTOIRSize(void *prog, _Out_ size_t *size)",
  nvrtcGetLTOIR: "int nvrtcGetLTOIR(void *prog, void *ltoir)",
  nvrtcGetCUBINSize: "int nvrtcGetCUBINSize(void *prog, _Out_ size_t *size)",
  nvrtcGetCUBIN: "int nvrtcGetCUBIN(void *prog, void *cubin)",
} as const;

type NvrtcCall = keyof typeof PROTOTYPES;
type NvrtcApi = { readonly [K in NvrtcCall]: (...args: any[]) => any };

const NVRTC_SUCCESS = 0;
const NVRTC_ERROR_COMPILATION = 6;
const NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7;

/** What NVRTC makes of a source, and how: the -arch prefix, the other options, and the calls that fetch it. */
const OUTPUTS = {
  /** relocatable PTX (-rdc: its extern functions are left for a linker) */
  ptx: { arch: "compute", options: ["-rdc=true"], size: "nvrtcGetPTXSize", get: "nvrtcGetPTX" },
  /** LTO-IR, which only nvJitLink links (with -lto) */
  ltoir: { arch: "compute", options: ["-rdc=true", "-dlto"], size: "nvrtcGetLTOIRSize", get: "nvrtcGetLTOIR" },
  /** a relocatable cubin for one GPU architecture */
  cubin: { arch: "sm", options: ["-rdc=true"], size: "nvrtcGetCUBINSize", get: "nvrtcGetCUBIN" },
} as const satisfies Record<string, { arch: string; options: readonly string[]; size: NvrtcCall; get: NvrtcCall }>;

export type CudaOutput = keyof typeof OUTPUTS;

/** CUDA C++ source text, and the name its errors are reported under (a file name, e.g. "lib.cu"). */
export interface CudaSource {
  readonly source: string;
  readonly name: string;
}

export interface CudaCompileOptions {
  /** the GPU architecture, as a compute capability: [9, 0] compiles for compute_90 (or sm_90) */
  readonly computeCapability: readonly [number, number];
  readonly output: CudaOutput;
  /** folders searched for #include "…" (-I) */
  readonly includeDirs?: readonly string[];
  /** further NVRTC options, e.g. "-DN=4", "-use_fast_math" */
  readonly options?: readonly string[];
}

export interface CudaCompiled {
  readonly output: CudaOutput;
  /** PTX text (without its terminating NUL), LTO-IR or cubin bytes */
  readonly code: Uint8Array;
  /** NVRTC's program log: its warnings, empty when there are none */
  readonly log: string;
}

/** The loaded library. */
export class Nvrtc {
  /** NVRTC's version, [major, minor] */
  readonly version: readonly [number, number];

  constructor(readonly path: string, readonly api: NvrtcApi) {
    const major = [0], minor = [0];
    const rc = api.nvrtcVersion(major, minor) as number;
    if (rc !== NVRTC_SUCCESS) throw new Error(`nvrtcVersion failed: ${api.nvrtcGetErrorString(rc)}`);
    this.version = [major[0]!, minor[0]!];
  }

  /** A CudaError naming `call` and NVRTC's name for `code`. */
  error(call: NvrtcCall, code: number, detail = ""): CudaError {
    const name = this.api.nvrtcGetErrorString(code) as string;
    const notes = [detail];
    if (code === NVRTC_ERROR_BUILTIN_OPERATION_FAILURE) notes.push(`NVRTC could not load its builtins library (libnvrtc-builtins): keep it in the folder of ${this.path}, or put that folder on LD_LIBRARY_PATH`);
    return new CudaError(call, code, name, `NVRTC ${this.version.join(".")} at ${this.path}`, notes.filter(Boolean).join("\n"));
  }

  check(call: NvrtcCall, code: number, detail?: string): void {
    if (code !== NVRTC_SUCCESS) throw this.error(call, code, detail);
  }
}

function bind({ path, lib }: OpenedLibrary): Nvrtc {
  const api: Record<string, unknown> = {};
  for (const [name, proto] of Object.entries(PROTOTYPES)) api[name] = lib.func(proto);
  return new Nvrtc(path, api as NvrtcApi);
}

/** Loads NVRTC (uncached); a CudaError naming every place tried where it is not found. */
export function openNvrtc(host: LibraryHost = realLibraryHost): Nvrtc {
  return openLibrary(NVRTC_LIBRARY, bind, host);
}

let cached: Nvrtc | undefined;

/** The process-wide NVRTC, loaded on first use (a failure is not kept: the next call searches again). */
export function nvrtc(): Nvrtc {
  return (cached ??= openNvrtc());
}

/** NVRTC's options for `options`. */
function nvrtcOptions(options: CudaCompileOptions): string[] {
  const [major, minor] = options.computeCapability;
  const output = OUTPUTS[options.output];
  return [`-arch=${output.arch}_${major}${minor}`, ...output.options, ...(options.includeDirs ?? []).map((d) => `-I${d}`), ...(options.options ?? [])];
}

/** Compiles CUDA C++ `source` with NVRTC; a CompileError carrying NVRTC's errors where it does not compile. */
export function compileCuda({ source, name }: CudaSource, options: CudaCompileOptions, lib: Nvrtc = nvrtc()): CudaCompiled {
  const { api } = lib;
  const program: unknown[] = [null];
  lib.check("nvrtcCreateProgram", api.nvrtcCreateProgram(program, source, name, 0, null, null));
  try {
    const prog = program[0];
    const flags = nvrtcOptions(options);
    const status = api.nvrtcCompileProgram(prog, flags.length, flags) as number;
    const log = programLog(lib, prog);
    if (status === NVRTC_ERROR_COMPILATION) throw compileError({ source, name }, flags[0]!.slice("-arch=".length), log);
    lib.check("nvrtcCompileProgram", status, log ? `NVRTC's log:\n${log}` : "");
    const output = OUTPUTS[options.output];
    return { output: options.output, code: fetchBytes(lib, prog, output.size, output.get, options.output === "ptx"), log };
  } finally {
    api.nvrtcDestroyProgram(program);
  }
}

/** Compiles a .cu file: its folder is searched for its #includes first. */
export function compileCudaFile(path: string, options: CudaCompileOptions, lib?: Nvrtc): CudaCompiled {
  const source = readFileSync(path, "utf8");
  return compileCuda({ source, name: path }, { ...options, includeDirs: [dirname(path), ...(options.includeDirs ?? [])] }, lib);
}

function programLog(lib: Nvrtc, prog: unknown): string {
  return new TextDecoder().decode(fetchBytes(lib, prog, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog", true)).trimEnd();
}

/** A size-then-data pair of calls; `text`: the result ends with a NUL, which is dropped. */
function fetchBytes(lib: Nvrtc, prog: unknown, size: NvrtcCall, get: NvrtcCall, text: boolean): Uint8Array {
  const bytes = [0];
  lib.check(size, lib.api[size](prog, bytes));
  const out = new Uint8Array(Number(bytes[0]));
  lib.check(get, lib.api[get](prog, out));
  const end = text && out.at(-1) === 0 ? out.length - 1 : out.length;
  return out.subarray(0, end);
}

/** `lib.cu(12): error: expected a ";"`, `At end of source: error: …`, `lib.cu(3): note #3196-D: to match this "{"` */
const LOG_LINE = /^(?:(.*)\((\d+)\)|At end of source): (?:catastrophic )?(error|note)(?: #[\w-]+)?: (.*)$/;

/**
 * The CompileError for NVRTC's `log`: one problem per error, at its line of `source` with the column
 * NVRTC's caret shows (an error at the end of the source: after its last line), followed by NVRTC's
 * notes on it; an error in another file (an included header) is shown with its place in words.
 */
function compileError({ source, name }: CudaSource, arch: string, log: string): CompileError {
  const lines = log.split("\n"), sourceLines = source.split("\n");
  const problems: SourceProblem[] = [];
  const place = (file: string | undefined, line: string | undefined) => (file === undefined || file === name ? `line ${line}` : `${file} line ${line}`);
  lines.forEach((text, i) => {
    const m = LOG_LINE.exec(text);
    if (!m) return;
    const [, file, lineText, kind, what] = m;
    if (kind === "note") {
      const last = problems.pop();
      if (last) problems.push({ ...last, message: `${last.message}; note at ${place(file, lineText)}: ${what}` });
      return;
    }
    const message = `NVRTC (${arch}): ${what}`;
    if (file !== undefined && file !== name) return problems.push({ message: `${message} (${place(file, lineText)})`, line: 0, column: 0 });
    if (!lineText) {
      const last = sourceLines.reduce((at, l, k) => (l.trim() === "" ? at : k), 0);
      return problems.push({ message, line: last + 1, column: sourceLines[last]?.length ?? 0 });
    }
    const line = Number(lineText);
    problems.push({ message, line, column: caretColumn(sourceLines[line - 1] ?? "", lines[i + 1], lines[i + 2]) });
  });
  if (problems.length === 0) problems.push({ message: `NVRTC (${arch}) could not compile it:\n${log}`, line: 0, column: 0 });
  const error = new CompileError(name, source, problems);
  defineHidden(error, { log });
  return error;
}

/** The column NVRTC's caret points at: it quotes the line indented, with the caret on the next line. */
function caretColumn(sourceLine: string, quoted: string | undefined, caret: string | undefined): number {
  if (quoted === undefined || caret === undefined || !/^\s*\^\s*$/.test(caret) || !quoted.endsWith(sourceLine)) return 0;
  return Math.max(0, caret.indexOf("^") - (quoted.length - sourceLine.length));
}
