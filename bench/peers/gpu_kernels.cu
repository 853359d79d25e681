// The CUDA C++ peer of bench/gpu.ts: the same kernels, the same launch
// geometry, the same input data (an integer hash of the index) and the same
// timing method (warm-up batch, then CUDA events around a batch of launches,
// median of the repetitions). Each result is checked on the host so a wrong
// kernel cannot look fast. It also times `<<<1, 1>>>` launches of empty kernels with
// numba-cuda-mlir's launch-latency parameter lists: the C++ runtime's floor on this
// host, beside which our launch overhead is read. bench/gpu.ts compiles this file with
// `nvcc -O3 -arch=native` (or sm_90), runs it and reads one JSON object from
// stdout:
//   { "peer": "nvcc", "device": "...", "kernels": { name: { "us", "ok", "detail" } },
//     "transfer": { "h2d_pageable": GB/s, ... }, "launch": { "empty": µs, ... } }
// Flags: --n= --mm= --st= --gs= --reps= --batch= --mib= --launches= --rounds= --warmup=
// (sizes chosen by bench/gpu.ts; --gs is the block count of the grid-stride reduction and histogram).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

static void check(cudaError_t rc, const char* what, int line) {
  if (rc == cudaSuccess) return;
  printf("{\"peer\": \"nvcc\", \"error\": \"line %d: %s: %s\"}\n", line, what, cudaGetErrorString(rc));
  exit(1);
}
#define CK(x) check((x), #x, __LINE__)

struct Config { int n = 1 << 24, mm = 1024, st = 4096, gs = 1024, reps = 25, batch = 10, mib = 256, launches = 2000, rounds = 5, warmup = 500; };

// ---------------------------------------------------------------------------
// input data: identical formulas in bench/gpu.ts and bench/peers/numba_gpu.py

static uint32_t hash32(uint32_t i, uint32_t seed) { return (i + seed) * 2654435761u; }
static float unit(uint32_t i, uint32_t seed) { return (float)(hash32(i, seed) >> 8) * (1.0f / 16777216.0f); }
static std::vector<float> units(int n, uint32_t seed, float shift = 0.0f) {
  std::vector<float> v(n);
  for (int i = 0; i < n; i++) v[i] = unit(i, seed) - shift;
  return v;
}

const int TPB = 16;           // matmul tile
const int BLOCK = 256;        // 1-d kernels
const float ALPHA = 2.5f;

// ---------------------------------------------------------------------------
// kernels

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void saxpy(float alpha, const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}

__global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y < n && x < n) {
    float tmp = 0.0f;
    for (int k = 0; k < n; k++) tmp += A[y * n + k] * B[k * n + x];
    C[y * n + x] = tmp;
  }
}

// Numba's documented fast_matmul, square n×n
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float sA[TPB][TPB];
  __shared__ float sB[TPB][TPB];
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int tx = threadIdx.x, ty = threadIdx.y, bpg = gridDim.x;
  float tmp = 0.0f;
  for (int i = 0; i < bpg; i++) {
    sA[ty][tx] = 0.0f;
    sB[ty][tx] = 0.0f;
    if (y < n && tx + i * TPB < n) sA[ty][tx] = A[y * n + tx + i * TPB];
    if (x < n && ty + i * TPB < n) sB[ty][tx] = B[(ty + i * TPB) * n + x];
    __syncthreads();
    for (int j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
    __syncthreads();
  }
  if (y < n && x < n) C[y * n + x] = tmp;
}

// grid-stride partial sums, shared-memory tree per block, atomicAdd of the block's partial
__global__ void reduce_sum(const float* x, float* out, int n) {
  __shared__ float s[BLOCK];
  int t = threadIdx.x;
  float acc = 0.0f;
  for (int i = blockIdx.x * BLOCK + t; i < n; i += gridDim.x * BLOCK) acc += x[i];
  s[t] = acc;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, s[0]);
}

// 5-point average on the interior, copy on the border
__global__ void stencil5(const float* in, float* out, int ny, int nx) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny) {
    int c = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) out[c] = in[c];
    else out[c] = 0.2f * (in[c] + in[c - nx] + in[c + nx] + in[c - 1] + in[c + 1]);
  }
}

