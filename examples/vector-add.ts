// Numba's vector addition (numba-cuda docs, "Examples: Vector addition"):
//
//   @cuda.jit
//   def f(a, b, c):
//       tid = cuda.grid(1)
//       size = len(c)
//       if tid < size:
//           c[tid] = a[tid] + b[tid]
//
//   d_a = cuda.to_device(a); d_b = cuda.to_device(b)
//   d_c = cuda.device_array_like(d_a)
//   f.forall(len(d_a))(d_a, d_b, d_c)
//   c = d_c.copy_to_host()
//
// Explicit device arrays: the inputs are copied once, the output stays on the
// device until copied back, and no launch moves data implicitly.

import { cuda } from "../src/index.js";
import { check, checkEqual, randomFloats, sizeArg } from "./lib/check.js";

const f = cuda.jit((a: Float32Array, b: Float32Array, c: Float32Array) => {
  const tid = cuda.grid(1);
  const size = c.length;
  if (tid < size) c[tid] = a[tid] + b[tid];
});

const n = sizeArg(100_000);
const a = randomFloats(n, 1);
const b = randomFloats(n, 2);
// float32 addition, rounded once, as the device does it
const want = a.map((x, i) => Math.fround(x + b[i]!));

const dA = cuda.toDevice(a);
const dB = cuda.toDevice(b);
const dC = cuda.deviceArrayLike(dA);
check("deviceArrayLike matches the input's shape and dtype", dC.dtype === "float32" && dC.shape.join() === `${n}`, `${dC.dtype}[${dC.shape.join(", ")}]`);

f.forall(n)(dA, dB, dC);
const c = dC.copyToHost(new Float32Array(n));
checkEqual(`f.forall(${n}) on device arrays, copied back: c = a + b in float32`, c, want);

// the same kernel with an explicit configuration, writing into a fresh output
const dC2 = cuda.deviceArray(n, "float32");
const threadsPerBlock = 256;
f.configure(Math.ceil(n / threadsPerBlock), threadsPerBlock)(dA, dB, dC2);
checkEqual(`f[${Math.ceil(n / threadsPerBlock)}, ${threadsPerBlock}] into cuda.deviceArray(n, "float32")`, dC2.copyToHost(new Float32Array(n)), want);

// device arrays stay on the device: the host inputs are untouched, and updating
// one on the device changes the next result
dA.copyToDevice(b);
f.forall(n)(dA, dB, dC);
checkEqual("after dA.copyToDevice(b), c = b + b", dC.copyToHost(new Float32Array(n)), b.map((x) => Math.fround(2 * x)));
checkEqual("the host array a was not modified", a, randomFloats(n, 1));

for (const d of [dA, dB, dC, dC2]) d.free();
