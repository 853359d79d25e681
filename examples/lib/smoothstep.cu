// CUDA C++ device code that a numbats kernel calls (examples/link-cuda-cpp.ts). numbats compiles it at
// run time with NVRTC and links it into the kernel; nothing here is numbats-specific.
//
// extern "C": the symbol is the plain name, which cuda.declareDevice("smoothstep", …) declares.
// The _rn intrinsics round each step on its own (no contraction into fused multiply-adds), so the
// JavaScript stand-in the simulator runs gives the same bits.

#include "clamp.cuh"

extern "C" __device__ float smoothstep(float edge0, float edge1, float x) {
  float t = clamp01(__fdiv_rn(__fsub_rn(x, edge0), __fsub_rn(edge1, edge0)));
  return __fmul_rn(__fmul_rn(t, t), __fsub_rn(3.0f, __fmul_rn(2.0f, t)));
}

// scales a row in place: an array argument arrives as a pointer to its first element
extern "C" __device__ void scale_row(float *row, int n, float by) {
  for (int i = 0; i < n; i++) row[i] = __fmul_rn(row[i], by);
}
