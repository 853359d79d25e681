// A stand-in libcuda for testing the runtime without a GPU: the driver API's
// C signatures over host memory (malloc'd "device" memory, memcpy copies),
// with knobs to make calls fail and a record of the last launch. Built with
// gcc into a temp dir; tests skip when gcc is absent.

import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import koffi from "koffi";

const SOURCE = String.raw`
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int CUresult;
static int init_rc = 0, version = 13000, sync_rc = 0, pending = 0, resets = 0, loads = 0, frees = 0, host_frees = 0;
static int ctx_token = 1, record_clock = 0, max_regs = -1, dyn_smem_attr = -1, host_flags = -1, last_async = 0, retain_rc = 0, releases = 0;
static unsigned launch_dims[7]; static void *launch_stream = (void*)1; static int launch_coop = -1, launch_ex = 0;
static int nsizes = 0, sizes[64]; static unsigned char record[512];

void mock_set(int init, int ver, int sync, int pend, int retain) { init_rc = init; version = ver; sync_rc = sync; pending = pend; retain_rc = retain; }
/* stats: resets loads frees host_frees max_regs dyn_smem_attr host_flags last_async launch_coop launch_ex releases */
void mock_stats(int *out) { int s[] = {resets, loads, frees, host_frees, max_regs, dyn_smem_attr, host_flags, last_async, launch_coop, launch_ex, releases};
  memcpy(out, s, sizeof s); }
void mock_expect_params(int n, const int *s) { nsizes = n; memcpy(sizes, s, n * sizeof(int)); }
void mock_launch(unsigned *dims, unsigned char *bytes, int cap) { memcpy(dims, launch_dims, sizeof launch_dims); memcpy(bytes, record, cap); }
uint64_t mock_launch_stream(void) { return (uint64_t)(uintptr_t)launch_stream; }

CUresult cuInit(unsigned int f) { return f ? 1 : init_rc; }
CUresult cuDriverGetVersion(int *v) { *v = version; return 0; }
CUresult cuGetErrorName(int e, const char **s) {
  switch (e) { case 0: *s = "CUDA_SUCCESS"; return 0; case 218: *s = "CUDA_ERROR_INVALID_PTX"; return 0;
    case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0; case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return 0; }
  return 1; }
CUresult cuGetErrorString(int e, const char **s) {
  switch (e) { case 218: *s = "a PTX JIT compilation failed"; return 0; case 700: *s = "an illegal memory access was encountered"; return 0; }
  return 1; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { if (i != 0) return 101; *d = i; return 0; }
CUresult cuDeviceGetName(char *name, int len, int d) { snprintf(name, len, "Mock GPU %d", d); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  switch (a) { case 1: *v = 1024; break; case 2: *v = 1024; break; case 3: *v = 1024; break; case 4: *v = 64; break;
    case 5: *v = 2147483647; break; case 6: *v = 65535; break; case 7: *v = 65535; break; case 8: *v = 49152; break;
    case 10: *v = 32; break; case 16: *v = 132; break; case 75: *v = 9; break; case 76: *v = 0; break;
    case 97: *v = 232448; break; default: return 1; }
  return 0; }
CUresult cuDeviceTotalMem_v2(size_t *b, int d) { *b = 85899345920ull; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { if (retain_rc) return retain_rc; *c = &ctx_token; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { releases++; return 0; }
CUresult cuDevicePrimaryCtxReset_v2(int d) { resets++; sync_rc = 0; return 0; }
CUresult cuCtxSetCurrent(void *c) { return c == &ctx_token ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return sync_rc; }
CUresult cuModuleLoadDataEx(void **m, const char *image, unsigned n, int *opts, void **vals) {
  char *log = 0; size_t size = 0; loads++;
  for (unsigned i = 0; i < n; i++) { if (opts[i] == 5) log = vals[i]; if (opts[i] == 6) size = (size_t)vals[i]; if (opts[i] == 0) max_regs = (int)(intptr_t)vals[i]; }
  if (!strstr(image, ".entry")) { if (log && size) snprintf(log, size, "ptxas fatal: no entry in '%.12s'", image); return 218; }
  *m = malloc(8); return 0; }
CUresult cuModuleUnload(void *m) { return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { *f = m; return 0; }
CUresult cuFuncGetAttribute(int *v, int a, void *f) { *v = 0; return 0; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { if (a == 8) dyn_smem_attr = v; return 0; }
CUresult cuOccupancyMaxPotentialBlockSize(int *g, int *b, void *f, void *cb, size_t dyn, int lim) { *g = 264; *b = dyn ? 512 : 768; return 0; }
static CUresult launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, void *s, void **kp, int coop) {
  unsigned d[7] = {gx, gy, gz, bx, by, bz, smem}; memcpy(launch_dims, d, sizeof d); launch_stream = s; launch_coop = coop; launch_ex = 0;
  int at = 0; for (int i = 0; i < nsizes; i++) { memcpy(record + at, kp[i], sizes[i]); at += sizes[i]; }
  return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, void *s, void **kp, void **extra) {
  return extra ? 1 : launch(gx, gy, gz, bx, by, bz, smem, s, kp, 0); }
/* CUlaunchConfig (cuda.h 12+) */
typedef struct { unsigned dims[7]; void *stream; void *attrs; unsigned num_attrs; } launch_config;
CUresult cuLaunchKernelEx(const launch_config *c, void *f, void **kp, void **extra) {
  if (extra || c->num_attrs) return 1;
  CUresult rc = launch(c->dims[0], c->dims[1], c->dims[2], c->dims[3], c->dims[4], c->dims[5], c->dims[6], c->stream, kp, 0);
  launch_ex = 1; return rc; }
CUresult cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, void *s, void **kp) {
  return launch(gx, gy, gz, bx, by, bz, smem, s, kp, 1); }
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { if (n > (1ull << 40)) return 2; *p = (uint64_t)(uintptr_t)malloc(n); return 0; }
CUresult cuMemFree_v2(uint64_t p) { frees++; free((void*)(uintptr_t)p); return 0; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { *f = 1ull << 33; *t = 1ull << 34; return 0; }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) { host_flags = flags; *p = calloc(1, n); return 0; }
CUresult cuMemFreeHost(void *p) { host_frees++; free(p); return 0; }
CUresult cuMemHostGetDevicePointer_v2(uint64_t *d, void *p, unsigned f) { *d = (uint64_t)(uintptr_t)p; return 0; }
#define P(x) ((void*)(uintptr_t)(x))
CUresult cuMemcpy(uint64_t d, uint64_t s, size_t n) { last_async = 0; memcpy(P(d), P(s), n); return 0; }
CUresult cuMemcpyAsync(uint64_t d, uint64_t s, size_t n, void *st) { last_async = 1; memcpy(P(d), P(s), n); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) { last_async = 0; memcpy(P(d), s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { last_async = 0; memcpy(d, P(s), n); return 0; }
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n) { last_async = 0; memcpy(P(d), P(s), n); return 0; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *st) { last_async = 1; memcpy(P(d), s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *d, uint64_t s, size_t n, void *st) { last_async = 1; memcpy(d, P(s), n); return 0; }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *st) { last_async = 1; memcpy(P(d), P(s), n); return 0; }
CUresult cuStreamCreate(void **s, unsigned f) { *s = malloc(8); return 0; }
CUresult cuStreamDestroy_v2(void *s) { return 0; }
CUresult cuStreamSynchronize(void *s) { pending = 0; return sync_rc; }
CUresult cuStreamQuery(void *s) { if (pending > 0) { pending--; return 600; } return sync_rc; }
CUresult cuEventCreate(void **e, unsigned f) { *e = calloc(1, sizeof(int)); return 0; }
CUresult cuEventDestroy_v2(void *e) { return 0; }
CUresult cuEventRecord(void *e, void *s) { *(int*)e = ++record_clock; return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventQuery(void *e) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { *ms = 1.5f * (*(int*)b - *(int*)a); return 0; }
`;

