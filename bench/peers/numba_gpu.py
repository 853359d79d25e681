#!/usr/bin/env python3
"""The Numba-CUDA peer of bench/gpu.ts.

The same kernels, launch geometry, input data (an integer hash of the index)
and timing method as bench/gpu.ts and gpu_kernels.cu: a warm-up batch, then
CUDA events around a batch of launches, median of the repetitions. Each result
is checked on the host, so a wrong kernel cannot look fast. Launch overhead
mirrors NVIDIA/numba-cuda-mlir tests/benchmarks/launch_latency_ubench (eager
signatures, float32 scalars, float32[::1] arrays, grid 1, block 1; host wall
time per launch with a synchronize at the end); numba-cuda-mlir is measured
too when it is installed. Prints one JSON object on stdout.

Flags (sizes chosen by bench/gpu.ts): --n --mm --st --gs --reps --batch --mib
--launches --rounds --warmup. Runs under NUMBA_ENABLE_CUDASIM=1 at tiny sizes.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings

import numpy as np

# NumPy 2.5 removed aliases that some numba releases still look up at import time
for _old, _new in (("row_stack", "vstack"), ("trapz", "trapezoid"), ("in1d", "isin")):
    if not hasattr(np, _old) and hasattr(np, _new):
        setattr(np, _old, getattr(np, _new))

from numba import cuda, float32, uint32  # noqa: E402

warnings.filterwarnings("ignore")

TPB = 16
BLOCK = 256
ALPHA = np.float32(2.5)
FIFTH = np.float32(0.2)
ONE = np.float32(1)


# ---------------------------------------------------------------------------
# input data: identical formulas in bench/gpu.ts and gpu_kernels.cu

def hash32(n, seed):
    return (((np.arange(n, dtype=np.uint64) + seed) * 2654435761) & 0xFFFFFFFF).astype(np.uint32)


def units(n, seed, shift=0.0):
    return (hash32(n, seed) >> 8).astype(np.float32) * np.float32(1.0 / 16777216) - np.float32(shift)


# ---------------------------------------------------------------------------
# kernels

# Eager signatures: the compiled kernels, as numba-cuda users launch them on a hot path.
# (Defined at module level: the simulator rebinds the module-global `cuda` inside kernels.)


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def vadd(a, b, c):
    i = cuda.grid(1)
    if i < c.shape[0]:
        c[i] = a[i] + b[i]


@cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")
def saxpy(alpha, x, y, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = alpha * x[i] + y[i]


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
def matmul_naive(A, B, C):
    x, y = cuda.grid(2)
    if y < C.shape[0] and x < C.shape[1]:
        tmp = float32(0.0)
        for k in range(A.shape[1]):
            tmp += A[y, k] * B[k, x]
        C[y, x] = tmp


# Numba's documented fast_matmul
@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
def matmul_tiled(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.0)
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


@cuda.jit("void(float32[::1], float32[::1])")
def reduce_sum(x, out):
    s = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    acc = float32(0.0)
    for i in range(cuda.blockIdx.x * BLOCK + t, x.shape[0], cuda.gridDim.x * BLOCK):
        acc += x[i]
    s[t] = acc
    cuda.syncthreads()
    k = BLOCK // 2
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def stencil(a, out):
    x, y = cuda.grid(2)
    ny, nx = a.shape
    if x < nx and y < ny:
        if x == 0 or y == 0 or x == nx - 1 or y == ny - 1:
            out[y, x] = a[y, x]
        else:
            out[y, x] = FIFTH * (a[y, x] + a[y - 1, x] + a[y + 1, x] + a[y, x - 1] + a[y, x + 1])


@cuda.jit("void(uint8[::1], uint32[::1])")
def histogram(data, bins):
    s = cuda.shared.array(256, uint32)
    t = cuda.threadIdx.x
    s[t] = 0
    cuda.syncthreads()
    for i in range(cuda.blockIdx.x * BLOCK + t, data.shape[0], cuda.gridDim.x * BLOCK):
        cuda.atomic.add(s, data[i], 1)
    cuda.syncthreads()
    cuda.atomic.add(bins, t, s[t])


@cuda.jit("void(float32[::1], float32[::1])")
def math_f32(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        v = x[i]
        out[i] = math.exp(v) + math.log(v + ONE) * math.sin(v) + math.cos(v) * math.tanh(v)


KERNELS = {"vadd": vadd, "saxpy": saxpy, "matmul_naive": matmul_naive, "matmul_tiled": matmul_tiled,
           "reduce_sum": reduce_sum, "stencil": stencil, "histogram": histogram, "math_f32": math_f32}


# ---------------------------------------------------------------------------
# timing and checking

def median_us(cuda, cfg, launch):
    for _ in range(cfg.batch):
        launch()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(cfg.reps):
        start.record()
        for _ in range(cfg.batch):
            launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / cfg.batch)
    return statistics.median(times)


def result(us, err, where, tol):
    return {"us": us, "ok": bool(err <= tol), "detail": f"max rel err {err:.2e}{where} (tol {tol:.0e})"}


def worst(got, want, scale):
    rel = np.abs(got.astype(np.float64) - want) / (np.abs(scale) + 1e-30)
    i = int(np.argmax(rel))
    return float(rel.flat[i]), f" at {i}"


def blocks(n, per):
    return (n + per - 1) // per


def bench_kernels(cuda, cfg):
    k = KERNELS
    n, mm, st = cfg.n, cfg.mm, cfg.st
    out = {}

    a, b = units(n, 1), units(n, 2)
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array(n, np.float32)
    us = median_us(cuda, cfg, lambda: k["vadd"][blocks(n, BLOCK), BLOCK](da, db, dc))
    out["vadd"] = result(us, *worst(dc.copy_to_host(), (a + b).astype(np.float64), 1.0), 0)

    x, y = units(n, 3), units(n, 4)
    dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.float32)
    us = median_us(cuda, cfg, lambda: k["saxpy"][blocks(n, BLOCK), BLOCK](ALPHA, dx, dy, dout))
    want = float(ALPHA) * x.astype(np.float64) + y
    out["saxpy"] = result(us, *worst(dout.copy_to_host(), want, want), 1e-6)

    A, B = units(mm * mm, 5, 0.5).reshape(mm, mm), units(mm * mm, 6, 0.5).reshape(mm, mm)
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.device_array((mm, mm), np.float32)
    grid2 = (blocks(mm, TPB), blocks(mm, TPB))
    ys, xs = hash32(256, 11) % mm, hash32(256, 12) % mm
    prods = A[ys, :].astype(np.float64) * B[:, xs].T
    for name in ("matmul_naive", "matmul_tiled"):
        us = median_us(cuda, cfg, lambda: k[name][grid2, (TPB, TPB)](dA, dB, dC))
        got = dC.copy_to_host()[ys, xs]
        out[name] = result(us, *worst(got, prods.sum(axis=1), np.abs(prods).sum(axis=1)), 1e-5)

    r = units(n, 8)
    dr, dsum = cuda.to_device(r), cuda.device_array(1, np.float32)
    launch = lambda: k["reduce_sum"][cfg.gs, BLOCK](dr, dsum)  # noqa: E731
    us = median_us(cuda, cfg, launch)
    dsum.copy_to_device(np.zeros(1, np.float32))
    launch()
    total = r.astype(np.float64).sum()
    out["reduce"] = result(us, *worst(dsum.copy_to_host(), total, total), 1e-5)

    sum_reduce = cuda.reduce(lambda p, q: p + q)
    us = median_us(cuda, cfg, lambda: sum_reduce(dr, res=dsum))
    out["reduce_builtin"] = result(us, *worst(dsum.copy_to_host(), total, total), 1e-5)

    s = units(st * st, 7).reshape(st, st)
    ds, dso = cuda.to_device(s), cuda.device_array((st, st), np.float32)
    us = median_us(cuda, cfg, lambda: k["stencil"][(blocks(st, 32), blocks(st, 8)), (32, 8)](ds, dso))
    w = s.astype(np.float64).copy()
    w[1:-1, 1:-1] = 0.2 * (w[1:-1, 1:-1] + w[:-2, 1:-1] + w[2:, 1:-1] + w[1:-1, :-2] + w[1:-1, 2:])
    out["stencil"] = result(us, *worst(dso.copy_to_host(), w, w), 1e-6)

    m = units(n, 10)
    dm, dmo = cuda.to_device(m), cuda.device_array(n, np.float32)
    us = median_us(cuda, cfg, lambda: k["math_f32"][blocks(n, BLOCK), BLOCK](dm, dmo))
    v = m.astype(np.float64)
    want = np.exp(v) + np.log(v + 1) * np.sin(v) + np.cos(v) * np.tanh(v)
    out["math_f32"] = result(us, *worst(dmo.copy_to_host(), want, want), 2e-6)

    data = (hash32(n, 9) >> 24).astype(np.uint8)
    dd, dbins = cuda.to_device(data), cuda.device_array(256, np.uint32)
    launch = lambda: k["histogram"][cfg.gs, BLOCK](dd, dbins)  # noqa: E731
    us = median_us(cuda, cfg, launch)
    dbins.copy_to_device(np.zeros(256, np.uint32))
    launch()
    wrong = int((dbins.copy_to_host() != np.bincount(data, minlength=256)).sum())
    out["histogram"] = {"us": us, "ok": wrong == 0, "detail": f"{wrong} of 256 bins differ" if wrong else "256 bins exact"}
    return out


# ---------------------------------------------------------------------------
# launch overhead, as numba-cuda-mlir's launch_latency_ubench

def launch_kernels(cuda):
    def many(n, typ, args):
        params = ", ".join(f"a{i}" for i in range(n))
        ns = {}
        exec(f"def kernel({params}):\n    pass\n", ns)  # noqa: S102
        return cuda.jit("void(" + ", ".join([typ] * n) + ")")(ns["kernel"])[1, 1], args

    @cuda.jit("void()")
    def empty():
        pass

    @cuda.jit("void(float32[::1])")
    def one_array(arr):
        pass

    arrays = lambda n: tuple(cuda.device_array(1, dtype=np.float32) for _ in range(n))  # noqa: E731
    scalars = lambda n: tuple(np.float32(i) for i in range(n))  # noqa: E731
    return {
        "empty": (empty[1, 1], ()),
        "1_array": (one_array[1, 1], arrays(1)),
        "16_scalars": many(16, "float32", scalars(16)),
        "16_arrays": many(16, "float32[::1]", arrays(16)),
        "256_scalars": many(256, "float32", scalars(256)),
    }


def bench_launch(cuda, cfg):
    out = {}
    for name, (kernel, args) in launch_kernels(cuda).items():
        for _ in range(cfg.warmup):
            kernel(*args)
        cuda.synchronize()
        rounds = []
        for _ in range(cfg.rounds):
            t0 = time.perf_counter()
            for _ in range(cfg.launches):
                kernel(*args)
            cuda.synchronize()
            rounds.append((time.perf_counter() - t0) / cfg.launches * 1e6)
        out[name] = statistics.median(rounds)
    return out


# ---------------------------------------------------------------------------
# transfer bandwidth (GB/s = 1e9 bytes/s), median of 5 synchronous copies

def bench_transfer(cuda, cfg):
    nbytes = cfg.mib << 20
    dev = cuda.device_array(nbytes, np.uint8)
    pageable = np.ones(nbytes, np.uint8)
    pinned = cuda.pinned_array(nbytes, np.uint8)
    pinned[:] = 1

    def gbps(copy):
        copy()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            copy()
            cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return nbytes / statistics.median(times) / 1e9

    return {
        "h2d_pageable": gbps(lambda: dev.copy_to_device(pageable)),
        "d2h_pageable": gbps(lambda: dev.copy_to_host(pageable)),
        "h2d_pinned": gbps(lambda: dev.copy_to_device(pinned)),
        "d2h_pinned": gbps(lambda: dev.copy_to_host(pinned)),
    }


# ---------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser()
    for flag, default in [("n", 1 << 24), ("mm", 1024), ("st", 4096), ("gs", 1024), ("reps", 25), ("batch", 10),
                          ("mib", 256), ("launches", 2000), ("rounds", 5), ("warmup", 500)]:
        p.add_argument(f"--{flag}", type=int, default=default)
    cfg = p.parse_args()

    import numba

    report = {"peer": "numba", "numba": numba.__version__, "simulator": os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"}
    try:
        import numba_cuda
        report["numba_cuda"] = numba_cuda.__version__
    except Exception:  # noqa: BLE001 (numba-cuda is optional: older numba has the built-in target)
        pass
    name = cuda.get_current_device().name if hasattr(cuda, "get_current_device") else "Numba CUDA simulator"
    report["device"] = name.decode() if isinstance(name, bytes) else name
    report["kernels"] = bench_kernels(cuda, cfg)
    report["launch"] = bench_launch(cuda, cfg)
    report["transfer"] = bench_transfer(cuda, cfg)
    try:
        from numba_cuda_mlir import cuda as mlir_cuda
    except Exception as e:  # noqa: BLE001
        report["launch_mlir_missing"] = f"numba_cuda_mlir not importable: {type(e).__name__}: {e}"
    else:
        report["launch_mlir"] = bench_launch(mlir_cuda, cfg)
    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    main()
