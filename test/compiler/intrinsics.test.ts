// The intrinsic table (src/compiler/intrinsics.ts) and the kernel features derived from it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { compileToIR } from "../../src/compiler/index.js";
import { INTRINSICS, featuresOf, isRendezvous } from "../../src/compiler/intrinsics.js";
import type { Features, IntrinsicName } from "../../src/compiler/ir.js";
import { arrayType, type Type } from "../../src/dtypes.js";
import { cuda, float32 } from "../../src/index.js";

const f32: Type = arrayType("float32", 1, "C");
const NONE: Features = { barriers: false, warp: false, gridSync: false, dynamicShared: false, print: false };

test("features: derived from what the kernel and the device functions it calls use", () => {
  const cases: [string, Function, Partial<Features>][] = [
    ["plain", (a: Float32Array) => { a[0] = 1; }, {}],
    ["syncthreads", (a: Float32Array) => { a[0] = 1; cuda.syncthreads(); }, { barriers: true }],
    ["a reducing barrier", (a: Float32Array) => { a[0] = cuda.syncthreadsCount(a[1] > 0); }, { barriers: true }],
    ["a shuffle", (a: Float32Array) => { a[0] = cuda.shflDownSync(0xffffffff, a[0], 1); }, { warp: true }],
    ["grid sync", (a: Float32Array) => { a[0] = 1; cuda.cg.thisGrid().sync(); }, { barriers: true, gridSync: true }],
    ["console.log", (a: Float32Array) => { console.log("x", a[0]); }, { print: true }],
    ["a fence", (a: Float32Array) => { a[0] = 1; cuda.threadfence(); }, {}],
    ["dynamic shared memory", (a: Float32Array) => { const s = cuda.shared.array(0, float32); s[0] = a[0]; }, { dynamicShared: true }],
    ["static shared memory", (a: Float32Array) => { const s = cuda.shared.array(4, float32); s[0] = a[0]; }, {}],
  ];
  for (const [what, fn, expected] of cases) {
    assert.deepEqual(compileToIR(fn, [f32]).features, { ...NONE, ...expected }, what);
  }
});

test("features: a device function's barrier counts, even where inlining prunes the call's branch", () => {
  const sync = cuda.jit((on: number) => { if (on === 1) cuda.syncthreads(); }, { device: true });
  const k = (a: Float32Array) => { a[0] = 1; sync(0); };
  const ir = compileToIR(k, [f32], { env: { sync } });
  // the pruned call leaves no syncthreads in the kernel, but the lowered kernel used one (as nvcc would see it)
  assert.equal(ir.features.barriers, true);
  assert.deepEqual(featuresOf(ir), NONE, "the inlined body alone has none");
});

test("the intrinsic table: effects agree with the flags and the rendezvous the targets rely on", () => {
  const names = Object.keys(INTRINSICS) as IntrinsicName[];
  const withEffect = (effect: string) => names.filter((n) => INTRINSICS[n].effect === effect).sort();
  assert.deepEqual(withEffect("barrier"), ["syncthreads", "syncthreadsAnd", "syncthreadsCount", "syncthreadsOr"]);
  assert.deepEqual(withEffect("grid"), ["gridSync"]);
  assert.deepEqual(withEffect("order"), ["nanosleep", "threadfence", "threadfenceBlock", "threadfenceSystem"]);
  assert.deepEqual(names.filter((n) => INTRINSICS[n].reduction).sort(), ["syncthreadsAnd", "syncthreadsCount", "syncthreadsOr"]);
  assert.equal(isRendezvous("ballotSync"), true);
  assert.equal(isRendezvous("lanemaskLt"), false);
  const stringArgs = Object.fromEntries(names.filter((n) => INTRINSICS[n].stringArg !== undefined).map((n) => [n, INTRINSICS[n].stringArg]));
  assert.deepEqual(stringArgs, { print: 0, cstring: 0, assert: 1, throw: 0 });
  assert.equal(INTRINSICS.gridSync.spelling, "cuda.cg.thisGrid().sync()");
  assert.deepEqual(INTRINSICS.nanosleep.ptx, { ptx: "6.3", cc: [7, 0] });
});