export interface MockStats {
  resets: number; loads: number; frees: number; hostFrees: number; maxRegisters: number;
  dynamicSharedAttr: number; hostFlags: number; lastCopyAsync: boolean; lastLaunchCooperative: number;
  /** whether the last launch went through cuLaunchKernelEx */
  lastLaunchEx: boolean;
  releases: number;
}

export interface MockCuda {
  readonly path: string;
  /** retainRc: what cuDevicePrimaryCtxRetain returns (0: a context) */
  set(o: { initRc?: number; version?: number; syncRc?: number; pendingPolls?: number; retainRc?: number }): void;
  stats(): MockStats;
  expectParams(sizes: readonly number[]): void;
  lastLaunch(bytes: number): { dims: number[]; params: Uint8Array };
  /** the CUstream of the last launch (0n: the default stream) */
  lastLaunchStream(): bigint;
}

function hasGcc(): boolean {
  try {
    execFileSync("gcc", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Compiles the mock and binds its knobs; undefined when gcc is not installed. */
export function buildMockCuda(): MockCuda | undefined {
  if (!hasGcc()) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "numbats-mockcuda-"));
  writeFileSync(join(dir, "mockcuda.c"), SOURCE);
  const path = join(dir, "libmockcuda.so");
  execFileSync("gcc", ["-shared", "-fPIC", "-O1", "-o", path, join(dir, "mockcuda.c")]);
  const lib = koffi.load(path);
  const mockSet = lib.func("void mock_set(int init, int ver, int sync, int pend, int retain)");
  const mockStats = lib.func("void mock_stats(int *out)");
  const expect = lib.func("void mock_expect_params(int n, const int *sizes)");
  const launch = lib.func("void mock_launch(uint32_t *dims, uint8_t *bytes, int cap)");
  const launchStream = lib.func("uint64_t mock_launch_stream()");
  const state = { initRc: 0, version: 13000, syncRc: 0, pendingPolls: 0, retainRc: 0 };
  return {
    path,
    set(o) {
      Object.assign(state, o);
      mockSet(state.initRc, state.version, state.syncRc, state.pendingPolls, state.retainRc);
    },
    stats() {
      const s = new Int32Array(11);
      mockStats(s);
      return {
        resets: s[0]!, loads: s[1]!, frees: s[2]!, hostFrees: s[3]!, maxRegisters: s[4]!,
        dynamicSharedAttr: s[5]!, hostFlags: s[6]!, lastCopyAsync: s[7] === 1, lastLaunchCooperative: s[8]!,
        lastLaunchEx: s[9] === 1, releases: s[10]!,
      };
    },
    expectParams(sizes) {
      expect(sizes.length, new Int32Array(sizes));
    },
    lastLaunch(bytes) {
      const dims = new Uint32Array(7), params = new Uint8Array(bytes);
      launch(dims, params, bytes);
      return { dims: [...dims], params };
    },
    lastLaunchStream() {
      return BigInt(launchStream());
    },
  };
}
