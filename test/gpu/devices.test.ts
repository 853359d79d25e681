// Devices, copies between them, IPC between processes and NCCL on real GPUs (npm run test:gpu; the
// emulated GPU of npm run test:emu runs what it supports). Each part skips, saying why, where the
// machine lacks what it needs: a GPU, a second GPU, the driver's IPC calls, the NCCL library.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { cudaDriver } from "../../src/backends/cuda/driver/driver.js";
import { openNccl } from "../../src/backends/cuda/driver/nccl.js";
import { cuda, LaunchError } from "../../src/index.js";
import { scaleAdd } from "../fixtures/multi-device/kernels.js";
import { checkRankResults } from "../helpers/nccl-reference.js";

const root = new URL("../..", import.meta.url).pathname;
const probe = probeCuda();
const noGpu = probe.ok ? false : `no usable GPU: ${probe.reason.split("\n")[0]}`;
const gpus = probe.ok ? probe.devices.length : 0;
const noPeer = noGpu || (gpus < 2 ? `one GPU (${probe.ok ? probe.devices[0]!.name : ""}): copies between devices need two` : false);
const driver = cudaDriver();
const noIpc = noGpu || (driver.ok && driver.driver.missing.includes("cuIpcGetMemHandle") ? `the driver at ${driver.driver.path} has no CUDA IPC (cuIpcGetMemHandle)` : false);
const noNccl = noGpu || (() => {
  try {
    openNccl();
    return false;
  } catch (e) {
    return `NCCL is not installed: ${(e as Error).message.split("\n")[0]}`;
  }
})();
const env = { ...process.env, NUMBATS_TARGET: "cuda" };

test("every device is listed, selectable, and keeps its arrays across selectDevice", { skip: noGpu }, () => {
  assert.deepEqual(cuda.gpus.map((d) => d.id), Array.from({ length: gpus }, (_, i) => i));
  const last = gpus - 1;
  cuda.selectDevice(last);
  const a = cuda.toDevice(Float32Array.from([1, 2, 3, 4]));
  assert.equal(a.device.id, last);
  cuda.selectDevice(0);
  cuda.selectDevice(last);
  scaleAdd.configure(1, 32)(a, 2);
  assert.deepEqual(Array.from(a.copyToHost()), [2, 5, 8, 11]);
  const b = cuda.deviceArrayLike(a);
  b.copyFrom(a);
  assert.deepEqual(Array.from(b.copyToHost()), [2, 5, 8, 11]);
  cuda.selectDevice(0);
});

test("two GPUs: peer copies both ways, and a launch with the other device's array is a LaunchError", { skip: noPeer }, () => {
  cuda.selectDevice(1);
  const n = 1 << 20;
  const host = Float32Array.from({ length: n }, (_, i) => i % 1000);
  const a = cuda.toDevice(host);
  cuda.selectDevice(0);
  const b = cuda.deviceArray(n, "float32");
  const s = cuda.stream();
  b.copyFrom(a, s);
  s.synchronize();
  assert.deepEqual(b.copyToHost(), host);
  scaleAdd.configure(n / 256, 256)(b, 2);
  cuda.selectDevice(1);
  a.copyFrom(b);
  assert.deepEqual(a.copyToHost(), Float32Array.from(host, (v, i) => Math.fround(Math.fround(v * 2) + i)));
  assert.throws(() => scaleAdd.configure(n / 256, 256)(b, 2), (e: unknown) => e instanceof LaunchError && /device 0 .* launches on device 1/.test(e.message));
  cuda.selectDevice(0);
});

test("IPC between two processes: the other process reads a view and its kernel's writes are seen here", { skip: noIpc, timeout: 120_000 }, async () => {
  const owner = spawn(process.execPath, ["--import", "tsx", "test/fixtures/multi-device/ipc-owner.ts"], { cwd: root, env, stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  owner.stdout.setEncoding("utf8").on("data", (d: string) => { out += d; });
  while (!out.includes("\n")) await once(owner.stdout, "data");
  const { handle } = JSON.parse(out.split("\n")[0]!) as { handle: string };
  const opener = spawnSync(process.execPath, ["--import", "tsx", "test/fixtures/multi-device/ipc-opener.ts", handle], { cwd: root, env, encoding: "utf8" });
  assert.equal(opener.status, 0, opener.stderr);
  const all = Array.from({ length: 300 }, (_, i) => i);
  assert.deepEqual(JSON.parse(opener.stdout).seen, all.slice(100, 200));
  owner.stdin.end("done\n");
  await once(owner, "exit");
  const { values } = JSON.parse(out.trim().split("\n").at(-1)!) as { values: number[] };
  assert.deepEqual(values, [...all.slice(0, 100), ...all.slice(100, 200).map((v, i) => Math.fround(v * 3 + i)), ...all.slice(200)]);
});

test("NCCL with one rank: every collective, from the installed library", { skip: noNccl, timeout: 120_000 }, () => {
  const lib = openNccl();
  const id = new Uint8Array(128);
  lib.check("ncclGetUniqueId", lib.api.ncclGetUniqueId(id));
  const r = spawnSync(process.execPath, ["--import", "tsx", "test/fixtures/nccl/rank.ts", "0", "1", Buffer.from(id).toString("hex")], { cwd: root, env, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  console.log(`# NCCL ${lib.version} at ${lib.path}`);
  checkRankResults(JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, string[]>, 0, 1);
});
