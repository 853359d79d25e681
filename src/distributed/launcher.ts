// `numbats run -n N [--nnodes M --node-rank R --master HOST:PORT] app.js [args]`: starts this node's N
// ranks of an M-node run (torchrun's model), each `node` with our own execArgv (so `--import tsx`
// carries over), with NUMBATS_RANK, NUMBATS_LOCAL_RANK, NUMBATS_WORLD_SIZE, NUMBATS_LOCAL_WORLD_SIZE
// and NUMBATS_MASTER set. Node 0 serves the rendezvous store. Each line a rank prints comes out
// whole, prefixed with `[rank]`. SIGINT/SIGTERM go to every rank; when a rank fails, the others are
// ended and the launcher exits with the first failure's code.

import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { moduleFile } from "../module-file.js";
import { formatAddress, parseAddress, serveStore, type StoreAddress, type StoreServer } from "./store.js";

export interface RunOptions {
  /** ranks on this node */
  readonly nprocs: number;
  readonly nnodes: number;
  readonly nodeRank: number;
  /** HOST:PORT of node 0's store; default (one node): loopback, any free port */
  readonly master?: StoreAddress;
  readonly app: string;
  readonly args: readonly string[];
}

/** A command line that makes no sense (the CLI prints its usage). */
export class RunUsageError extends Error {}

function positiveInt(flag: string, raw: string | undefined, min: number): number {
  const v = Number(raw);
  if (raw === undefined || !Number.isInteger(v) || v < min) throw new RunUsageError(`${flag} needs an integer ≥ ${min}; got ${raw ?? "nothing"}`);
  return v;
}

/** Parses `run`'s arguments: options first, then the program and its own arguments (passed on untouched). */
export function parseRunArgs(argv: readonly string[]): RunOptions {
  let nprocs = 1, nnodes = 1, nodeRank = 0, master: StoreAddress | undefined;
  let i = 0;
  for (; i < argv.length && argv[i]!.startsWith("-"); i += 2) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? argv[i + 1];
    if (inline !== undefined) i--;
    if (flag === "-n" || flag === "--nprocs") nprocs = positiveInt(flag, value, 1);
    else if (flag === "--nnodes") nnodes = positiveInt(flag, value, 1);
    else if (flag === "--node-rank") nodeRank = positiveInt(flag, value, 0);
    else if (flag === "--master") {
      try {
        master = parseAddress(value ?? "", "--master");
      } catch (e) {
        throw new RunUsageError((e as Error).message);
      }
    } else throw new RunUsageError(`run: unknown option ${flag}`);
  }
  const [app, ...args] = argv.slice(i);
  if (app === undefined) throw new RunUsageError("run needs a program, e.g. numbats run -n 4 app.js");
  if (nodeRank >= nnodes) throw new RunUsageError(`--node-rank ${nodeRank} is not below --nnodes ${nnodes}`);
  if (nnodes > 1 && !master) throw new RunUsageError("a run on several nodes needs --master HOST:PORT: node 0's address, reachable from every node, and a free port");
  return { nprocs, nnodes, nodeRank, ...(master ? { master } : {}), app, args };
}

/** Node's flags for the ranks: ours, plus tsx for a TypeScript program when we run without it. */
function rankExecArgv(app: string): string[] {
  const own = [...process.execArgv];
  const ts = [".ts", ".mts", ".cts"].includes(extname(app));
  if (ts && !own.some((a) => a.includes("tsx"))) {
    try {
      return [...own, "--import", pathToFileURL(createRequire(moduleFile() ?? join(process.cwd(), "app.js")).resolve("tsx")).href];
    } catch {
      // without tsx the rank fails to load the program, and node says why
    }
  }
  return own;
}

/** Copies `from` to `to` line by line, each line whole and prefixed; a last line without newline too. */
function prefixLines(from: Readable, to: Writable, prefix: string): Promise<void> {
  let partial = "";
  from.setEncoding("utf8");
  from.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!;
    if (lines.length) to.write(lines.map((l) => `${prefix}${l}\n`).join(""));
  });
  return new Promise((resolve) => from.on("end", () => {
    if (partial) to.write(`${prefix}${partial}\n`);
    resolve();
  }));
}

/** The exit status a shell gives a process: its code, or 128 + the signal's number. */
function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  return code ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0);
}

/** Runs this node's ranks; resolves to the launcher's exit status. */
export async function runRanks(opts: RunOptions, out: Writable = process.stdout, err: Writable = process.stderr): Promise<number> {
  const worldSize = opts.nprocs * opts.nnodes;
  let server: StoreServer | undefined;
  let master = opts.master;
  if (opts.nodeRank === 0) {
    // one node: loopback only; several: every interface, on the port the other nodes were given
    server = await serveStore(opts.nnodes > 1 ? "0.0.0.0" : master?.host ?? "127.0.0.1", master?.port ?? 0);
    master ??= server.address;
  }
  const execArgv = rankExecArgv(opts.app);
  const children: ChildProcess[] = [];
  const outputs: Promise<void>[] = [];
  let firstFailure: number | undefined;

  const endOthers = (signal: NodeJS.Signals) => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    firstFailure ??= exitStatus(null, signal);
    endOthers(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const exits = [...Array(opts.nprocs).keys()].map((localRank) => {
    const rank = opts.nodeRank * opts.nprocs + localRank;
    const child = spawn(process.execPath, [...execArgv, opts.app, ...opts.args], {
      stdio: ["inherit", "pipe", "pipe"],
      env: {
        ...process.env,
        NUMBATS_RANK: String(rank), NUMBATS_LOCAL_RANK: String(localRank), NUMBATS_WORLD_SIZE: String(worldSize),
        NUMBATS_LOCAL_WORLD_SIZE: String(opts.nprocs), NUMBATS_MASTER: formatAddress(master!),
      },
    });
    children.push(child);
    outputs.push(prefixLines(child.stdout!, out, `[${rank}] `), prefixLines(child.stderr!, err, `[${rank}] `));
    return new Promise<void>((resolve) => {
      child.on("error", (e) => {
        err.write(`numbats run: could not start rank ${rank}: ${e.message}\n`);
        firstFailure ??= 1;
        endOthers("SIGTERM");
        resolve();
      });
      child.on("exit", (code, signal) => {
        const status = exitStatus(code, signal);
        if (status !== 0 && firstFailure === undefined) {
          firstFailure = status;
          err.write(`numbats run: rank ${rank} exited with ${signal ?? `code ${code}`}; ending the other ranks\n`);
          endOthers("SIGTERM");
        }
        resolve();
      });
    });
  });
  await Promise.all(exits);
  await Promise.all(outputs);
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  await server?.close();
  return firstFailure ?? 0;
}
