// Numba's first kernel (numba-cuda docs, "Writing CUDA Kernels"):
//
//   @cuda.jit
//   def increment_by_one(an_array):
//       pos = cuda.grid(1)
//       if pos < an_array.size:
//           an_array[pos] += 1
//
// launched as increment_by_one[blockspergrid, threadsperblock](an_array) on a
// host array, which Numba copies to the device and back.

import { cuda } from "../src/index.js";
import { check, checkEqual, sizeArg } from "./lib/check.js";

const incrementByOne = cuda.jit((anArray: Float32Array) => {
  const pos = cuda.grid(1);
  if (pos < anArray.length) anArray[pos] += 1;
});

// the README's first program, verbatim
const a = new Float32Array([3, 5, 9, 13, 7, 2, 4, 1]);
incrementByOne.configure(2, 4)(a);
checkEqual("increment_by_one[2, 4] on the README's 8 elements", a, [4, 6, 10, 14, 8, 3, 5, 2]);

// a larger array whose length is not a multiple of the block: the guard matters
const n = sizeArg(100_003);
const threadsPerBlock = 128;
const blocksPerGrid = Math.ceil(n / threadsPerBlock);
const big = Float32Array.from({ length: n }, (_, i) => i * 0.5);
incrementByOne.configure(blocksPerGrid, threadsPerBlock)(big);
checkEqual(`increment_by_one[${blocksPerGrid}, ${threadsPerBlock}] on ${n} elements`, big, Float32Array.from({ length: n }, (_, i) => i * 0.5 + 1));

// a second launch reuses the compiled specialisation
incrementByOne.configure(blocksPerGrid, threadsPerBlock)(big);
check("a second launch adds one again, with one compiled signature", big[n - 1] === (n - 1) * 0.5 + 2 && incrementByOne.signatures.length === 1, incrementByOne.signatures.join("; "));
