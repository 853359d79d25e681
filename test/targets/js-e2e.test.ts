// A real kernel through the front end (compileToIR) and the JS target.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { arrayType } from "../../src/dtypes.js";
import type { ArrayArg } from "../../src/abi/backend.js";

// the kernel's `cuda` is resolved by name by the front end; this stub only satisfies TypeScript
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const cuda: any = {};

const arg = (name: string, a: Float32Array): ArrayArg => ({
  kind: "array", name, dtype: "float32", byteOffset: 0, shape: [a.length], strides: [1],
  buffer: { kind: "sim", bytes: a.buffer, byteOffset: 0, byteLength: a.byteLength, freed: false },
});

test("front end + simulator: reverse through shared memory after a fused a*2+1", () => {
  const fn = (a: Float32Array, out: Float32Array) => {
    const s = cuda.shared.array(64, "float32");
    const t = cuda.threadIdx.x;
    s[t] = a[cuda.grid(1)] * 2.0 + 1.0;
    cuda.syncthreads();
    out[cuda.grid(1)] = s[63 - t];
  };
  const k = compileSim(compileToIR(fn, [arrayType("float32", 1, "C"), arrayType("float32", 1, "C")]));
  const A = Float32Array.from({ length: 128 }, (_, i) => i * 0.1), O = new Float32Array(128);
  k.launch({ grid: [2, 1, 1], block: [64, 1, 1], sharedMemBytes: 0 }, [arg("a", A), arg("out", O)],
    { synchronize() {}, done: async () => {}, isDefault: true }, false);
  for (let i = 0; i < 128; i++) {
    const src = i - (i % 64) + 63 - (i % 64);
    assert.equal(O[i], Math.fround(A[src]! * 2 + 1), `out[${i}]`);
  }
});
