// DeviceArrays in env on the cuda target (`npm run test:gpu`, or the emulated GPU of `npm run test:emu`):
// the cases against their host references and the simulator's bits, launches that see the array as it
// is then and write into it (general and fast path), and a freed env array refused. Skips without a GPU.

import assert from "node:assert/strict";
import { test } from "node:test";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { cuda, float32, LaunchError } from "../../src/index.js";
import { envArrayCases } from "../cases/env-arrays.js";
import { runCase } from "../helpers/crosscheck.js";

process.env.NUMBATS_TARGET = "cuda";
const probe = probeCuda();
const skip = probe.ok ? false : `no GPU: ${probe.reason}`;

declare const table: Float32Array;

for (const c of skip ? [] : envArrayCases()) test(`GPU: ${c.name}`, () => runCase(c));

test("GPU: each launch reads the env array as it is then and writes into it; a freed one is a LaunchError", { skip }, () => {
  const d = cuda.toDevice(Float32Array.from([1, 2, 3, 4]));
  const k = cuda.jit((o: Float32Array) => {
    const i = cuda.grid(1);
    if (i < o.length) { o[i] = table[i] * 2; table[i] += 1; }
  }, { env: { table: d } });
  const launch = k.configure(1, 4);
  const o = cuda.deviceArray(4, float32);
  launch(o);
  assert.deepEqual(Array.from(o.copyToHost()), [2, 4, 6, 8]);
  d.copyToDevice(Float32Array.from([10, 20, 30, 40]));
  launch(o); // the fast path
  assert.deepEqual(Array.from(o.copyToHost()), [20, 40, 60, 80]);
  assert.deepEqual(Array.from(d.copyToHost()), [11, 21, 31, 41]);
  d.free();
  assert.throws(() => launch(o), (e: unknown) => e instanceof LaunchError && /env array 'table'.*was freed/.test(e.message));
  o.free();
});
