import assert from "node:assert/strict";
import { test } from "node:test";
import { toDevice } from "../../src/runtime/devicearray.js";
import { SIM_DEVICE, createSimBackend, wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";
import { createEvent, createStream, defaultStream, eventElapsedTime } from "../../src/runtime/streams.js";

const sim = createSimBackend();

test("describes itself as a compute capability 8.0 device with limits every such GPU meets", () => {
  assert.equal(sim.name, "sim");
  assert.equal(sim.device.name, "numbats simulator");
  assert.deepEqual(sim.device.computeCapability, [8, 0]);
  assert.equal(SIM_DEVICE.limits.maxThreadsPerBlock, 1024);
  assert.deepEqual(SIM_DEVICE.limits.maxBlockDim, [1024, 1024, 64]);
  assert.deepEqual(SIM_DEVICE.limits.maxGridDim, [2 ** 31 - 1, 65535, 65535]);
  assert.equal(SIM_DEVICE.limits.maxSharedPerBlock, 49152);
  assert.equal(SIM_DEVICE.limits.maxSharedPerBlockOptin, 99 * 1024);
  assert.equal(SIM_DEVICE.limits.warpSize, 32);
  const m = sim.memoryInfo();
  assert.ok(m.free > 0 && m.free <= m.total);
});

test("copies are bounds-checked memcpy; freed buffers refuse use", () => {
  const buf = sim.alloc(16);
  sim.copyToDevice(buf, 4, new Uint8Array([1, 2, 3]));
  const out = new Uint8Array(8);
  sim.copyToHost(out, buf, 0);
  assert.deepEqual([...out], [0, 0, 0, 0, 1, 2, 3, 0]);
  // overlapping device-to-device copy within one buffer
  sim.copyDeviceToDevice(buf, 5, buf, 4, 3);
  sim.copyToHost(out, buf, 0);
  assert.deepEqual([...out], [0, 0, 0, 0, 1, 1, 2, 3]);
  assert.throws(() => sim.copyToDevice(buf, 14, new Uint8Array(4)), /outside a device buffer of 16 bytes/);
  sim.free(buf);
  assert.throws(() => sim.copyToHost(out, buf, 0), /freed/);
});

test("wrapHostArray shares the host bytes without copying", () => {
  const host = new Float32Array([1, 2, 3, 4]);
  const buf = wrapHostArray(host.subarray(1));
  assert.equal(buf.byteLength, 12);
  const out = new Float32Array(3);
  sim.copyToHost(out, buf, 0);
  assert.deepEqual([...out], [2, 3, 4]);
  sim.copyToDevice(buf, 4, new Float32Array([9]));
  assert.equal(host[2], 9);
});

test("streams run work in order and are complete at once", async () => {
  const s = createStream(sim);
  assert.equal(s.isDefault, false);
  assert.equal(defaultStream(sim).isDefault, true);
  const d = toDevice(new Int32Array([1, 2, 3]), s, sim);
  d.copyToDevice(new Int32Array([4, 5, 6]), s);
  const out = new Int32Array(3);
  d.copyToHost(out, s);
  s.synchronize();
  await s.done();
  assert.deepEqual([...out], [4, 5, 6]);
});

test("events: record, query, elapsed time is non-negative and ordered", async () => {
  const start = createEvent(sim);
  const mid = createEvent(sim);
  const end = createEvent(sim);
  const s = createStream(sim);
  start.record(s);
  await new Promise((r) => setTimeout(r, 5));
  mid.record(s);
  end.record();
  end.synchronize();
  assert.equal(end.query(), true);
  const total = eventElapsedTime(start, end);
  assert.ok(eventElapsedTime(start, mid) > 0); // a timer ran in between
  assert.ok(total >= eventElapsedTime(start, mid));
  assert.ok(eventElapsedTime(mid, end) >= 0);
  assert.throws(() => eventElapsedTime(createEvent(sim), end), /never recorded/);
});
