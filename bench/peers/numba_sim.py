"""Numba's CUDA simulator peer for bench/sim.ts.

Run with NUMBA_ENABLE_CUDASIM=1. Times the warm launch (the second call) of
each kernel with time.perf_counter and prints one JSON object on stdout:
{"numba": version, "vadd_ms": ..., "matmul_ms": ..., "checks": {...}}.
"""
import json
import os
import sys
import time

import numpy as np
from numba import cuda, float32
import numba

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    sys.exit("run with NUMBA_ENABLE_CUDASIM=1")

VADD_N = 16384
VADD_BLOCK = 256
TPB = 16
MATMUL_N = 64


@cuda.jit
def vadd(a, b, c):
    i = cuda.grid(1)
    if i < c.shape[0]:
        c[i] = a[i] + b[i]


# Numba's documentation: "Matrix multiplication", the shared-memory version
@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def warm_ms(launch):
    launch()  # first call: compile / set up
    t = time.perf_counter()
    launch()
    return (time.perf_counter() - t) * 1e3


def main():
    a = np.arange(VADD_N, dtype=np.float32)
    b = np.full(VADD_N, 0.5, dtype=np.float32)
    c = np.zeros(VADD_N, dtype=np.float32)
    vadd_ms = warm_ms(lambda: vadd[VADD_N // VADD_BLOCK, VADD_BLOCK](a, b, c))

    A = (np.arange(MATMUL_N * MATMUL_N, dtype=np.float32) % 7).reshape(MATMUL_N, MATMUL_N)
    B = (np.arange(MATMUL_N * MATMUL_N, dtype=np.float32) % 5).reshape(MATMUL_N, MATMUL_N)
    C = np.zeros((MATMUL_N, MATMUL_N), dtype=np.float32)
    blocks = (MATMUL_N + TPB - 1) // TPB
    matmul_ms = warm_ms(lambda: fast_matmul[(blocks, blocks), (TPB, TPB)](A, B, C))

    print(json.dumps({
        "numba": numba.__version__,
        "vadd_ms": vadd_ms,
        "matmul_ms": matmul_ms,
        "checks": {"vadd": bool(np.array_equal(c, a + b)), "matmul": bool(np.array_equal(C, A @ B))},
    }))


main()
