// nvJitLink, NVIDIA's device-code linker library, through koffi: links PTX, LTO-IR, cubins, fatbins
// and device objects or libraries into one cubin for one GPU architecture. The driver's own linker
// (cuLink*) takes the same inputs but LTO-IR; nvJitLink needs no GPU and no driver. Found as
// library-search.ts says; loaded on first use.

import { CudaError } from "../../../errors.js";
import { openLibrary, realLibraryHost, type LibraryHost, type LibrarySpec, type OpenedLibrary } from "./library-search.js";

export const NVJITLINK_LIBRARY: LibrarySpec = {
  title: "nvJitLink",
  envVar: "NUMBATS_NVJITLINK_LIBRARY",
  wheel: "nvidia-nvjitlink",
  names: { linux: ["libnvJitLink.so.13", "libnvJitLink.so.12"], win32: ["nvJitLink_130_0.dll", "nvJitLink_120_0.dll"] },
  wheelDirs: ["nvidia/cu13/lib", "nvidia/nvjitlink/lib"],
};

/**
 * C prototypes from nvJitLink.h (nvJitLinkResult and nvJitLinkInputType are C enums: int). The header
 * maps each name to a versioned symbol (__nvJitLinkCreate_13_4); the library exports the plain names too,
 * bound to its own version.
 */
const PROTOTYPES = {
  nvJitLinkVersion: "int nvJitLinkVersion(_Out_ unsigned int *major, _Out_ unsigned int *minor)",
  nvJitLinkCreate: "int nvJitLinkCreate(_Out_ void **handle, uint32_t numOptions, const char **options)",
  nvJitLinkDestroy: "int nvJitLinkDestroy(_Inout_ void **handle)",
  nvJitLinkAddData: "int nvJitLinkAddData(void *handle, int inputType, const void *data, size_t size, const char *name)",
  nvJitLinkComplete: "int nvJitLinkComplete(void *handle)",
  nvJitLinkGetLinkedCubinSize: "int nvJitLinkGetLinkedCubinSize(void *handle, _Out_ size_t *size)",
  nvJitLinkGetLinkedCubin: "int nvJitLinkGetLinkedCubin(void *handle, void *cubin)",
  nvJitLinkGetErrorLogSize: "int nvJitLinkGetErrorLogSize(void *handle, _Out_ size_t *size)",
  nvJitLinkGetErrorLog: "int nvJitLinkGetErrorLog(void *handle, void *log)",
  nvJitLinkGetInfoLogSize: "int nvJitLinkGetInfoLogSize(void *handle, _Out_ size_t *size)",
  nvJitLinkGetInfoLog: "int nvJitLinkGetInfoLog(void *handle, void *log)",
} as const;

type JitLinkCall = keyof typeof PROTOTYPES;
type JitLinkApi = { readonly [K in JitLinkCall]: (...args: any[]) => number };

const NVJITLINK_SUCCESS = 0;

/** nvJitLinkResult's names, by value */
const RESULT_NAMES = [
  "NVJITLINK_SUCCESS", "NVJITLINK_ERROR_UNRECOGNIZED_OPTION", "NVJITLINK_ERROR_MISSING_ARCH", "NVJITLINK_ERROR_INVALID_INPUT",
  "NVJITLINK_ERROR_PTX_COMPILE", "NVJITLINK_ERROR_NVVM_COMPILE", "NVJITLINK_ERROR_INTERNAL", "NVJITLINK_ERROR_THREADPOOL",
  "NVJITLINK_ERROR_UNRECOGNIZED_INPUT", "NVJITLINK_ERROR_FINALIZE", "NVJITLINK_ERROR_NULL_INPUT", "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
  "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH", "NVJITLINK_ERROR_OUTDATED_LIBRARY", "NVJITLINK_ERROR_MISSING_FATBIN",
  "NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH", "NVJITLINK_ERROR_LTO_NOT_ENABLED",
];

/** nvJitLinkInputType, by the kinds of input numbats names */
const INPUT_TYPES = { cubin: 1, ptx: 2, ltoir: 3, fatbin: 4, object: 5, library: 6 } as const;

export type JitLinkInputKind = keyof typeof INPUT_TYPES;

/** One input of a link: its kind, a name for the logs (its file name), and its contents (PTX as text or bytes). */
export interface JitLinkInput {
  readonly kind: JitLinkInputKind;
  readonly name: string;
  readonly data: Uint8Array | string;
}

export interface JitLinkOptions {
  /** the GPU architecture to link for, as a compute capability: [9, 0] links for sm_90 */
  readonly computeCapability: readonly [number, number];
  /** further nvJitLink options, e.g. "-O3", "-lineinfo" */
  readonly options?: readonly string[];
}

export interface JitLinked {
  readonly cubin: Uint8Array;
  /** nvJitLink's info log (empty unless an option such as -verbose asks for one) */
  readonly infoLog: string;
}

/** The loaded library. */
export class NvJitLink {
  /** nvJitLink's version, [major, minor] */
  readonly version: readonly [number, number];

