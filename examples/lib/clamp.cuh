// Included by smoothstep.cu: a .cu file's own folder is searched for its #includes.
#pragma once

__device__ inline float clamp01(float t) { return fminf(fmaxf(t, 0.0f), 1.0f); }
