// NCCL through koffi (src/backends/cuda/driver/nccl.ts, src/backends/cuda/host/nccl-comm.ts) against a stand-in libnccl built here with gcc
// (test/fixtures/nccl/standin-nccl.c): it checks and logs every call's arguments and performs the
// collectives on host memory between ranks that are processes. The ranks' DeviceArrays live on the
// emulated GPU (tools/fakecuda). NCCL itself is exercised by the GPU suite.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NcclError } from "../../src/errors.js";
import { openNccl } from "../../src/backends/cuda/driver/nccl.js";
import type { ReduceOp } from "../../src/runtime/communicator.js";
import { RANK_ELEMENTS as n, REDUCED_DTYPES, REDUCE_OPS } from "../fixtures/nccl/data.js";
import { checkRankResults } from "../helpers/nccl-reference.js";
import { FAKECUDA as fakecuda, missingTools } from "../helpers/tools.js";

const root = new URL("../..", import.meta.url).pathname;
const noStandin = missingTools("gcc");
const work = mkdtempSync(join(tmpdir(), "numbats-nccl-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** The stand-in, built once per run as libnccl.so.2. */
const standin = (() => {
  if (noStandin) return undefined;
  const so = join(work, "libnccl.so.2");
  execFileSync("gcc", ["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-fwrapv", "-o", so, join(root, "test/fixtures/nccl/standin-nccl.c")]);
  return so;
})();

const search = (env: NodeJS.ProcessEnv, sites: string[] = []) => ({ env, sitePackages: () => sites });

test("NUMBATS_NCCL_LIBRARY is the only place looked in when set; a missing library names it", { skip: noStandin }, () => {
  assert.equal(openNccl(search({ NUMBATS_NCCL_LIBRARY: standin })).version, 22703);
  assert.throws(() => openNccl(search({ NUMBATS_NCCL_LIBRARY: "/nowhere/libnccl.so.2" })), (e: unknown) =>
    e instanceof NcclError && e.call === "dlopen(libnccl)" && e.code === -1
    && /the NCCL library was not found\nlooked in:\n {2}\/nowhere\/libnccl\.so\.2: .*\nfix NUMBATS_NCCL_LIBRARY/.test(e.message));
});

test("without the variable: the loader's path, then an nvidia-nccl wheel's nvidia/nccl/lib in python3's site-packages", { skip: noStandin }, () => {
  const site = join(work, "site-packages");
  mkdirSync(join(site, "nvidia", "nccl", "lib"), { recursive: true });
  const wheel = join(site, "nvidia", "nccl", "lib", "libnccl.so.2");
  copyFileSync(standin!, wheel);
  // this machine has no NCCL on the loader's path, so the wheel is what is found
  if (spawnSync("ldconfig", ["-p"], { encoding: "utf8" }).stdout?.includes("libnccl.so.2")) return;
  assert.equal(openNccl(search({}, [join(work, "empty"), site])).path, wheel);
  assert.throws(() => openNccl(search({}, [join(work, "empty")])), (e: unknown) =>
    e instanceof NcclError
    && e.message.includes("libnccl.so.2: ")
    && e.message.includes(`nvidia-nccl-cu13 / nvidia-nccl-cu12 wheels: no nvidia/nccl/lib/libnccl.so.2 in ${join(work, "empty")}`)
    && e.message.includes("pip install nvidia-nccl-cu13"));
  assert.throws(() => openNccl(search({})), /python3 was not found to ask for its site-packages/);
});

test("a failing NCCL call is an NcclError naming the call and ncclGetErrorString's text", { skip: noStandin }, () => {
  const lib = openNccl(search({ NUMBATS_NCCL_LIBRARY: standin }));
  process.env.STANDIN_NCCL_FAIL = "ncclGetUniqueId";
  try {
    const code = lib.api.ncclGetUniqueId(new Uint8Array(128)) as number;
    assert.throws(() => lib.check("ncclGetUniqueId", code), (e: unknown) => e instanceof NcclError && e.call === "ncclGetUniqueId" && e.code === 2
      && e.message === "ncclGetUniqueId failed: unhandled system error (run with NCCL_DEBUG=INFO for details) (ncclResult_t 2)");
  } finally {
    delete process.env.STANDIN_NCCL_FAIL;
  }
});

// ---------------------------------------------------------------------------------------------
// ranks as processes on the emulated GPU

interface RankRun { readonly out: Record<string, string[]>; readonly log: string }

async function runRanks(worldSize: number): Promise<RankRun[]> {
  const lib = openNccl(search({ NUMBATS_NCCL_LIBRARY: standin }));
  const id = new Uint8Array(128);
  lib.check("ncclGetUniqueId", lib.api.ncclGetUniqueId(id));
  const dir = mkdtempSync(join(work, `world${worldSize}-`));
  const { NUMBATS_ENABLE_CUDASIM: _c, NUMBATS_SIM_DEVICES: _d, ...base } = process.env;
  return Promise.all(Array.from({ length: worldSize }, async (_, rank) => {
    const log = join(dir, `rank${rank}.log`);
    const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/nccl/rank.ts", String(rank), String(worldSize), Buffer.from(id).toString("hex")], {
      cwd: root, stdio: ["ignore", "pipe", "pipe"],
      env: { ...base, NUMBATS_TARGET: "cuda", NUMBATS_NCCL_LIBRARY: standin, STANDIN_NCCL_LOG: log, FAKECUDA_QUIET: "1", NODE_OPTIONS: `${base.NODE_OPTIONS ?? ""} --import=${fakecuda}`.trim() },
    });
    let stdout = "", stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => { stdout += d; });
    child.stderr.setEncoding("utf8").on("data", (d: string) => { stderr += d; });
    const code = await new Promise<number | null>((done) => child.on("close", done));
    assert.equal(code, 0, `rank ${rank} of ${worldSize}: ${stderr}`);
    return { out: JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, string[]>, log: readFileSync(log, "utf8") };
  }));
}

