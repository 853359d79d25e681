/* A stand-in libcuda for `npm run bench:launch`: enough of the driver API for numbats to open a
 * device, load a module and launch, with launches that return at once (nothing runs), so that a
 * timed launch is the host's cost alone. Device memory is malloc'd; copies are memcpy. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int CUresult;
static int ctx_token = 1;

CUresult cuInit(unsigned int f) { return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuGetErrorName(int e, const char **s) { *s = e ? "CUDA_ERROR_STANDIN" : "CUDA_SUCCESS"; return 0; }
CUresult cuGetErrorString(int e, const char **s) { *s = e ? "stand-in error" : "no error"; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { if (i != 0) return 101; *d = i; return 0; }
CUresult cuDeviceGetName(char *name, int len, int d) { snprintf(name, len, "stand-in GPU (launches return at once)"); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  switch (a) { case 1: case 2: *v = 1024; break; case 3: *v = 64; break; case 4: *v = 49152; break;
    case 5: *v = 2147483647; break; case 6: case 7: *v = 65535; break; case 8: *v = 49152; break;
    case 10: *v = 32; break; case 16: *v = 132; break; case 75: *v = 9; break; case 76: *v = 0; break;
    case 97: *v = 232448; break; default: *v = 0; }
  return 0; }
CUresult cuDeviceTotalMem_v2(size_t *b, int d) { *b = 85899345920ull; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = &ctx_token; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
CUresult cuDevicePrimaryCtxReset_v2(int d) { return 0; }
CUresult cuCtxSetCurrent(void *c) { return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuModuleLoadDataEx(void **m, const char *image, unsigned n, int *opts, void **vals) { *m = malloc(8); return 0; }
CUresult cuModuleUnload(void *m) { free(m); return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { *f = m; return 0; }
CUresult cuFuncGetAttribute(int *v, int a, void *f) { *v = 0; return 0; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { return 0; }
CUresult cuOccupancyMaxPotentialBlockSize(int *g, int *b, void *f, void *cb, size_t dyn, int lim) { *g = 132; *b = 1024; return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *s, void **kp, void **extra) { return 0; }
CUresult cuLaunchKernelEx(const void *config, void *f, void **kp, void **extra) { return 0; }
CUresult cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                   unsigned smem, void *s, void **kp) { return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { *p = (uint64_t)(uintptr_t)malloc(n); return *p ? 0 : 2; }
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { *f = 1ull << 33; *t = 1ull << 34; return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return 0; }
CUresult cuStreamCreate(void **s, unsigned flags) { *s = malloc(8); return 0; }
CUresult cuStreamDestroy_v2(void *s) { free(s); return 0; }
CUresult cuStreamSynchronize(void *s) { return 0; }
