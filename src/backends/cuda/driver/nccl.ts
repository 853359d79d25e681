// NCCL, the collectives library between GPUs, through koffi (as the driver is): found, loaded once,
// and its C API bound with nccl.h's exact signatures and enum values. nccl-comm.ts builds the
// communicator on it.
//
// Where the library is looked for, in order (each place is named when none has it):
//   1. NUMBATS_NCCL_LIBRARY (a path or a name): only there;
//   2. libnccl.so.2 on the dynamic loader's path;
//   3. the lib/ directory of an installed nvidia-nccl-cu13 or nvidia-nccl-cu12 wheel (nvidia/nccl/lib/ in
//      python3's site-packages), asked of python3 only when 2 fails.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { NcclError } from "../../../errors.js";
import { koffi, type Koffi } from "./ffi.js";

export const NCCL_UNIQUE_ID_BYTES = 128;

/** C prototypes from nccl.h (ncclResult_t, ncclDataType_t and ncclRedOp_t are C enums: int). */
const PROTOTYPES = {
  ncclGetVersion: "int ncclGetVersion(_Out_ int *version)",
  // the id is a struct of 128 chars: written into a Uint8Array here, passed by value to ncclCommInitRank
  ncclGetUniqueId: "int ncclGetUniqueId(void *uniqueId)",
  ncclCommInitRank: "int ncclCommInitRank(_Out_ void **comm, int nranks, ncclUniqueId commId, int rank)",
  ncclCommDestroy: "int ncclCommDestroy(void *comm)",
  ncclGetErrorString: "const char *ncclGetErrorString(int result)",
  ncclAllReduce: "int ncclAllReduce(uint64_t sendbuff, uint64_t recvbuff, size_t count, int datatype, int op, void *comm, void *stream)",
  ncclBroadcast: "int ncclBroadcast(uint64_t sendbuff, uint64_t recvbuff, size_t count, int datatype, int root, void *comm, void *stream)",
  ncclReduce: "int ncclReduce(uint64_t sendbuff, uint64_t recvbuff, size_t count, int datatype, int op, int root, void *comm, void *stream)",
  ncclAllGather: "int ncclAllGather(uint64_t sendbuff, uint64_t recvbuff, size_t sendcount, int datatype, void *comm, void *stream)",
  ncclReduceScatter: "int ncclReduceScatter(uint64_t sendbuff, uint64_t recvbuff, size_t recvcount, int datatype, int op, void *comm, void *stream)",
  ncclSend: "int ncclSend(uint64_t sendbuff, size_t count, int datatype, int peer, void *comm, void *stream)",
  ncclRecv: "int ncclRecv(uint64_t recvbuff, size_t count, int datatype, int peer, void *comm, void *stream)",
  ncclGroupStart: "int ncclGroupStart()",
  ncclGroupEnd: "int ncclGroupEnd()",
} as const;

export type NcclCall = keyof typeof PROTOTYPES;
export type NcclApi = { readonly [K in NcclCall]: (...args: any[]) => any };

export const NCCL_SUCCESS = 0;

/** ncclDataType_t */
export const NCCL_DATA_TYPES: Readonly<Record<string, number>> = {
  int8: 0, uint8: 1, int32: 2, uint32: 3, int64: 4, uint64: 5, float16: 6, float32: 7, float64: 8, bfloat16: 9,
};
export const ncclUint8 = NCCL_DATA_TYPES.uint8!;

/** ncclRedOp_t */
export const NCCL_OPS = { sum: 0, prod: 1, max: 2, min: 3, avg: 4 } as const;

/** The loaded library. */
export class Nccl {
  /** NCCL's version as ncclGetVersion gives it (e.g. 22703 for 2.27.3) */
  readonly version: number;

  constructor(readonly path: string, readonly api: NcclApi) {
    const v = [0];
    this.check("ncclGetVersion", api.ncclGetVersion(v));
    this.version = v[0]!;
  }

  /** Throws an NcclError naming `call` and NCCL's text unless `code` is ncclSuccess. */
  check(call: NcclCall, code: number, detail?: string): void {
    if (code !== NCCL_SUCCESS) throw new NcclError(call, code, this.api.ncclGetErrorString(code) as string, detail);
  }
}

/** Where the library was looked for, and how to find it: the installed wheels' directories when python3 says. */
export interface NcclSearch {
  readonly env: NodeJS.ProcessEnv;
  /** the site-packages directories to look in for nvidia/nccl/lib (python3's, asked lazily) */
  sitePackages(): readonly string[];
}

const WHEEL_LIBRARY = join("nvidia", "nccl", "lib", "libnccl.so.2");

/** python3's site-packages directories (system and user), or none when there is no python3. */
export function pythonSitePackages(): string[] {
  const code = "import site, sysconfig\nfor p in {sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib'], *getattr(site, 'getsitepackages', lambda: [])(), site.getusersitepackages()}: print(p)";
  const r = spawnSync("python3", ["-c", code], { encoding: "utf8", timeout: 10_000 });
  return r.status === 0 ? r.stdout.split("\n").filter(Boolean) : [];
}

/** Loads NCCL as the module comment says; throws an NcclError naming each place tried. */
export function openNccl(search: NcclSearch = { env: process.env, sitePackages: pythonSitePackages }): Nccl {
  const ffi = koffi();
  const tried: string[] = [];
  const attempt = (path: string): Nccl | undefined => {
    try {
      return new Nccl(path, bind(ffi, ffi.load(path)));
    } catch (e) {
      if (e instanceof NcclError) throw e;
      tried.push(`${path}: ${(e as Error).message.split("\n")[0]}`);
      return undefined;
    }
  };
  const fromEnv = search.env.NUMBATS_NCCL_LIBRARY;
  if (fromEnv) return attempt(fromEnv) ?? notFound(tried, "fix NUMBATS_NCCL_LIBRARY (a path to libnccl.so.2) or unset it");
  const onPath = attempt("libnccl.so.2");
  if (onPath) return onPath;
  const sites = search.sitePackages();
  for (const site of sites) {
    const path = join(site, WHEEL_LIBRARY);
    if (existsSync(path)) return attempt(path) ?? notFound(tried, "");
  }
  tried.push(sites.length
    ? `nvidia-nccl-cu13 / nvidia-nccl-cu12 wheels: no ${WHEEL_LIBRARY} in ${sites.join(", ")}`
    : "nvidia-nccl-cu13 / nvidia-nccl-cu12 wheels: python3 was not found to ask for its site-packages");
  return notFound(tried, "install NCCL (pip install nvidia-nccl-cu13, or the libnccl2 package) or set NUMBATS_NCCL_LIBRARY to libnccl.so.2's path");
}

function notFound(tried: readonly string[], fix: string): never {
  throw new NcclError("dlopen(libnccl)", -1, "the NCCL library was not found", [`looked in:\n  ${tried.join("\n  ")}`, fix].filter(Boolean).join("\n"));
}

let typesDeclared = false;

function bind(ffi: Koffi, lib: ReturnType<Koffi["load"]>): NcclApi {
  if (!typesDeclared) {
    ffi.struct("ncclUniqueId", { internal: ffi.array("uint8_t", NCCL_UNIQUE_ID_BYTES) });
    typesDeclared = true;
  }
  const api: Record<string, unknown> = {};
  // every entry point is required: a library without one is not NCCL 2.x
  for (const [name, proto] of Object.entries(PROTOTYPES)) api[name] = lib.func(proto);
  return api as NcclApi;
}

let cached: Nccl | undefined;

/** The process-wide NCCL, loaded on first use. */
export function ncclLibrary(): Nccl {
  return (cached ??= openNccl());
}
