// Several devices in one process (NUMBATS_SIM_DEVICES) and arrays shared between processes (IPC), on the
// simulator; each scenario runs in fresh processes, since the device count is read at first use.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { hasPtxas, ptxasCheck, PTXAS_TARGETS } from "../helpers/ptxas.js";
import { FAKECUDA as fakecuda, missingTools } from "../helpers/tools.js";
import { scaleAdd } from "../fixtures/multi-device/kernels.js";

const root = new URL("../..", import.meta.url).pathname;
const fixture = (name: string) => `test/fixtures/multi-device/${name}.ts`;

function simEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NUMBATS_TARGET: _t, NUMBATS_ENABLE_CUDASIM: _c, NUMBATS_SIM_DEVICES: _d, ...base } = process.env;
  return { ...base, NUMBATS_TARGET: "sim", ...extra };
}

function runFixture(name: string, env: NodeJS.ProcessEnv, args: string[] = []): Record<string, unknown> {
  const r = spawnSync(process.execPath, ["--import", "tsx", fixture(name), ...args], { cwd: root, env, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
}

const scaled = (values: readonly number[], k: number) => values.map((v, i) => Math.fround(Math.fround(v * k) + i));

test("the kernels these tests run assemble with ptxas", () => {
  if (!hasPtxas()) return;
  for (const { arch, computeCapability } of PTXAS_TARGETS) ptxasCheck(scaleAdd.inspectAsm(undefined, { computeCapability }), arch);
});

const noEmulator = missingTools("gcc");

/** The devices fixture's report against its host reference; `allocated` checks the bytes device 1's array took. */
function checkDevices(r: Record<string, unknown>, deviceName: (id: number) => string, allocated: (bytes: number) => boolean): void {
  const n = 64;
  const a = scaled(Array.from({ length: n }, (_, i) => i / 4), 2);
  assert.deepEqual(r.gpus, [0, 1]);
  assert.ok(allocated(r.device1UsedBytes as number), `device 1 counts its array: ${r.device1UsedBytes}`);
  assert.equal(r.device0UsedBytes, 0, "device 0 does not count device 1's arrays");
  assert.equal(r.aDevice, 1);
  assert.equal(r.current, 0);
  assert.deepEqual(r.b, a);
  assert.deepEqual(r.every2, a.filter((_, i) => i % 2 === 0));
  assert.equal(r.launchIsLaunchError, true);
  const esc = (s: string) => s.replace(/[()#]/g, "\\$&");
  assert.match(String(r.launch), new RegExp(`'a'\\) is in the memory of device 1 ${esc(`(${deviceName(1)})`)}, but the kernel launches on device 0 ${esc(`(${deviceName(0)})`)}`));
}

test("NUMBATS_SIM_DEVICES=2: two devices, each with its memory; copies and launches across them", () => {
  const r = runFixture("devices", simEnv({ NUMBATS_SIM_DEVICES: "2" }));
  checkDevices(r, () => "numbats simulator", (bytes) => bytes === 64 * 4);
  assert.match(String(r.select2), /no simulated device 2: the simulator has 2/);
});

test("the cuda target on two emulated GPUs: the same program, copies staged through pinned memory", { skip: noEmulator }, () => {
  const { NUMBATS_ENABLE_CUDASIM: _c, ...base } = process.env;
  const env = { ...base, NUMBATS_TARGET: "cuda", FAKECUDA_DEVICES: "2", NODE_OPTIONS: `${base.NODE_OPTIONS ?? ""} --import=${fakecuda}`.trim() };
  const r = runFixture("devices", env);
  checkDevices(r, (id) => `NVIDIA H100 80GB HBM3 (fakecuda) #${id}`, (bytes) => bytes >= 64 * 4);
  assert.match(String(r.select2), /no CUDA device 2: found 2/);
});

test("one simulated device by default; NUMBATS_SIM_DEVICES must be a count", () => {
  const probe = `import { cuda } from "./src/index.ts"; console.log(JSON.stringify(cuda.gpus.map((d) => d.id)));`;
  const ok = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", probe], { cwd: root, env: simEnv(), encoding: "utf8" });
  assert.equal(ok.stdout.trim(), "[0]", ok.stderr);
  const bad = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", probe], { cwd: root, env: simEnv({ NUMBATS_SIM_DEVICES: "two" }), encoding: "utf8" });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /NUMBATS_SIM_DEVICES=two is not a device count: use a whole number from 1 to 1024/);
});

test("IPC on the simulator: another process opens a view, sees its elements, and its kernel's writes come back", async () => {
  const owner = spawn(process.execPath, ["--import", "tsx", fixture("ipc-owner")], { cwd: root, env: simEnv(), stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  owner.stdout.setEncoding("utf8").on("data", (d: string) => { out += d; });
  while (!out.includes("\n")) await once(owner.stdout, "data");
  const { handle } = JSON.parse(out.split("\n")[0]!) as { handle: string };
  assert.match(handle, /^numbats-ipc:/);

  const opened = runFixture("ipc-opener", simEnv(), [handle]);
  const all = Array.from({ length: 300 }, (_, i) => i);
  assert.deepEqual(opened.seen, all.slice(100, 200));
  assert.deepEqual([opened.shape, opened.dtype, opened.device], [[100], "float32", 0]);

  owner.stdin.end("done\n");
  await once(owner, "exit");
  const { values } = JSON.parse(out.trim().split("\n").at(-1)!) as { values: number[] };
  const expected = [...all.slice(0, 100), ...scaled(all.slice(100, 200), 3), ...all.slice(200)];
  assert.deepEqual(values, expected);
  const file = JSON.parse(Buffer.from(handle.slice("numbats-ipc:".length), "base64url").toString()).memory.handle as string;
  assert.equal(existsSync(file), false, "the owner's free() removes the shared file");
});

test("openIpcArray refuses what is not a handle, and a handle whose owner freed the memory", async () => {
  const probe = (h: string) => `import { cuda } from "./src/index.ts"; try { cuda.openIpcArray(${JSON.stringify(h)}); } catch (e) { console.log(e.message); }`;
  const said = (h: string) => spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", probe(h)], { cwd: root, env: simEnv(), encoding: "utf8" }).stdout.trim();
  assert.match(said("hello"), /not an IPC handle made by DeviceArray.ipcHandle\(\): it does not start with "numbats-ipc:"/);
  const gone = { target: "sim", device: 0, dtype: "float32", shape: [4], strides: [1], offset: 0, memory: { handle: "/dev/shm/numbats-ipc-gone", byteLength: 16 } };
  assert.match(said(`numbats-ipc:${Buffer.from(JSON.stringify(gone)).toString("base64url")}`),
    /cannot open the shared device memory \/dev\/shm\/numbats-ipc-gone: .*the exporting process must keep the array alive/);
});

test("the simulator's shared file goes when its owner exits without freeing the array", () => {
  const script = `import { cuda } from "./src/index.ts"; console.log(cuda.toDevice(new Float32Array(8)).ipcHandle());`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: root, env: simEnv(), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const handle = r.stdout.trim();
  const file = JSON.parse(Buffer.from(handle.slice("numbats-ipc:".length), "base64url").toString()).memory.handle as string;
  assert.match(file, /numbats-ipc-\d+-[0-9a-f]+$/);
  assert.equal(existsSync(file), false);
});