__global__ void histogram(const uint8_t* data, uint32_t* bins, int n) {
  __shared__ uint32_t s[256];
  int t = threadIdx.x;
  s[t] = 0;
  __syncthreads();
  for (int i = blockIdx.x * BLOCK + t; i < n; i += gridDim.x * BLOCK) atomicAdd(&s[data[i]], 1u);
  __syncthreads();
  atomicAdd(&bins[t], s[t]);
}

// ---------------------------------------------------------------------------
// timing and checking

template <class F>
static double median_us(const Config& c, F launch) {
  for (int i = 0; i < c.batch; i++) launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> t;
  for (int r = 0; r < c.reps; r++) {
    CK(cudaEventRecord(e0));
    for (int i = 0; i < c.batch; i++) launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.0 / c.batch);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Result { double us; bool ok; std::string detail; };

/** worst |got - want| / (scale + tiny) over the indices given */
struct Worst {
  double err = 0;
  long at = -1;
  void see(double got, double want, double scale, long i) {
    double e = std::fabs(got - want) / (scale + 1e-30);
    if (!(e <= err)) { err = e; at = i; }
  }
  Result result(double us, double tol) const {
    char buf[128];
    snprintf(buf, sizeof buf, "max rel err %.2e at %ld (tol %.0e)", err, at, tol);
    return {us, err <= tol, buf};
  }
};

template <class T>
static T* device_copy(const std::vector<T>& h) {
  T* d;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T>
static std::vector<T> host_copy(const T* d, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

static int blocks(long n, int per) { return (int)((n + per - 1) / per); }

// five float32 transcendentals per element (libdevice's expf, logf, ...; no fast math)
__global__ void math_f32(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = expf(v) + logf(v + 1.0f) * sinf(v) + cosf(v) * tanhf(v);
  }
}

// matrix transpose through a padded shared-memory tile; blocks of TILE×TILE_ROWS threads
const int TILE = 32, TILE_ROWS = 8;
__global__ void transpose(const float* a, float* out, int ny, int nx) {
  __shared__ float tile[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x0 = blockIdx.x * TILE, y0 = blockIdx.y * TILE;
  for (int j = 0; j < TILE; j += TILE_ROWS)
    if (y0 + ty + j < ny && x0 + tx < nx) tile[ty + j][tx] = a[(y0 + ty + j) * nx + x0 + tx];
  __syncthreads();
  for (int j = 0; j < TILE; j += TILE_ROWS)
    if (x0 + ty + j < nx && y0 + tx < ny) out[(x0 + ty + j) * ny + y0 + tx] = tile[tx][ty + j];
}

// row softmax, one warp per row: max and sum by butterfly shuffles
__global__ void softmax(const float* a, float* out, int rows, int n) {
  int row = blockIdx.x * (BLOCK / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  if (row < rows) {
    const float* r = a + (size_t)row * n;
    float m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, r[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float sum = 0.0f;
    for (int j = lane; j < n; j += 32) sum += expf(r[j] - m);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    for (int j = lane; j < n; j += 32) out[(size_t)row * n + j] = expf(r[j] - m) / sum;
  }
}

// inclusive scan of each block's BLOCK elements (Hillis–Steele in shared memory)
__global__ void scan_block(const float* x, float* out, int n) {
  __shared__ float s[BLOCK];
  int t = threadIdx.x, i = blockIdx.x * BLOCK + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int d = 1; d < BLOCK; d <<= 1) {
    float v = t >= d ? s[t - d] : 0.0f;
    __syncthreads();
    s[t] += v;
    __syncthreads();
  }
  if (i < n) out[i] = s[t];
}

// Black–Scholes call and put (CUDA samples' BlackScholes), Abramowitz–Stegun normal CDF
const float RISKFREE = 0.02f, VOLATILITY = 0.3f;
__device__ float cnd(float d) {
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = 0.3989422804014327f * expf(-0.5f * d * d) *
    (k * (0.31938153f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f)))));
  return d > 0 ? 1.0f - c : c;
}
__global__ void black_scholes(const float* price, const float* strike, const float* years, float* call, float* put, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = price[i], x = strike[i], t = years[i];
    float sqrtT = sqrtf(t);
    float d1 = (logf(s / x) + (RISKFREE + 0.5f * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * sqrtT);
    float d2 = d1 - VOLATILITY * sqrtT;
    float cnd1 = cnd(d1), cnd2 = cnd(d2);
    float expRT = expf(-RISKFREE * t);
    call[i] = s * cnd1 - x * expRT * cnd2;
    put[i] = x * expRT * (1.0f - cnd2) - s * (1.0f - cnd1);
  }
}

// one n-body step, all pairs; pos holds x, y, z, mass per body, vel x, y, z
const float SOFTENING2 = 0.01f, DT = 0.001f;
__global__ void nbody(const float* pos, float* vel, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float xi = pos[4 * i], yi = pos[4 * i + 1], zi = pos[4 * i + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
      float dx = pos[4 * j] - xi, dy = pos[4 * j + 1] - yi, dz = pos[4 * j + 2] - zi;
      float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + SOFTENING2);
      float f = pos[4 * j + 3] * inv * inv * inv;
      ax += dx * f;
      ay += dy * f;
      az += dz * f;
    }
    vel[3 * i] += DT * ax;
    vel[3 * i + 1] += DT * ay;
    vel[3 * i + 2] += DT * az;
  }
}

