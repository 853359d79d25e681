// cuda.random's xoroshiro128pUniformFloat32 without float64 (so that it compiles to WGSL): float32 of the
// 53-bit draw times float32 2^-53 must give the bits of the float64 formula rounded once,
// fround(float64(next >> 11) * 2^-53), on the simulator and as host JavaScript, over many states. The
// WebGPU runs of the draws against the simulator are in wgsl-semantics.test.ts.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cuda } from "../../src/index.js";
import { initXoroshiro128pStates, xoroshiro128pNext, type Xoroshiro128pState } from "../../src/random.js";
import { xoroshiro128pUniformFloat32 } from "../../src/mathlib/random.js";

const GENERATORS = 4096, DRAWS = 64;

/** the next draw of generator i by the float64 formula, rounded once to float32 (advances `states`) */
function reference(states: BigUint64Array, i: number): number {
  const s: Xoroshiro128pState = [states[2 * i]!, states[2 * i + 1]!];
  const m = xoroshiro128pNext(s) >> 11n;
  [states[2 * i], states[2 * i + 1]] = s;
  return Math.fround(Number(m) * 2 ** -53);
}

test("xoroshiro128pUniformFloat32 (a float32 product) equals the float64 draw rounded once, on the simulator and on the host", () => {
  cuda.useTarget("sim");
  const states = new BigUint64Array(2 * GENERATORS);
  initXoroshiro128pStates(states, 2026);
  const host = states.slice(), ref = states.slice();
  const draws = new Float32Array(GENERATORS * DRAWS);
  const k = cuda.jit((st: BigUint64Array, out: Float32Array, n: number) => {
    const i = cuda.grid(1);
    if (i < st.length >> 1) for (let d = 0; d < n; d++) out[i * n + d] = cuda.random.xoroshiro128pUniformFloat32(st, i);
  });
  k.configure(GENERATORS / 128, 128)(states, draws, DRAWS);
  cuda.synchronize();
  let mismatches = 0;
  for (let i = 0; i < GENERATORS; i++) {
    for (let d = 0; d < DRAWS; d++) {
      const want = reference(ref, i);
      if (!Object.is(draws[i * DRAWS + d], want) || !Object.is(xoroshiro128pUniformFloat32(host, i), want)) mismatches++;
    }
  }
  assert.equal(mismatches, 0, `${mismatches} of ${GENERATORS * DRAWS} draws differ`);
  assert.deepEqual(states, ref, "the kernel's states advanced as the reference's");
  // the draws near the rounding edges (m * 2^-53 rounds up to 1.0 from 2^53 - 2^28 on), where a random state rarely lands
  const top = (1n << 53n) - 1n;
  for (const m of [top, top - (1n << 28n), top - (1n << 28n) - 1n, (1n << 52n) + 1n, (1n << 24n) + 1n, 1n, 0n]) {
    assert.equal(Math.fround(Number(m)) * 2 ** -53, Math.fround(Number(m) * 2 ** -53), `m = ${m}`);
  }
});