  constructor(readonly path: string, readonly api: JitLinkApi) {
    const major = [0], minor = [0];
    const rc = api.nvJitLinkVersion(major, minor);
    if (rc !== NVJITLINK_SUCCESS) throw new Error(`nvJitLinkVersion failed: ${RESULT_NAMES[rc] ?? rc}`);
    this.version = [major[0]!, minor[0]!];
  }

  /** A CudaError naming `call`, nvJitLink's name for `code`, and the logs (`detail`). */
  error(call: JitLinkCall, code: number, detail: string): CudaError {
    return new CudaError(call, code, RESULT_NAMES[code] ?? `NVJITLINK_ERROR_${code}`, `nvJitLink ${this.version.join(".")} at ${this.path}`, detail);
  }
}

function bind({ path, lib }: OpenedLibrary): NvJitLink {
  const api: Record<string, unknown> = {};
  for (const [name, proto] of Object.entries(PROTOTYPES)) api[name] = lib.func(proto);
  return new NvJitLink(path, api as JitLinkApi);
}

/** Loads nvJitLink (uncached); a CudaError naming every place tried where it is not found. */
export function openNvJitLink(host: LibraryHost = realLibraryHost): NvJitLink {
  return openLibrary(NVJITLINK_LIBRARY, bind, host);
}

let cached: NvJitLink | undefined;

/** The process-wide nvJitLink, loaded on first use (a failure is not kept: the next call searches again). */
export function nvJitLink(): NvJitLink {
  return (cached ??= openNvJitLink());
}

/** nvJitLink's options for a link of `inputs`: -lto where one is LTO-IR (nvJitLink refuses it otherwise). */
function jitLinkOptions(inputs: readonly JitLinkInput[], options: JitLinkOptions): string[] {
  const [major, minor] = options.computeCapability;
  return [`-arch=sm_${major}${minor}`, ...(inputs.some((i) => i.kind === "ltoir") ? ["-lto"] : []), ...(options.options ?? [])];
}

/** Links `inputs` into one cubin; a CudaError naming the failing call, with nvJitLink's error and info logs. */
export function jitLink(inputs: readonly JitLinkInput[], options: JitLinkOptions, lib: NvJitLink = nvJitLink()): JitLinked {
  const { api } = lib;
  const flags = jitLinkOptions(inputs, options);
  const handle: unknown[] = [null];
  const created = api.nvJitLinkCreate(handle, flags.length, flags);
  // a refused option leaves no handle to read a log from
  if (created !== NVJITLINK_SUCCESS) throw lib.error("nvJitLinkCreate", created, `options: ${flags.join(" ")}`);
  const h = handle[0];
  const check = (call: JitLinkCall, rc: number, input?: JitLinkInput): void => {
    if (rc === NVJITLINK_SUCCESS) return;
    const logs = [["error log", log(lib, h, "nvJitLinkGetErrorLogSize", "nvJitLinkGetErrorLog")], ["info log", log(lib, h, "nvJitLinkGetInfoLogSize", "nvJitLinkGetInfoLog")]];
    const detail = [input ? `adding ${input.kind} input '${input.name}'` : `linking ${inputs.map((i) => `${i.name} (${i.kind})`).join(", ")} with ${flags.join(" ")}`,
      ...logs.filter(([, text]) => text).map(([what, text]) => `nvJitLink's ${what}:\n${text}`)];
    throw lib.error(call, rc, detail.join("\n"));
  };
  try {
    for (const input of inputs) {
      const data = inputData(input);
      check("nvJitLinkAddData", api.nvJitLinkAddData(h, INPUT_TYPES[input.kind], data, data.byteLength, input.name), input);
    }
    check("nvJitLinkComplete", api.nvJitLinkComplete(h));
    const size = [0];
    check("nvJitLinkGetLinkedCubinSize", api.nvJitLinkGetLinkedCubinSize(h, size));
    const cubin = new Uint8Array(Number(size[0]));
    check("nvJitLinkGetLinkedCubin", api.nvJitLinkGetLinkedCubin(h, cubin));
    return { cubin, infoLog: log(lib, h, "nvJitLinkGetInfoLogSize", "nvJitLinkGetInfoLog") };
  } finally {
    api.nvJitLinkDestroy(handle);
  }
}

/** An input's bytes: PTX given as text is passed NUL-terminated, as nvJitLink reads it as a C string. */
function inputData({ data }: JitLinkInput): Uint8Array {
  return typeof data === "string" ? new TextEncoder().encode(`${data}\0`) : data;
}

/** One of nvJitLink's logs, as text ("" where it is empty or cannot be read). */
function log(lib: NvJitLink, handle: unknown, size: JitLinkCall, get: JitLinkCall): string {
  const bytes = [0];
  if (lib.api[size](handle, bytes) !== NVJITLINK_SUCCESS || Number(bytes[0]) === 0) return "";
  const out = new Uint8Array(Number(bytes[0]));
  if (lib.api[get](handle, out) !== NVJITLINK_SUCCESS) return "";
  return new TextDecoder().decode(out).replace(/\0+$/, "").trimEnd();
}
