// The CUDA driver API (libcuda) through koffi.
//
// Loaded lazily, once per process. Every entry point is resolved on its own:
// a driver too old to export one symbol still serves the others, and calling
// the missing one throws a CudaError naming it. Handles (contexts, modules,
// functions, streams, events) are opaque `void *` values; device pointers are
// uint64 (normalised to bigint by callers).

import { loadKoffi, type FailedCall, type Koffi } from "./ffi.js";
import { missingDriverReason } from "./driver-search.js";

export type { FailedCall } from "./ffi.js";
import { CudaError } from "../../../errors.js";

/** C prototypes, keyed by the exported symbol (cuda.h 13.0 names; `_v2` where the header maps to it). */
const PROTOTYPES = {
  cuInit: "int cuInit(unsigned int flags)",
  cuDriverGetVersion: "int cuDriverGetVersion(_Out_ int *version)",
  cuGetErrorName: "int cuGetErrorName(int error, _Out_ const char **name)",
  cuGetErrorString: "int cuGetErrorString(int error, _Out_ const char **text)",

  cuDeviceGetCount: "int cuDeviceGetCount(_Out_ int *count)",
  cuDeviceGet: "int cuDeviceGet(_Out_ int *device, int ordinal)",
  cuDeviceGetName: "int cuDeviceGetName(void *name, int len, int device)",
  cuDeviceGetAttribute: "int cuDeviceGetAttribute(_Out_ int *value, int attrib, int device)",
  cuDeviceTotalMem_v2: "int cuDeviceTotalMem_v2(_Out_ size_t *bytes, int device)",

  cuDevicePrimaryCtxRetain: "int cuDevicePrimaryCtxRetain(_Out_ void **ctx, int device)",
  cuDevicePrimaryCtxRelease_v2: "int cuDevicePrimaryCtxRelease_v2(int device)",
  cuDevicePrimaryCtxReset_v2: "int cuDevicePrimaryCtxReset_v2(int device)",
  cuCtxSetCurrent: "int cuCtxSetCurrent(void *ctx)",
  cuCtxSynchronize: "int cuCtxSynchronize()",
  cuDeviceCanAccessPeer: "int cuDeviceCanAccessPeer(_Out_ int *canAccess, int device, int peerDevice)",
  cuCtxEnablePeerAccess: "int cuCtxEnablePeerAccess(void *peerContext, unsigned int flags)",

  cuModuleLoadDataEx: "int cuModuleLoadDataEx(_Out_ void **module, const char *image, unsigned int n, int *options, void **values)",
  cuModuleUnload: "int cuModuleUnload(void *module)",
  cuModuleGetFunction: "int cuModuleGetFunction(_Out_ void **fn, void *module, const char *name)",
  cuModuleGetGlobal_v2: "int cuModuleGetGlobal_v2(_Out_ uint64_t *dptr, _Out_ size_t *bytes, void *module, const char *name)",
  // the driver's linker (link.ts): option values are pointer-sized words, as for cuModuleLoadDataEx
  cuLinkCreate_v2: "int cuLinkCreate_v2(unsigned int n, int *options, void **values, _Out_ void **state)",
  cuLinkAddData_v2:
    "int cuLinkAddData_v2(void *state, int type, const void *data, size_t size, const char *name, unsigned int n, int *options, void **values)",
  cuLinkComplete: "int cuLinkComplete(void *state, _Out_ void **image, _Out_ size_t *size)",
  cuLinkDestroy: "int cuLinkDestroy(void *state)",
  cuFuncGetAttribute: "int cuFuncGetAttribute(_Out_ int *value, int attrib, void *fn)",
  cuFuncSetAttribute: "int cuFuncSetAttribute(void *fn, int attrib, int value)",
  cuOccupancyMaxPotentialBlockSize:
    "int cuOccupancyMaxPotentialBlockSize(_Out_ int *minGrid, _Out_ int *block, void *fn, void *smemCallback, size_t dynamicSmem, int blockLimit)",
  cuLaunchKernel:
    "int cuLaunchKernel(void *fn, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem, void *stream, void *params, void *extra)",
  // addresses as Numbers (uintptr_t): koffi's cheapest marshalling, 0.09 µs a call against 0.40 µs
  // with `void *` parameters (measured 2026-11-25); the config block is reused from launch to launch
  cuLaunchKernelEx: "int cuLaunchKernelEx(uintptr_t config, uintptr_t fn, uintptr_t params, uintptr_t extra)",
  cuLaunchCooperativeKernel:
    "int cuLaunchCooperativeKernel(void *fn, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem, void *stream, void *params)",

  cuMemAlloc_v2: "int cuMemAlloc_v2(_Out_ uint64_t *ptr, size_t bytes)",
  cuMemFree_v2: "int cuMemFree_v2(uint64_t ptr)",
  cuMemGetInfo_v2: "int cuMemGetInfo_v2(_Out_ size_t *free, _Out_ size_t *total)",
  cuMemHostAlloc: "int cuMemHostAlloc(_Out_ void **ptr, size_t bytes, unsigned int flags)",
  cuMemFreeHost: "int cuMemFreeHost(void *ptr)",
  cuMemHostGetDevicePointer_v2: "int cuMemHostGetDevicePointer_v2(_Out_ uint64_t *dptr, void *ptr, unsigned int flags)",

  cuMemcpy: "int cuMemcpy(uint64_t dst, uint64_t src, size_t bytes)",
  cuMemcpyAsync: "int cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void *stream)",
  cuMemcpyHtoD_v2: "int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes)",
  cuMemcpyDtoH_v2: "int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes)",
  cuMemcpyDtoD_v2: "int cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t bytes)",
  cuMemcpyHtoDAsync_v2: "int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes, void *stream)",
  cuMemcpyDtoHAsync_v2: "int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t bytes, void *stream)",
  cuMemcpyDtoDAsync_v2: "int cuMemcpyDtoDAsync_v2(uint64_t dst, uint64_t src, size_t bytes, void *stream)",
  cuMemcpyPeerAsync: "int cuMemcpyPeerAsync(uint64_t dst, void *dstContext, uint64_t src, void *srcContext, size_t bytes, void *stream)",

  // the handle is a 64-byte CUipcMemHandle: written into a Uint8Array, passed back by value
  cuIpcGetMemHandle: "int cuIpcGetMemHandle(void *handle, uint64_t ptr)",
  cuIpcOpenMemHandle_v2: "int cuIpcOpenMemHandle_v2(_Out_ uint64_t *ptr, CUipcMemHandle handle, unsigned int flags)",
  cuIpcCloseMemHandle: "int cuIpcCloseMemHandle(uint64_t ptr)",

  cuStreamCreate: "int cuStreamCreate(_Out_ void **stream, unsigned int flags)",
  cuStreamDestroy_v2: "int cuStreamDestroy_v2(void *stream)",
  cuStreamSynchronize: "int cuStreamSynchronize(void *stream)",
  cuStreamQuery: "int cuStreamQuery(void *stream)",
  cuEventCreate: "int cuEventCreate(_Out_ void **event, unsigned int flags)",
  cuEventDestroy_v2: "int cuEventDestroy_v2(void *event)",
  cuEventRecord: "int cuEventRecord(void *event, void *stream)",
  cuEventSynchronize: "int cuEventSynchronize(void *event)",
  cuEventQuery: "int cuEventQuery(void *event)",
  // the plain name: every driver exports it (CUDA 13 headers remap to _v2, new in 12.8)
  cuEventElapsedTime: "int cuEventElapsedTime(_Out_ float *ms, void *start, void *end)",

  // graphs by stream capture (graph.ts)
  cuStreamBeginCapture_v2: "int cuStreamBeginCapture_v2(void *stream, int mode)",
  cuStreamEndCapture: "int cuStreamEndCapture(void *stream, _Out_ void **graph)",
  cuGraphInstantiateWithFlags: "int cuGraphInstantiateWithFlags(_Out_ void **exec, void *graph, uint64_t flags)",
  cuGraphLaunch: "int cuGraphLaunch(void *exec, void *stream)",
  cuGraphExecDestroy: "int cuGraphExecDestroy(void *exec)",
  cuGraphDestroy: "int cuGraphDestroy(void *graph)",
} as const;

