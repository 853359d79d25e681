// `numbats run`: ranks and their variables, whole prefixed lines, a failing rank ending the others
// with its exit code, signals forwarded, usage errors. The ranks are plain .mjs programs (fast to start).

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseRunArgs, RunUsageError } from "../../src/distributed/launcher.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = fileURLToPath(new URL("../../src/cli.ts", import.meta.url));
const ranks = "test/fixtures/distributed/ranks.mjs";

const run = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", cli, "run", ...args], { cwd: root, encoding: "utf8" });

/** The lines of `text` that `rank` printed, without the prefix. */
const linesOf = (text: string, rank: number) => text.split("\n").filter((l) => l.startsWith(`[${rank}] `)).map((l) => l.slice(`[${rank}] `.length));

test("numbats run -n 3: each rank gets its rank, local rank, world size and the store's address; each line comes out whole with its rank", () => {
  const r = run("-n", "3", ranks, "ok", "--not-ours");
  assert.equal(r.status, 0, r.stderr);
  const masters = new Set<string>();
  for (const rank of [0, 1, 2]) {
    const [env, ...rest] = linesOf(r.stdout, rank);
    const vars = JSON.parse(env!) as { rank: number; local: string; world: string; master: string; args: string[] };
    assert.deepEqual({ ...vars, master: undefined }, { rank, local: String(rank), world: "3", master: undefined, args: ["ok", "--not-ours"] });
    masters.add(vars.master);
    assert.deepEqual(rest, ["a line in pieces", "no newline at the end"]);
    assert.deepEqual(linesOf(r.stderr, rank), [`to stderr from ${rank}`]);
  }
  assert.equal(masters.size, 1);
  assert.match([...masters][0]!, /^127\.0\.0\.1:\d+$/);
  assert.equal(r.stdout.split("\n").filter(Boolean).length, 9, "no line without a prefix");
});

test("numbats run --nnodes 2 --node-rank 1: this node's ranks are 2 and 3 of 4, pointed at the master", () => {
  const r = run("--nnodes", "2", "--node-rank", "1", "--master", "127.0.0.1:1", "-n", "2", ranks);
  assert.equal(r.status, 0, r.stderr);
  const vars = [2, 3].map((rank) => JSON.parse(linesOf(r.stdout, rank)[0]!) as { rank: number; local: string; world: string; master: string });
  assert.deepEqual(vars.map((v) => [v.rank, v.local, v.world, v.master]), [[2, "0", "4", "127.0.0.1:1"], [3, "1", "4", "127.0.0.1:1"]]);
});

test("numbats run: when one rank fails, the others are ended and the launcher exits with its code", () => {
  const t0 = Date.now();
  const r = run("-n", "3", ranks, "fail:1:7");
  assert.equal(r.status, 7, r.stderr);
  assert.match(r.stderr, /numbats run: rank 1 exited with code 7; ending the other ranks/);
  assert.ok(Date.now() - t0 < 30_000, "the waiting ranks were ended, not waited for");
});

test("numbats run: SIGTERM to the launcher reaches every rank", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", cli, "run", "-n", "2", ranks, "wait"], { cwd: root });
  let out = "";
  const waiting = new Promise<void>((resolve) => child.stdout.on("data", (d: Buffer) => {
    out += d;
    if (out.includes("[0] rank 0 waiting") && out.includes("[1] rank 1 waiting")) resolve();
  }));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  await waiting;
  child.kill("SIGTERM");
  assert.equal(await exited, 128 + 15);
  assert.match(out, /\[0\] rank 0 got SIGTERM/);
  assert.match(out, /\[1\] rank 1 got SIGTERM/);
});

test("numbats run: usage errors say what is missing", () => {
  const cases: [string[], RegExp][] = [
    [[], /run needs a program/],
    [["-n", "0", ranks], /-n needs an integer ≥ 1; got 0/],
    [["--nnodes", "2", ranks], /several nodes needs --master HOST:PORT/],
    [["--nnodes", "2", "--node-rank", "2", "--master", "h:1", ranks], /--node-rank 2 is not below --nnodes 2/],
    [["--master", "nohost", ranks], /--master=nohost is not HOST:PORT/],
    [["--bogus", ranks], /unknown option --bogus/],
  ];
  for (const [args, message] of cases) assert.throws(() => parseRunArgs(args), (e: Error) => e instanceof RunUsageError && message.test(e.message), args.join(" "));
  assert.deepEqual(parseRunArgs(["-n=2", "--master", "h:9", "app.js", "-n", "5"]), { nprocs: 2, nnodes: 1, nodeRank: 0, master: { host: "h", port: 9 }, app: "app.js", args: ["-n", "5"] });
  // the command line says it with the usage, exit status 2
  const r = run("--nnodes", "2", ranks);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /numbats: a run on several nodes needs --master HOST:PORT[^]*usage: numbats/);
});

test("the distributed examples under numbats run: the heat equation on 4 ranks, the histogram on 2, on the simulator", () => {
  for (const [example, n, size] of [["distributed-heat.ts", "4", "120"], ["distributed-histogram.ts", "2", "2000"]] as const) {
    const r = spawnSync(process.execPath, ["--import", "tsx", cli, "run", "-n", n, `examples/${example}`, size], { cwd: root, encoding: "utf8", env: { ...process.env, NUMBATS_TARGET: "sim" } });
    assert.equal(r.status, 0, `${example}:\n${r.stdout}${r.stderr}`);
    assert.doesNotMatch(r.stdout, /FAIL/);
    assert.match(r.stdout, /\[0\] ok {4}/);
  }
});
