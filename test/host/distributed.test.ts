// The simulator's collectives between processes (every collective, dtype and op, 1–4 ranks, against
// host references), argument mismatches across ranks, the store, and initFromEnv's variables.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import net from "node:net";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { DTYPE_INFO } from "../../src/dtypes.js";
import { float16Round } from "../../src/half.js";
import { placementFromEnv } from "../../src/distributed/nccl.js";
import { NCCL_DTYPES, REDUCE_OPS, type NcclDType } from "../../src/distributed/reduce-ops.js";
import { parseAddress, serveStore, StoreClient } from "../../src/distributed/store.js";
import type { ReduceOp } from "../../src/runtime/communicator.js";
import { inputOf, type Value } from "../helpers/dist-inputs.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = fileURLToPath(new URL("../../src/cli.ts", import.meta.url));
const N = 3;

// ---------------------------------------------------------------------------
// host references: exact integers wrapped once at the end (the same as wrapping every step), floats
// rounded to the dtype after every step in rank order

const isInt = (d: NcclDType) => DTYPE_INFO[d].cls !== "float";

function wrap(dtype: NcclDType, v: bigint): bigint {
  const bits = DTYPE_INFO[dtype].bits;
  return DTYPE_INFO[dtype].cls === "int" ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

const roundTo = (dtype: NcclDType) => (dtype === "float32" ? Math.fround : dtype === "float16" ? float16Round : (x: number) => x);

function reference(dtype: NcclDType, op: ReduceOp, parts: readonly Value[][]): string[] {
  return parts[0]!.map((_, i) => {
    const xs = parts.map((p) => p[i]!);
    if (isInt(dtype)) {
      const b = xs.map((x) => BigInt(x));
      const sum = wrap(dtype, b.reduce((a, x) => a + x));
      const r = { sum, prod: wrap(dtype, b.reduce((a, x) => a * x)), min: b.reduce((a, x) => (x < a ? x : a)), max: b.reduce((a, x) => (x > a ? x : a)), avg: sum / BigInt(xs.length) }[op];
      return r.toString();
    }
    const round = roundTo(dtype), f = xs as number[];
    const scale = round(1 / f.length);
    const steps = { sum: (a: number, x: number) => round(a + x), prod: (a: number, x: number) => round(a * x), min: (a: number, x: number) => Math.min(a, x), max: (a: number, x: number) => Math.max(a, x), avg: (a: number, x: number) => round(a + round(x * scale)) };
    const first = op === "avg" ? round(f[0]! * scale) : f[0]!;
    return String(f.slice(1).reduce(steps[op], first));
  });
}

const strings = (vs: readonly Value[]) => vs.map((v) => v.toString());

/** What rank `rank` of `k` must hold after each call. */
function expected(k: number, call: string, dtype: NcclDType, op: string, rank: number): string[] {
  const ranks = [...Array(k).keys()];
  const inputs = ranks.map((r) => inputOf(dtype, r, N));
  switch (call) {
    case "allReduce": return reference(dtype, op as ReduceOp, inputs);
    case "reduce": return rank === k - 1 ? reference(dtype, op as ReduceOp, inputs) : Array(N).fill("0");
    case "reduceScatter": return reference(dtype, op as ReduceOp, ranks.map((r) => inputOf(dtype, r, N * k).slice(rank * N, (rank + 1) * N)));
    case "broadcast": return strings(inputs[k - 1]!);
    case "allGather": return inputs.flatMap(strings);
    case "sendrecv": return strings(inputs[(rank + k - 1) % k]!);
  }
  throw new Error(`no reference for ${call}`);
}

interface Result { k: number; call: string; dtype: NcclDType; op: string; rank: number; got: string[] }
interface Mismatch { mismatch: string; rank: number; error: string | null; launchError?: boolean }

test("numbats run -n 4: every collective, dtype and op on 1…4 ranks matches the host reference; mismatched calls fail on every rank", () => {
  const r = spawnSync(process.execPath, ["--import", "tsx", cli, "run", "-n", "4", "test/helpers/dist-collectives.ts"], { cwd: root, encoding: "utf8", env: { ...process.env, NUMBATS_TARGET: "sim" } });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  const lines = r.stdout.trim().split("\n").map((l) => {
    const m = /^\[(\d)\] (.*)$/.exec(l);
    assert.ok(m, `a line without its rank prefix: ${l}`);
    const parsed = JSON.parse(m[2]!) as Result | Mismatch;
    assert.equal(parsed.rank, Number(m[1]), "the prefix names the rank that printed the line");
    return parsed;
  });
  const results = lines.filter((l): l is Result => "k" in l);
  const calls = ["allReduce", "reduce", "reduceScatter"].length * REDUCE_OPS.length + ["broadcast", "allGather", "sendrecv"].length;
  assert.equal(results.length, [1, 2, 3, 4].reduce((n, k) => n + k * NCCL_DTYPES.length * calls, 0));
  for (const res of results) {
    assert.deepEqual(res.got, expected(res.k, res.call, res.dtype, res.op, res.rank), `${res.call} ${res.dtype} ${res.op} on rank ${res.rank} of ${res.k}`);
  }

  const mismatches = lines.filter((l): l is Mismatch => "mismatch" in l);
  const of = (what: string) => mismatches.filter((m) => m.mismatch === what).sort((a, b) => a.rank - b.rank);
  for (const m of of("size")) {
    assert.ok(m.launchError, m.error ?? "no error");
    assert.match(m.error!, /allReduce on rank \d of 4: ranks disagree on the send size: ranks 0, 2, 3: 3; rank 1: 4/);
  }
  assert.equal(of("size").length, 4);
  for (const m of of("dtype")) assert.match(m.error!, /broadcast on rank \d of 4: ranks disagree on the dtype: ranks 0, 1, 3: float32; rank 2: float64/);
  const [zero, ...rest] = of("unsupported");
  assert.match(zero!.error!, /LaunchError: allReduce on rank 0 of 4: the send buffer is int16, which NCCL has no type for/);
  for (const m of rest) assert.match(m.error!, /LaunchError: allReduce on rank \d of 4: rank 0 rejected its arguments/);
  assert.deepEqual(of("p2p").map((m) => m.error === null), [true, false, true, true]);
  assert.match(of("p2p")[1]!.error!, /LaunchError: recv on rank 1 from rank 0: rank 0 sent 5 int32, but the receive buffer holds 3 int32/);
});

// ---------------------------------------------------------------------------
// the store

test("store: a get waits for its key; a value set for n readers is gone after n gets; clients retry until the server listens", async () => {
  const port = await freePort();
  const early = StoreClient.connect({ host: "127.0.0.1", port }, 10_000); // before anyone listens
  const server = await serveStore("127.0.0.1", port);
  const a = await early, b = await StoreClient.connect(server.address);
  try {
    const waiting = a.get("k");
    let done = false;
    void waiting.then(() => { done = true; });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(done, false, "the get waits for the key");
    await b.set("k", Uint8Array.of(1, 2, 3), 2);
    assert.deepEqual([...(await waiting)], [1, 2, 3]);
    assert.deepEqual([...(await b.get("k"))], [1, 2, 3]);
    // the two reads used it up: a third get waits for the next set
    const third = a.get("k");
    await b.set("k", Uint8Array.of(9));
    assert.deepEqual([...(await third)], [9]);
    assert.deepEqual([...(await a.get("k"))], [9], "a value set without readers stays");
    const big = new Uint8Array(3_000_000).map((_, i) => i % 251);
    await a.set("big", big, 1);
    assert.deepEqual(await b.get("big"), big);
  } finally {
    a.close();
    b.close();
    await server.close();
  }
});

test("store: a client whose server goes away fails its pending gets with a message naming the store", async () => {
  const server = await serveStore();
  const c = await StoreClient.connect(server.address);
  const pending = c.get("never");
  await server.close();
  await assert.rejects(pending, /the store at 127\.0\.0\.1:\d+ closed the connection/);
  await assert.rejects(StoreClient.connect(server.address, 200), /could not reach the store at 127\.0\.0\.1:\d+ within 0\.2 s/);
});

test("parseAddress takes HOST:PORT and names the variable when it is not one", () => {
  assert.deepEqual(parseAddress("10.0.0.1:29500", "x"), { host: "10.0.0.1", port: 29500 });
  assert.deepEqual(parseAddress("[::1]:80", "x"), { host: "::1", port: 80 });
  assert.throws(() => parseAddress("node7", "NUMBATS_MASTER"), /NUMBATS_MASTER=node7 is not HOST:PORT/);
});

// ---------------------------------------------------------------------------
// initFromEnv

test("placementFromEnv reads numbats run's, Open MPI's, PMI's and Slurm's variables", () => {
  const master = { host: "n0", port: 29500 };
  assert.deepEqual(placementFromEnv({ NUMBATS_RANK: "3", NUMBATS_LOCAL_RANK: "1", NUMBATS_WORLD_SIZE: "4", NUMBATS_MASTER: "n0:29500" }),
    { rank: 3, localRank: 1, worldSize: 4, master, rankZeroServes: false, by: "NUMBATS_RANK, NUMBATS_WORLD_SIZE" });
  assert.deepEqual(placementFromEnv({ OMPI_COMM_WORLD_RANK: "5", OMPI_COMM_WORLD_SIZE: "8", OMPI_COMM_WORLD_LOCAL_RANK: "1", MASTER_ADDR: "n0", MASTER_PORT: "29500" }),
    { rank: 5, localRank: 1, worldSize: 8, master, rankZeroServes: true, by: "OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE" });
  assert.deepEqual(placementFromEnv({ PMI_RANK: "2", PMI_SIZE: "4", MPI_LOCALRANKID: "0", NUMBATS_MASTER: "n0:29500" }),
    { rank: 2, localRank: 0, worldSize: 4, master, rankZeroServes: true, by: "PMI_RANK, PMI_SIZE" });
  assert.deepEqual(placementFromEnv({ SLURM_PROCID: "6", SLURM_NTASKS: "8", SLURM_LOCALID: "2", MASTER_ADDR: "n0", MASTER_PORT: "29500" }),
    { rank: 6, localRank: 2, worldSize: 8, master, rankZeroServes: true, by: "SLURM_PROCID, SLURM_NTASKS" });
  assert.deepEqual(placementFromEnv({}), { rank: 0, localRank: 0, worldSize: 1, rankZeroServes: false, by: "no launcher variables (a single rank)" });
  assert.throws(() => placementFromEnv({ SLURM_PROCID: "1", SLURM_NTASKS: "2" }), /no store address for the rendezvous is set: set NUMBATS_MASTER=HOST:PORT \(or MASTER_ADDR and MASTER_PORT\)/);
  assert.throws(() => placementFromEnv({ OMPI_COMM_WORLD_RANK: "4", OMPI_COMM_WORLD_SIZE: "4", NUMBATS_MASTER: "n0:1" }), /rank 4 is not in 0…3/);
  assert.throws(() => placementFromEnv({ PMI_RANK: "1" }), /PMI_RANK is set but PMI_SIZE is not/);
});

test("initFromEnv under mpirun's variables: rank 0 serves the store at MASTER_ADDR:MASTER_PORT and the ranks reduce together", async () => {
  const port = await freePort();
  const rank = (r: number) => new Promise<{ status: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/distributed/mpi-rank.ts"], {
      cwd: root,
      env: { ...process.env, OMPI_COMM_WORLD_RANK: String(r), OMPI_COMM_WORLD_SIZE: "2", OMPI_COMM_WORLD_LOCAL_RANK: String(r), MASTER_ADDR: "127.0.0.1", MASTER_PORT: String(port) },
    });
    let out = "", err = "";
    child.stdout.on("data", (d: Buffer) => { out += d; });
    child.stderr.on("data", (d: Buffer) => { err += d; });
    child.on("close", (status) => resolve({ status, out, err }));
  });
  // rank 1 starts first: it retries until rank 0 listens
  const results = await Promise.all([rank(1), rank(0)]);
  for (const [i, r] of results.entries()) {
    assert.equal(r.status, 0, r.err);
    const want = i === 0 ? 1 : 0;
    // one simulated device (the default): local rank 1 uses device 1 % 1 = 0
    assert.deepEqual(JSON.parse(r.out), { rank: want, worldSize: 2, localRank: want, device: 0, sum: [3, 30] });
  }
});

test("initFromEnv under numbats run with NUMBATS_SIM_DEVICES=2: local ranks 0, 1, 2 use simulated devices 0, 1, 0", () => {
  const r = spawnSync(process.execPath, ["--import", "tsx", cli, "run", "-n", "3", "test/fixtures/distributed/mpi-rank.ts"], {
    cwd: root, encoding: "utf8", env: { ...process.env, NUMBATS_SIM_DEVICES: "2" },
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const byRank = r.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line.replace(/^\[\d+\] /, "")) as { rank: number; localRank: number; device: number; sum: number[] });
  assert.deepEqual(byRank.sort((a, b) => a.rank - b.rank).map(({ localRank, device, sum }) => ({ localRank, device, sum })), [
    { localRank: 0, device: 0, sum: [6, 60] },
    { localRank: 1, device: 1, sum: [6, 60] },
    { localRank: 2, device: 0, sum: [6, 60] },
  ]);
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