let typesDeclared = false;

/** The driver's struct types the prototypes name (koffi's names are process-wide: declared once). */
function declareTypes(ffi: Koffi): void {
  if (typesDeclared) return;
  ffi.struct("CUipcMemHandle", { reserved: ffi.array("uint8_t", 64) });
  typesDeclared = true;
}

export type CudaCall = keyof typeof PROTOTYPES;
// koffi functions take any JS value that marshals to the C type
export type CudaApi = { readonly [K in CudaCall]: (...args: any[]) => number };

export const CUDA_SUCCESS = 0;
export const CUDA_ERROR_NOT_READY = 600;
/** CUDA_ERROR_NOT_FOUND: what a symbol missing from an old driver reports */
const CUDA_ERROR_NOT_FOUND = 500;

/** Names and texts for when the driver cannot tell us (not loaded, or no cuGetErrorName). */
const KNOWN_ERRORS: Readonly<Record<number, readonly [string, string]>> = {
  1: ["CUDA_ERROR_INVALID_VALUE", "invalid argument"],
  2: ["CUDA_ERROR_OUT_OF_MEMORY", "out of memory"],
  3: ["CUDA_ERROR_NOT_INITIALIZED", "initialization error"],
  34: ["CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"],
  35: ["CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA driver version is insufficient for CUDA runtime version"],
  100: ["CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"],
  101: ["CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"],
  200: ["CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"],
  201: ["CUDA_ERROR_INVALID_CONTEXT", "invalid device context"],
  209: ["CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"],
  218: ["CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"],
  222: ["CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain"],
  500: ["CUDA_ERROR_NOT_FOUND", "named symbol not found"],
  600: ["CUDA_ERROR_NOT_READY", "device not ready"],
  700: ["CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"],
  701: ["CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"],
  702: ["CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"],
  709: ["CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"],
  710: ["CUDA_ERROR_ASSERT", "device-side assert triggered"],
  714: ["CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"],
  715: ["CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"],
  716: ["CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"],
  717: ["CUDA_ERROR_INVALID_ADDRESS_SPACE", "operation not supported on global/shared address space"],
  718: ["CUDA_ERROR_INVALID_PC", "invalid program counter"],
  719: ["CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"],
  720: ["CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch"],
  900: ["CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"],
  901: ["CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"],
  906: ["CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "operation would make the legacy stream depend on a capturing blocking stream"],
  803: ["CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"],
  804: ["CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"],
};

/**
 * Faults inside a kernel that leave the context unusable until it is reset (the driver API documents
 * each of these as leaving "the process in an inconsistent state").
 */
export const STICKY_ERRORS: ReadonlySet<number> = new Set([700, 702, 710, 714, 715, 716, 717, 718, 719]);

export class CudaDriver {
  readonly path: string;
  readonly api: CudaApi;
  /** symbols this driver does not export */
  readonly missing: readonly string[];

  constructor(path: string, lib: ReturnType<Koffi["load"]>, ffi: Koffi) {
    this.path = path;
    declareTypes(ffi);
    const missing: string[] = [];
    const api: Record<string, (...args: unknown[]) => number> = {};
    for (const [name, proto] of Object.entries(PROTOTYPES)) {
      try {
        api[name] = lib.func(proto);
      } catch {
        missing.push(name);
        api[name] = () => CUDA_ERROR_NOT_FOUND;
      }
    }
    this.api = api as CudaApi;
    this.missing = missing;
  }

  errorName(code: number): string {
    return this.describe(this.api.cuGetErrorName, code) ?? KNOWN_ERRORS[code]?.[0] ?? `CUDA_ERROR_${code}`;
  }

  errorText(code: number): string {
    return this.describe(this.api.cuGetErrorString, code) ?? KNOWN_ERRORS[code]?.[1] ?? "unknown error";
  }

  private describe(fn: CudaApi["cuGetErrorName"], code: number): string | undefined {
    const out: (string | null)[] = [null];
    return fn(code, out) === CUDA_SUCCESS && out[0] ? out[0] : undefined;
  }

  /** The CudaError for `call` returning `code`. */
  error(call: string, code: number, detail = ""): CudaError {
    const notes = [detail];
    if (code === CUDA_ERROR_NOT_FOUND && this.missing.includes(call)) notes.push(`${call} is not exported by the driver at ${this.path}; update the NVIDIA driver`);
    if (STICKY_ERRORS.has(code)) notes.push("A kernel faulted; the CUDA context is unusable until cuda.close(), after which the next use of the GPU starts a fresh one (device memory allocated before is lost).");
    return new CudaError(call, code, this.errorName(code), this.errorText(code), notes.filter(Boolean).join("\n"));
  }

  /** Throws a CudaError unless `code` is CUDA_SUCCESS. */
  check(call: CudaCall, code: number, detail?: string): void {
    if (code !== CUDA_SUCCESS) throw this.error(call, code, detail);
  }
}

export type DriverLoad = { readonly ok: true; readonly driver: CudaDriver } | { readonly ok: false; readonly reason: string; readonly failed: FailedCall };

/** Where to look for the driver; NUMBATS_CUDA_LIBRARY overrides (a path or a name). */
export function libraryCandidates(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
  if (env.NUMBATS_CUDA_LIBRARY) return [env.NUMBATS_CUDA_LIBRARY];
  if (platform === "win32") return ["nvcuda.dll"];
  // the SONAME, never plain libcuda.so (often the toolkit's stub); then WSL's location
  return ["libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"];
}

const NOT_FOUND: FailedCall = { call: "dlopen(libcuda)", code: -1, errorName: "CUDA_DRIVER_NOT_FOUND" };

/** Loads the first library of `candidates` that opens; uncached. */
export function openDriver(candidates: readonly string[] = libraryCandidates()): DriverLoad {
  const ffi = loadKoffi();
  if (!ffi.ok) return ffi;
  const failures: string[] = [];
  for (const path of candidates) {
    try {
      return { ok: true, driver: new CudaDriver(path, ffi.koffi.load(path), ffi.koffi) };
    } catch (e) {
      failures.push(`${path}: ${(e as Error).message.split("\n")[0]}`);
    }
  }
  return {
    ok: false,
    failed: NOT_FOUND,
    reason: `the CUDA driver library was not found (tried ${candidates.join(", ")}); install the NVIDIA driver to use the GPU\n  ${failures.join("\n  ")}`,
  };
}

let cached: DriverLoad | undefined;

/**
 * The process-wide driver, loaded on first use. Where no driver library can be on the machine, koffi is
 * not loaded to try (driver-search.ts says why); a library named by NUMBATS_CUDA_LIBRARY is always tried.
 */
export function cudaDriver(): DriverLoad {
  return (cached ??= systemDriver());
}

function systemDriver(): DriverLoad {
  const candidates = libraryCandidates();
  const missing = process.env.NUMBATS_CUDA_LIBRARY ? undefined : missingDriverReason(candidates);
  return missing === undefined ? openDriver(candidates) : { ok: false, failed: NOT_FOUND, reason: missing };
}