__global__ void saxpy_f64(double alpha, const double* x, const double* y, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}

// launch-latency kernels (numba-cuda-mlir's launch_latency_ubench rows): empty bodies, 0/1/16/16/256 parameters
#define EACH16(M, p) M(p##0), M(p##1), M(p##2), M(p##3), M(p##4), M(p##5), M(p##6), M(p##7), \
  M(p##8), M(p##9), M(p##a), M(p##b), M(p##c), M(p##d), M(p##e), M(p##f)
#define EACH256(M, p) EACH16(M, p##0), EACH16(M, p##1), EACH16(M, p##2), EACH16(M, p##3), EACH16(M, p##4), \
  EACH16(M, p##5), EACH16(M, p##6), EACH16(M, p##7), EACH16(M, p##8), EACH16(M, p##9), EACH16(M, p##a), \
  EACH16(M, p##b), EACH16(M, p##c), EACH16(M, p##d), EACH16(M, p##e), EACH16(M, p##f)
#define SCALAR_PARAM(n) float n
#define ARRAY_PARAM(n) float* n
#define SCALAR_ARG(n) 1.0f
#define ARRAY_ARG(n) arr
__global__ void launch_empty() {}
__global__ void launch_1_array(float*) {}
__global__ void launch_16_scalars(EACH16(SCALAR_PARAM, a)) {}
__global__ void launch_16_arrays(EACH16(ARRAY_PARAM, a)) {}
__global__ void launch_256_scalars(EACH256(SCALAR_PARAM, a)) {}

// ---------------------------------------------------------------------------
// the benchmarks

static Result bench_vadd(const Config& c) {
  int n = c.n;
  auto a = units(n, 1), b = units(n, 2);
  float *da = device_copy(a), *db = device_copy(b), *dc;
  CK(cudaMalloc(&dc, n * sizeof(float)));
  auto launch = [&] { vadd<<<blocks(n, BLOCK), BLOCK>>>(da, db, dc, n); };
  double us = median_us(c, launch);
  auto got = host_copy(dc, n);
  Worst w;
  for (int i = 0; i < n; i++) w.see(got[i], a[i] + b[i], 1.0, i);
  cudaFree(da); cudaFree(db); cudaFree(dc);
  return w.result(us, 0);
}

static Result bench_saxpy(const Config& c) {
  int n = c.n;
  auto x = units(n, 3), y = units(n, 4);
  float *dx = device_copy(x), *dy = device_copy(y), *dout;
  CK(cudaMalloc(&dout, n * sizeof(float)));
  auto launch = [&] { saxpy<<<blocks(n, BLOCK), BLOCK>>>(ALPHA, dx, dy, dout, n); };
  double us = median_us(c, launch);
  auto got = host_copy(dout, n);
  Worst w;
  for (int i = 0; i < n; i++) w.see(got[i], (double)ALPHA * x[i] + y[i], ALPHA * x[i] + y[i], i);
  cudaFree(dx); cudaFree(dy); cudaFree(dout);
  return w.result(us, 1e-6);
}

static Result bench_math(const Config& c) {
  int n = c.n;
  auto x = units(n, 10);
  float *dx = device_copy(x), *dout;
  CK(cudaMalloc(&dout, n * sizeof(float)));
  auto launch = [&] { math_f32<<<blocks(n, BLOCK), BLOCK>>>(dx, dout, n); };
  double us = median_us(c, launch);
  auto got = host_copy(dout, n);
  Worst w;
  for (int i = 0; i < n; i++) {
    double v = x[i], want = std::exp(v) + std::log(v + 1) * std::sin(v) + std::cos(v) * std::tanh(v);
    w.see(got[i], want, want, i);
  }
  cudaFree(dx); cudaFree(dout);
  return w.result(us, 2e-6);
}

/** spot checks of C = A·B against a double-precision dot product */
static Result check_matmul(double us, const std::vector<float>& A, const std::vector<float>& B, const std::vector<float>& C, int n) {
  Worst w;
  for (int s = 0; s < 256; s++) {
    int y = hash32(s, 11) % n, x = hash32(s, 12) % n;
    double dot = 0, mag = 0;
    for (int k = 0; k < n; k++) dot += (double)A[y * n + k] * B[k * n + x], mag += std::fabs((double)A[y * n + k] * B[k * n + x]);
    w.see(C[y * n + x], dot, mag, (long)y * n + x);
  }
  return w.result(us, 1e-5);
}

template <class K>
static Result bench_matmul(const Config& c, K kernel) {
  int n = c.mm;
  auto A = units(n * n, 5, 0.5f), B = units(n * n, 6, 0.5f);
  float *dA = device_copy(A), *dB = device_copy(B), *dC;
  CK(cudaMalloc(&dC, (size_t)n * n * sizeof(float)));
  dim3 block(TPB, TPB), grid(blocks(n, TPB), blocks(n, TPB));
  auto launch = [&] { kernel<<<grid, block>>>(dA, dB, dC, n); };
  double us = median_us(c, launch);
  Result r = check_matmul(us, A, B, host_copy(dC, (size_t)n * n), n);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return r;
}

static Result bench_reduce(const Config& c) {
  int n = c.n;
  auto x = units(n, 8);
  float *dx = device_copy(x), *dout;
  CK(cudaMalloc(&dout, sizeof(float)));
  auto launch = [&] { reduce_sum<<<c.gs, BLOCK>>>(dx, dout, n); };
  double us = median_us(c, launch);
  CK(cudaMemset(dout, 0, sizeof(float)));
  launch();
  float got = host_copy(dout, 1)[0];
  double want = 0;
  for (int i = 0; i < n; i++) want += x[i];
  Worst w;
  w.see(got, want, want, 0);
  cudaFree(dx); cudaFree(dout);
  return w.result(us, 1e-5);
}

static Result bench_stencil(const Config& c) {
  int ny = c.st, nx = c.st;
  auto in = units(ny * nx, 7);
  float *din = device_copy(in), *dout;
  CK(cudaMalloc(&dout, (size_t)ny * nx * sizeof(float)));
  dim3 block(32, 8), grid(blocks(nx, 32), blocks(ny, 8));
  auto launch = [&] { stencil5<<<grid, block>>>(din, dout, ny, nx); };
  double us = median_us(c, launch);
  auto got = host_copy(dout, (size_t)ny * nx);
  Worst w;
  for (int y = 0; y < ny; y++) for (int x = 0; x < nx; x++) {
    int i = y * nx + x;
    bool edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    double want = edge ? in[i] : 0.2 * ((double)in[i] + in[i - nx] + in[i + nx] + in[i - 1] + in[i + 1]);
    w.see(got[i], want, std::fabs(want), i);
  }
  cudaFree(din); cudaFree(dout);
  return w.result(us, 1e-6);
}

static Result bench_histogram(const Config& c) {
  int n = c.n;
  std::vector<uint8_t> data(n);
  for (int i = 0; i < n; i++) data[i] = hash32(i, 9) >> 24;
  uint8_t* dd = device_copy(data);
  uint32_t* dbins;
  CK(cudaMalloc(&dbins, 256 * sizeof(uint32_t)));
  auto launch = [&] { histogram<<<c.gs, BLOCK>>>(dd, dbins, n); };
  double us = median_us(c, launch);
  CK(cudaMemset(dbins, 0, 256 * sizeof(uint32_t)));
  launch();
  auto got = host_copy(dbins, 256);
  std::vector<uint32_t> want(256, 0);
  for (int i = 0; i < n; i++) want[data[i]]++;
  int wrong = 0;
  for (int b = 0; b < 256; b++) wrong += got[b] != want[b];
  cudaFree(dd); cudaFree(dbins);
  return {us, wrong == 0, wrong ? std::to_string(wrong) + " of 256 bins differ" : "256 bins exact"};
}

static Result bench_transpose(const Config& c) {
  int n = c.st;
  auto a = units(n * n, 13);
  float *da = device_copy(a), *dout;
  CK(cudaMalloc(&dout, (size_t)n * n * sizeof(float)));
  dim3 block(TILE, TILE_ROWS), grid(blocks(n, TILE), blocks(n, TILE));
  auto launch = [&] { transpose<<<grid, block>>>(da, dout, n, n); };
  double us = median_us(c, launch);
  auto got = host_copy(dout, (size_t)n * n);
  Worst w;
  for (int y = 0; y < n; y++) for (int x = 0; x < n; x++) w.see(got[(size_t)x * n + y], a[(size_t)y * n + x], 1.0, (long)x * n + y);
  cudaFree(da); cudaFree(dout);
  return w.result(us, 0);
}

static Result bench_softmax(const Config& c) {
  int n = c.st;
  auto a = units(n * n, 14, 0.5f);
  for (float& v : a) v *= 8.0f;
  float *da = device_copy(a), *dout;
  CK(cudaMalloc(&dout, (size_t)n * n * sizeof(float)));
  auto launch = [&] { softmax<<<blocks(n, BLOCK / 32), BLOCK>>>(da, dout, n, n); };
  double us = median_us(c, launch);
  auto got = host_copy(dout, (size_t)n * n);
  Worst w;
  for (int y = 0; y < n; y++) {
    const float* r = &a[(size_t)y * n];
    double m = *std::max_element(r, r + n), sum = 0;
    for (int x = 0; x < n; x++) sum += std::exp(r[x] - m);
    for (int x = 0; x < n; x++) { double want = std::exp(r[x] - m) / sum; w.see(got[(size_t)y * n + x], want, want, (long)y * n + x); }
  }
  cudaFree(da); cudaFree(dout);
  return w.result(us, 1e-5);
}

static Result bench_scan(const Config& c) {
  int n = c.n;
  auto x = units(n, 15);
  float *dx = device_copy(x), *dout;
  CK(cudaMalloc(&dout, n * sizeof(float)));
  auto launch = [&] { scan_block<<<blocks(n, BLOCK), BLOCK>>>(dx, dout, n); };
  double us = median_us(c, launch);
  auto got = host_copy(dout, n);
  Worst w;
  double acc = 0;
  for (int i = 0; i < n; i++) { acc = (i % BLOCK == 0 ? 0 : acc) + x[i]; w.see(got[i], acc, acc, i); }
  cudaFree(dx); cudaFree(dout);
  return w.result(us, 1e-5);
}

static double normal_cdf(double d) {
  double k = 1 / (1 + 0.2316419 * std::fabs(d));
  double poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
  double tail = std::exp(-0.5 * d * d) * poly / std::sqrt(2 * M_PI);
  return d > 0 ? 1 - tail : tail;
}

static Result bench_black_scholes(const Config& c) {
  int n = c.n;
  auto price = units(n, 16), strike = units(n, 17), years = units(n, 18);
  for (int i = 0; i < n; i++) price[i] = 5 + 25 * price[i], strike[i] = 1 + 99 * strike[i], years[i] = 0.25f + 9.75f * years[i];
  float *dp = device_copy(price), *ds = device_copy(strike), *dy = device_copy(years), *dcall, *dput;
  CK(cudaMalloc(&dcall, n * sizeof(float)));
  CK(cudaMalloc(&dput, n * sizeof(float)));
  auto launch = [&] { black_scholes<<<blocks(n, BLOCK), BLOCK>>>(dp, ds, dy, dcall, dput, n); };
  double us = median_us(c, launch);
  auto call = host_copy(dcall, n), put = host_copy(dput, n);
  Worst w;
  const double r = RISKFREE, v = VOLATILITY;
  for (int i = 0; i < n; i++) {
    double s = price[i], x = strike[i], t = years[i], sqrtT = std::sqrt(t);
    double d1 = (std::log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrtT), d2 = d1 - v * sqrtT;
    double expRT = std::exp(-r * t), n1 = normal_cdf(d1), n2 = normal_cdf(d2);
    w.see(call[i], s * n1 - x * expRT * n2, s, i);
    w.see(put[i], x * expRT * (1 - n2) - s * (1 - n1), s, i);
  }
  cudaFree(dp); cudaFree(ds); cudaFree(dy); cudaFree(dcall); cudaFree(dput);
  return w.result(us, 1e-5);
}

static Result bench_nbody(const Config& c) {
  int n = 4 * c.mm;
  auto pos = units(4 * n, 19, 0.5f), vel = units(3 * n, 20, 0.5f);
  for (int i = 0; i < n; i++) pos[4 * i + 3] += 1.0f;
  float *dpos = device_copy(pos), *dvel = device_copy(vel);
  auto launch = [&] { nbody<<<blocks(n, BLOCK), BLOCK>>>(dpos, dvel, n); };
  double us = median_us(c, launch);
  // velocities after one step from the initial ones (the timed launches each added a step)
  CK(cudaMemcpy(dvel, vel.data(), vel.size() * sizeof(float), cudaMemcpyHostToDevice));
  launch();
  auto got = host_copy(dvel, 3 * n);
  Worst w;
  for (int i = 0; i < n; i++) {
    double a[3] = {0, 0, 0}, mag = 0;
    for (int j = 0; j < n; j++) {
      double d[3], r2 = SOFTENING2;
      for (int k = 0; k < 3; k++) d[k] = (double)pos[4 * j + k] - pos[4 * i + k], r2 += d[k] * d[k];
      double f = pos[4 * j + 3] / (r2 * std::sqrt(r2));
      for (int k = 0; k < 3; k++) a[k] += d[k] * f, mag += std::fabs(d[k] * f);
    }
    for (int k = 0; k < 3; k++) w.see(got[3 * i + k], vel[3 * i + k] + (double)DT * a[k], std::fabs(vel[3 * i + k]) + DT * mag, 3 * i + k);
  }
  cudaFree(dpos); cudaFree(dvel);
  return w.result(us, 1e-5);
}

static Result bench_saxpy_f64(const Config& c) {
  int n = c.n;
  auto xf = units(n, 21), yf = units(n, 22);
  std::vector<double> x(xf.begin(), xf.end()), y(yf.begin(), yf.end());
  double *dx = device_copy(x), *dy = device_copy(y), *dout;
  CK(cudaMalloc(&dout, n * sizeof(double)));
  auto launch = [&] { saxpy_f64<<<blocks(n, BLOCK), BLOCK>>>((double)ALPHA, dx, dy, dout, n); };
  double us = median_us(c, launch);
  auto got = host_copy(dout, n);
  Worst w;
  for (int i = 0; i < n; i++) { double want = ALPHA * x[i] + y[i]; w.see(got[i], want, want, i); }
  cudaFree(dx); cudaFree(dy); cudaFree(dout);
  return w.result(us, 1e-15);
}

// ---------------------------------------------------------------------------
// transfer bandwidth (GB/s = 1e9 bytes/s), median of 5 synchronous copies

template <class F>
static double median_gbps(size_t bytes, F copy) {
  copy();
  std::vector<double> t;
  for (int r = 0; r < 5; r++) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    copy();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(bytes / (ms * 1e-3) / 1e9);
    cudaEventDestroy(e0); cudaEventDestroy(e1);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static std::string bench_transfer(const Config& c) {
  size_t bytes = (size_t)c.mib << 20;
  void* dev;
  void* pinned;
  CK(cudaMalloc(&dev, bytes));
  CK(cudaMallocHost(&pinned, bytes));
  std::vector<char> pageable(bytes, 1);
  memset(pinned, 1, bytes);
  double rows[4] = {
    median_gbps(bytes, [&] { CK(cudaMemcpy(dev, pageable.data(), bytes, cudaMemcpyHostToDevice)); }),
    median_gbps(bytes, [&] { CK(cudaMemcpy(pageable.data(), dev, bytes, cudaMemcpyDeviceToHost)); }),
    median_gbps(bytes, [&] { CK(cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice)); }),
    median_gbps(bytes, [&] { CK(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost)); }),
  };
  cudaFree(dev);
  cudaFreeHost(pinned);
  char buf[256];
  snprintf(buf, sizeof buf, "{\"h2d_pageable\": %.3f, \"d2h_pageable\": %.3f, \"h2d_pinned\": %.3f, \"d2h_pinned\": %.3f}", rows[0], rows[1], rows[2], rows[3]);
  return buf;
}

// ---------------------------------------------------------------------------

static std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

/** host wall µs per `<<<1, 1>>>` launch: median of `rounds` rounds of `launches` launches + synchronize, after a warm-up */
template <class F>
static double launch_us(const Config& c, F launch) {
  for (int i = 0; i < c.warmup; i++) launch();
  CK(cudaDeviceSynchronize());
  std::vector<double> rounds;
  for (int r = 0; r < c.rounds; r++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < c.launches; i++) launch();
    CK(cudaDeviceSynchronize());
    rounds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / c.launches);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

static std::string bench_launch(const Config& c) {
  float* arr;
  CK(cudaMalloc(&arr, sizeof(float)));
  char buf[512];
  snprintf(buf, sizeof buf, "{\"empty\": %.3f, \"1_array\": %.3f, \"16_scalars\": %.3f, \"16_arrays\": %.3f, \"256_scalars\": %.3f}",
           launch_us(c, [&] { launch_empty<<<1, 1>>>(); }),
           launch_us(c, [&] { launch_1_array<<<1, 1>>>(arr); }),
           launch_us(c, [&] { launch_16_scalars<<<1, 1>>>(EACH16(SCALAR_ARG, a)); }),
           launch_us(c, [&] { launch_16_arrays<<<1, 1>>>(EACH16(ARRAY_ARG, a)); }),
           launch_us(c, [&] { launch_256_scalars<<<1, 1>>>(EACH256(SCALAR_ARG, a)); }));
  CK(cudaGetLastError());
  cudaFree(arr);
  return buf;
}

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    sscanf(a, "--n=%d", &c.n);
    sscanf(a, "--mm=%d", &c.mm);
    sscanf(a, "--st=%d", &c.st);
    sscanf(a, "--gs=%d", &c.gs);
    sscanf(a, "--reps=%d", &c.reps);
    sscanf(a, "--batch=%d", &c.batch);
    sscanf(a, "--mib=%d", &c.mib);
    sscanf(a, "--launches=%d", &c.launches);
    sscanf(a, "--rounds=%d", &c.rounds);
    sscanf(a, "--warmup=%d", &c.warmup);
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaFree(nullptr));

  struct Row { const char* name; Result r; };
  std::vector<Row> rows = {
    {"vadd", bench_vadd(c)},
    {"saxpy", bench_saxpy(c)},
    {"matmul_naive", bench_matmul(c, matmul_naive)},
    {"matmul_tiled", bench_matmul(c, matmul_tiled)},
    {"reduce", bench_reduce(c)},
    {"stencil", bench_stencil(c)},
    {"math_f32", bench_math(c)},
    {"histogram", bench_histogram(c)},
    {"transpose", bench_transpose(c)},
    {"softmax", bench_softmax(c)},
    {"scan", bench_scan(c)},
    {"black_scholes", bench_black_scholes(c)},
    {"nbody", bench_nbody(c)},
    {"saxpy_f64", bench_saxpy_f64(c)},
  };
  std::string transfer = bench_transfer(c);
  std::string launch = bench_launch(c);

  printf("{\"peer\": \"nvcc\", \"device\": %s, \"kernels\": {", json_string(prop.name).c_str());
  for (size_t i = 0; i < rows.size(); i++) {
    const Result& r = rows[i].r;
    printf("%s\"%s\": {\"us\": %.3f, \"ok\": %s, \"detail\": %s}", i ? ", " : "", rows[i].name, r.us, r.ok ? "true" : "false", json_string(r.detail).c_str());
  }
  printf("}, \"transfer\": %s, \"launch\": %s}\n", transfer.c_str(), launch.c_str());
  return 0;
}