const NCCL_TYPE: Record<string, number> = { int8: 0, uint8: 1, int32: 2, uint32: 3, int64: 4, uint64: 5, float32: 7, float64: 8 };
const NCCL_OP: Record<ReduceOp, number> = { sum: 0, prod: 1, max: 2, min: 3, avg: 4 };

for (const worldSize of [1, 2, 3]) {
  test(`${worldSize} rank(s): every collective against a host reference, with NCCL's enum values`, { skip: noStandin, timeout: 240_000 }, async () => {
    const runs = await runRanks(worldSize);
    runs.forEach(({ out, log }, rank) => {
      checkRankResults(out, rank, worldSize);
      for (const dtype of REDUCED_DTYPES) {
        for (const op of REDUCE_OPS) assert.match(log, new RegExp(`^ncclAllReduce rank=${rank} count=${n} datatype=${NCCL_TYPE[dtype]} op=${NCCL_OP[op]} `, "m"));
      }
      assert.match(log, new RegExp(`^ncclBroadcast rank=${rank} count=${n} datatype=8 op=0 root=${worldSize - 1} `, "m"));
      assert.match(log, new RegExp(`^ncclReduce rank=${rank} count=${n} datatype=2 op=2 root=0 `, "m"));
      assert.match(log, new RegExp(`^ncclAllGather rank=${rank} count=${n} datatype=7 `, "m"));
      assert.match(log, new RegExp(`^ncclReduceScatter rank=${rank} count=${n} datatype=4 op=0 `, "m"));
      // int16 moves as 2 × n bytes of ncclUint8, inside one group
      assert.match(log, new RegExp(`^ncclGroupStart\nncclSend rank=${rank} count=${2 * n} datatype=1 peer=${(rank + 1) % worldSize} .* grouped=1\nncclRecv rank=${rank} count=${2 * n} datatype=1 peer=${(rank + worldSize - 1) % worldSize} .* grouped=1\nncclGroupEnd$`, "m"));
      assert.match(log, new RegExp(`^ncclCommDestroy rank=${rank}$`, "m"));
      // the refused calls never reached NCCL, and the stand-in found nothing wrong with the others
      assert.equal(log.match(/^ncclAllReduce /gm)?.length, REDUCED_DTYPES.length * REDUCE_OPS.length);
      assert.doesNotMatch(log, /INVALID/);
    });
  });
}
