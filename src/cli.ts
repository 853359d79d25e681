#!/usr/bin/env node
// The `numbats` command:
//   numbats -s                                  system report, as Numba's `numba -s`
//   numbats ptx FILE [--kernel NAME] [--sig SIG] [--arch sm_XX]
//                                               PTX of the kernels a module exports
//   numbats sanitize [--tool LIST] [--schedule random:SEED] -- COMMAND …
//                                               a program with the simulator's sanitizer on
//   numbats run -n N [--nnodes M --node-rank R --master HOST:PORT] APP [ARG…]
//                                               one process per rank (src/distributed/launcher.ts)
//   numbats playground [--port N]               the playground page, served locally (src/playground)
//   numbats --version

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import { dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { moduleFile } from "./module-file.js";
import { compilerVersion, packageVersion } from "./runtime/version.js";
import { writeBundle, type BundledKernel } from "./runtime/bundle.js";
import { sourceHash } from "./runtime/cache-key.js";
import { bundleKey } from "./kernel-cache.js";
import { parseFunction } from "./compiler/parse.js";
import { CompileError, CudaError, LaunchError, TypingError } from "./errors.js";
import { Kernel } from "./kernel.js";
import type { Artifact, DeviceInfo } from "./abi/backend.js";
import type { FunctionIR } from "./compiler/ir.js";
import { BACKENDS, SIMULATED_COMPUTE_CAPABILITY, deviceCompilers, gpuDriver, gpuPtxTarget, parseSchedule, parseTools, type PtxTargetOptions } from "./backends/index.js";
import { onGpu, programTarget, simulatorWorkers, targetDevice } from "./runtime/select.js";
import { parseRunArgs, runRanks, RunUsageError } from "./distributed/launcher.js";
import { playgroundDir, serveDirectory } from "./playground/serve.js";

/** What `ptx` compiles for without --arch when no GPU is found: the simulated device's compute capability. */
const DEFAULT_ARCH = `sm_${SIMULATED_COMPUTE_CAPABILITY.join("")}`;

/** The playground's port unless --port says otherwise. */
const PLAYGROUND_PORT = 8417;

const USAGE = `usage: numbats -s | --sysinfo
       numbats ptx FILE [--kernel NAME] [--sig SIG] [--arch sm_XX]
       numbats build FILE [--kernel NAME] [--sig SIG] [--arch sm_XX,…] -o BUNDLE
       numbats sanitize [--tool LIST] [--schedule random:SEED] -- COMMAND [ARG…]
       numbats run -n N [--nnodes M --node-rank R --master HOST:PORT] APP [ARG…]
       numbats playground [--port N]
       numbats -v | --version
       numbats -h | --help

  -s, --sysinfo   system report: Node.js, platform, CUDA driver and devices,
                  and which target (GPU or simulator) a program gets, and why
  ptx FILE        print the PTX of each kernel FILE exports (a .js/.mjs module,
                  or .ts when tsx is available)
    --kernel NAME   only the kernel exported as NAME
    --sig SIG       compile for this Numba signature, e.g. "void(float32[::1], int32)";
                    without it: the kernel's options.signature or the signatures
                    it has already been compiled for
    --arch sm_XX    the GPU's compute capability to compile for, e.g. sm_90;
                    default: device 0's when a GPU is found, else ${DEFAULT_ARCH}
  build FILE      compile the kernels FILE exports ahead of time into one bundle file
                  (the simulator's code, and PTX for each --arch), which
                  cuda.loadBundle(BUNDLE) makes later launches use without compiling
    --kernel, --sig as for ptx
    --arch LIST     compute capabilities to make PTX for, e.g. sm_80,sm_90;
                    default: device 0's when a GPU is found, else ${DEFAULT_ARCH}
    -o BUNDLE       the file to write
  sanitize -- COMMAND  run COMMAND (e.g. node app.js) with every kernel launch
                  checked on the CPU simulator: a launch with findings throws
                  SanitizerError; device arrays left allocated are listed at exit
    --tool LIST     all (default), or a comma list of memcheck (out-of-bounds,
                    freed arrays, leaks), racecheck (data races on shared and
                    global memory), initcheck (reads of unwritten memory),
                    synccheck (divergent barriers, warp masks naming exited lanes)
    --schedule random:SEED  run blocks, warps and threads in a seeded random order
  run APP         start N processes of APP (a .js or .ts program), one per rank, with
                  NUMBATS_RANK, NUMBATS_LOCAL_RANK, NUMBATS_WORLD_SIZE and NUMBATS_MASTER set
                  for nccl.initFromEnv(); each output line is prefixed with [rank]; when a
                  rank fails the others are ended and its exit code is ours
    -n N            ranks on this node (default 1)
    --nnodes M      nodes in the run (default 1); start \`numbats run\` on each
    --node-rank R   this node's index, 0 … M-1 (node 0 serves the rendezvous store)
    --master HOST:PORT  node 0's address and a free port (needed with --nnodes > 1)
  playground      serve the playground (an editor, Run on the simulator or on WebGPU in
                  the browser, the output, typed IR, PTX, WGSL and the sanitizer's findings)
                  at http://127.0.0.1:N/ until Ctrl+C
    --port N        the port (default ${PLAYGROUND_PORT}; 0 picks a free one)
  -v, --version   the version of numbats

environment: NUMBATS_TARGET=cuda|sim|auto, NUMBATS_ENABLE_CUDASIM=1, NUMBATS_CUDA_LIBRARY=path,
             NUMBATS_SANITIZE=all|LIST, NUMBATS_SIM_SCHEDULE=random:SEED, NUMBATS_DIST_TIMEOUT=seconds
`;

/** A command line that makes no sense: usage on stderr, exit status 2. */
class UsageError extends Error {}

/** A failure with a message for the user: stderr, exit status 1. */
class CliError extends Error {}

// ---------------------------------------------------------------------------
// numbats -s, numbats --version

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

const describeDevice = (d: DeviceInfo) =>
  `${d.name}: compute capability ${d.computeCapability.join(".")}, ${d.multiprocessors} SMs, ${gib(d.totalMemory)}`;

/** `key : value` rows; a value's further lines are indented under its first. */
function section(title: string, rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([k]) => k.length));
  const row = ([k, v]: readonly [string, string]) => `${k.padEnd(width)} : ${v.split(/\s*\n\s*/).join(`\n${" ".repeat(width + 5)}`)}`;
  return `__${title}__\n${rows.map(row).join("\n")}\n`;
}

function systemReport(): string {
  const cpus = os.cpus();
  const system = section("System", [
    ["numbats", packageVersion() ?? "unknown"],
    ["Node.js", `${process.version} (V8 ${process.versions.v8})`],
    ["Platform", `${process.platform} ${process.arch}, ${os.type()} ${os.release()}`],
    ["CPU", `${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown"}`],
    ["Memory", gib(os.totalmem())],
  ]);

  const gpu = gpuDriver();
  const driver = section("CUDA driver", gpu.ok
    ? [
      ["Driver", `found: ${gpu.library}`],
      ["Driver version", gpu.version],
      ["Devices", String(gpu.devices.length)],
      ...gpu.devices.map((d): [string, string] => [`  device ${d.id}`, describeDevice(d)]),
    ]
    : [["Driver", `not usable: ${gpu.reason}`]]);
  const compilers = section("CUDA C++ compiler and linker", deviceCompilers());

  const env = (name: string) => `${name}=${process.env[name] ?? "(unset)"}`;
  let target: [string, string][];
  try {
    const info = programTarget();
    const workers = simulatorWorkers(info);
    target = [
      ["Requested", `${info.requested}, by ${info.requestedBy}`],
      ["Target", `${info.target} (the ${targetDevice(info)})`],
      ["Why", info.reason.split("\n")[0]!],
      ["Device", onGpu(info) ? `${info.device.id}, ${describeDevice(info.device)}` : describeDevice(info.device)],
      ...(workers === undefined ? [] : [["Simulator workers", workers] as [string, string]]),
    ];
  } catch (e) {
    target = [["Target", `none: a program would fail with: ${(e as Error).message}`]];
  }
  target.push(["Environment", [env("NUMBATS_TARGET"), env("NUMBATS_ENABLE_CUDASIM"), env("NUMBATS_CUDA_LIBRARY"), env("NUMBATS_NVRTC_LIBRARY"), env("NUMBATS_NVJITLINK_LIBRARY"), env("NUMBATS_SIM_WORKERS")].join(", ")]);
  return `${system}\n${driver}\n${compilers}\n${section("Target", target)}`;
}

// ---------------------------------------------------------------------------
// numbats ptx FILE

/** A Kernel, also one made by another copy of numbats than this CLI's (dist/ vs src/). */
function isKernel(v: unknown): v is Kernel {
  if (v instanceof Kernel) return true;
  const k = v as Partial<Kernel> | null;
  return (typeof k === "object" || typeof k === "function") && k !== null && k.constructor?.name === "Kernel"
    && typeof k.inspectAsm === "function" && typeof k.compile === "function";
}

const TS_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx"]);

async function importModule(file: string): Promise<Record<string, unknown>> {
  const path = resolve(file);
  if (!existsSync(path)) throw new CliError(`${file}: no such file`);
  const url = pathToFileURL(path).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (e) {
    if ((e as { code?: string }).code !== "ERR_UNKNOWN_FILE_EXTENSION" || !TS_EXTENSIONS.has(extname(path))) throw e;
  }
  // a TypeScript module under plain node: load it through tsx when it is installed
  try {
    const { register } = (await import("tsx/esm/api")) as { register(): void };
    register();
  } catch {
    throw new CliError(`${file} is TypeScript: run \`node --import tsx ${process.argv[1]} ptx ${file}\` (npm install tsx), or compile it to JavaScript first`);
  }
  // the failed load stays cached under its URL: a query string makes a fresh one
  return (await import(`${url}?tsx`)) as Record<string, unknown>;
}

interface PtxOptions { readonly kernel?: string; readonly sig?: string; readonly arch?: string }

/** `sm_90` → [9, 0], `sm_100` → [10, 0]. */
function parseArch(arch: string): [number, number] {
  const m = /^sm_(\d+)(\d)$/.exec(arch);
  if (!m || Number(m[1]) < 5) throw new UsageError(`--arch ${arch} is not a compute capability: use sm_XX, e.g. sm_75, sm_80, sm_90 (sm_50 or newer)`);
  return [Number(m[1]), Number(m[2])];
}

/** The target PTX is printed for: --arch, else device 0 (and the PTX ISA its driver accepts), else DEFAULT_ARCH. */
function ptxTarget(arch: string | undefined): PtxTargetOptions {
  if (arch !== undefined) return { computeCapability: parseArch(arch) };
  return gpuPtxTarget() ?? { computeCapability: parseArch(DEFAULT_ARCH) };
}

/** Numba types for the TypeScript annotations a kernel's parameters are likely to have. */
const ANNOTATION_TYPES: Readonly<Record<string, string>> = {
  Float32Array: "float32[::1]", Float64Array: "float64[::1]",
  Int8Array: "int8[::1]", Int16Array: "int16[::1]", Int32Array: "int32[::1]", BigInt64Array: "int64[::1]",
  Uint8Array: "uint8[::1]", Uint16Array: "uint16[::1]", Uint32Array: "uint32[::1]", BigUint64Array: "uint64[::1]",
  number: "float64", boolean: "bool", bigint: "int64",
};

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A signature for `kernel` from the parameter annotations in FILE's text, found by its
 * parameter names after the export's name; undefined when they are not all plain types.
 */
function suggestSignature(source: string, name: string, kernel: Kernel): string | undefined {
  const params = parseFunction(kernel.fn).params;
  if (!params.every((p) => p.type === "Identifier")) return undefined;
  const list = params.map((p) => `${escapeRegExp(p.name as string)}\\s*:\\s*([\\w.]+)`).join("\\s*,\\s*");
  const from = Math.max(0, source.search(new RegExp(`\\b${escapeRegExp(name)}\\b\\s*=`)));
  const m = new RegExp(`\\(\\s*${list}\\s*,?\\s*\\)`).exec(source.slice(from));
  const types = m?.slice(1).map((t) => ANNOTATION_TYPES[t!]);
  return types?.every((t) => t !== undefined) ? `void(${types.join(", ")})` : undefined;
}

/** How to give `name` a signature: its own when its annotations say, else an example. */
function signatureHint(file: string, name: string, kernel: Kernel): string {
  const suggested = suggestSignature(readFileSync(file, "utf8"), name, kernel);
  return suggested
    ? `pass --kernel ${name} --sig "${suggested}" (from its parameter annotations), or give it options.signature`
    : `pass --kernel ${name} --sig with its parameter types, e.g. --sig "void(float32[::1], int32)", or give it options.signature`;
}

/** Prints the PTX of FILE's kernels; returns the exit status. */
async function printPtx(file: string, opts: PtxOptions): Promise<number> {
  const target = ptxTarget(opts.arch);
  const exports = await importModule(file);
  let status = 0;
  for (const [name, kernel, sigs] of chosenKernels(file, exports, opts)) {
    if (sigs.length === 0) status = 1;
    for (const sig of sigs) process.stdout.write(`// kernel ${name}: ${sig}\n${kernel.inspectAsm(sig, target).trimEnd()}\n\n`);
  }
  return status;
}

/**
 * The kernels FILE exports (`--kernel`: the one of that name), each with the signatures to compile it
 * for: `--sig`, else those it has (options.signature); a kernel with none is named on stderr.
 */
function chosenKernels(file: string, exports: Record<string, unknown>, opts: PtxOptions): [string, Kernel, string[]][] {
  const kernels = Object.entries(exports).filter((e): e is [string, Kernel] => isKernel(e[1]));
  if (kernels.length === 0) throw new CliError(`${file} exports no kernels (values made by cuda.jit(fn) without { device: true })`);
  const chosen = opts.kernel === undefined ? kernels : kernels.filter(([name]) => name === opts.kernel);
  if (chosen.length === 0) {
    throw new CliError(`${file} exports no kernel named '${opts.kernel}'; its kernels: ${kernels.map(([n]) => n).join(", ")}`);
  }
  return chosen.map(([name, kernel]) => {
    const sigs = opts.sig !== undefined ? [kernel.compile(opts.sig)] : kernel.signatures;
    if (sigs.length === 0) process.stderr.write(`numbats: kernel '${name}' has no signature to compile for: ${signatureHint(file, name, kernel)}\n`);
    return [name, kernel, sigs];
  });
}

// ---------------------------------------------------------------------------
// numbats build

/** Writes the bundle of FILE's kernels to `output`; returns the exit status. */
async function buildBundle(file: string, output: string, opts: PtxOptions): Promise<number> {
  const archs = (opts.arch ?? `sm_${ptxTarget(undefined).computeCapability!.join("")}`).split(",").map(parseArch);
  const exports = await importModule(file);
  let status = 0;
  const kernels: BundledKernel[] = [];
  for (const [name, kernel, sigs] of chosenKernels(file, exports, opts)) {
    if (sigs.length === 0) status = 1;
    for (const signature of sigs) {
      const ir = kernel.typedIR(signature);
      const key = bundleKey(kernel, signature, ir.options.warpSize);
      if (key === undefined) throw new CliError(`kernel '${name}' captures a DeviceArray from env, which a bundle cannot hold: pass the array as an argument`);
      const artifacts = BACKENDS.flatMap((b) => b.aheadOfTime?.(ir, archs) ?? []);
      kernels.push({ name: kernel.name, sourceHash: sourceHash(kernel.fn), signature, warpSize: ir.options.warpSize, key, artifacts });
      process.stdout.write(`${name}: ${signature} (${artifacts.map((a) => `${a.target}${gpuCode(a, ir)}`).join(", ")})\n`);
    }
  }
  writeBundle(output, { version: compilerVersion(), kernels });
  process.stdout.write(`wrote ${output}: ${kernels.length} kernel specialisation${kernels.length === 1 ? "" : "s"}\n`);
  return status;
}

/** What a bundle holds for the GPU besides PTX: a cubin (linked), or the PTX is linked at load. */
function gpuCode(a: Artifact, ir: FunctionIR): string {
  if (a.binary) return ir.link?.length ? " + linked cubin" : " + cubin";
  return ir.link?.length && a.target.startsWith("cuda ") ? " (linked at load)" : "";
}

// ---------------------------------------------------------------------------

const USER_ERRORS = [CompileError, TypingError, LaunchError, CudaError, TypeError];

// ---------------------------------------------------------------------------
// numbats sanitize

/** Runs `command` with the sanitizer's environment; its exit status is ours. */
function sanitize(command: readonly string[], tool: string | undefined, schedule: string | undefined): number {
  if (command.length === 0) throw new UsageError("sanitize needs a command to run after --, e.g. numbats sanitize -- node app.js");
  const env: NodeJS.ProcessEnv = { ...process.env, NUMBATS_SANITIZE: tool ?? "all" };
  try {
    parseTools(env.NUMBATS_SANITIZE, "--tool");
    if (schedule !== undefined) {
      parseSchedule(schedule, "--schedule");
      env.NUMBATS_SIM_SCHEDULE = schedule;
    }
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const child = spawnSync(command[0]!, command.slice(1), { stdio: "inherit", env });
  if (child.error) throw new CliError(`could not run ${command[0]}: ${child.error.message}`);
  return child.status ?? 1;
}

// ---------------------------------------------------------------------------
// numbats playground

/** Serves the playground until the process is ended (Ctrl+C). */
async function playground(portText = String(PLAYGROUND_PORT)): Promise<number> {
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new UsageError(`--port ${portText} is not a port: use a whole number from 0 to 65535`);
  const dir = playgroundDir();
  if (dir === undefined) throw new CliError("the playground's page is made by the package build (npm run build writes dist/playground): run the built numbats");
  let served;
  try {
    served = await serveDirectory(dir, port);
  } catch (e) {
    const busy = (e as { code?: string }).code === "EADDRINUSE";
    throw new CliError(busy ? `port ${port} is in use: pass --port N (--port 0 picks a free one)` : `cannot serve the playground: ${(e as Error).message}`);
  }
  process.stdout.write(`numbats playground: ${served.url} (Ctrl+C to stop)\n`);
  return new Promise<number>(() => {}); // the server keeps the process alive
}

/** Our own and the library's errors carry a message for the user; anything else gets its stack. */
function describeError(e: unknown): string {
  if (e instanceof CliError) return e.message;
  if (USER_ERRORS.some((c) => e instanceof c)) return `${(e as Error).name}: ${(e as Error).message}`;
  return e instanceof Error ? e.stack ?? e.message : String(e);
}

async function main(argv: readonly string[]): Promise<number> {
  // run's own options come before the program; everything after it is the program's
  if (argv[0] === "run") {
    try {
      return await runRanks(parseRunArgs(argv.slice(1)));
    } catch (e) {
      throw e instanceof RunUsageError ? new UsageError(e.message) : e;
    }
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        sysinfo: { type: "boolean", short: "s" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
        kernel: { type: "string" },
        sig: { type: "string" },
        arch: { type: "string" },
        tool: { type: "string" },
        schedule: { type: "string" },
        port: { type: "string" },
        output: { type: "string", short: "o" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`numbats ${packageVersion() ?? "unknown"}\n`);
    return 0;
  }
  const ptxOnly = values.kernel !== undefined || values.sig !== undefined || values.arch !== undefined;
  if (values.sysinfo) {
    if (positionals.length > 0 || ptxOnly || values.port !== undefined) throw new UsageError("-s takes no other arguments");
    process.stdout.write(systemReport());
    return 0;
  }
  const [command, ...rest] = positionals;
  if ((values.tool !== undefined || values.schedule !== undefined) && command !== "sanitize") {
    throw new UsageError("--tool and --schedule go with sanitize");
  }
  if (values.port !== undefined && command !== "playground") throw new UsageError("--port goes with playground");
  if (values.output !== undefined && command !== "build") throw new UsageError("-o goes with build");
  if (command === "sanitize") {
    if (ptxOnly) throw new UsageError("sanitize takes --tool and --schedule only");
    return sanitize(rest, values.tool, values.schedule);
  }
  if (command === "playground") {
    if (rest.length > 0 || ptxOnly) throw new UsageError("playground takes --port only");
    return playground(values.port);
  }
  if (command === "build") {
    if (rest.length !== 1) throw new UsageError(`build takes one FILE; got ${rest.length}`);
    if (values.output === undefined) throw new UsageError("build needs -o BUNDLE, the file to write");
    return buildBundle(rest[0]!, values.output, { kernel: values.kernel, sig: values.sig, arch: values.arch });
  }
  if (command === "ptx") {
    if (rest.length !== 1) throw new UsageError(`ptx takes one FILE; got ${rest.length}`);
    return printPtx(rest[0]!, { kernel: values.kernel, sig: values.sig, arch: values.arch });
  }
  throw new UsageError(command === undefined ? "no command given" : `unknown command '${command}'`);
}

main(process.argv.slice(2)).then(
  (status) => { process.exitCode = status; },
  (e: unknown) => {
    if (e instanceof UsageError) {
      process.stderr.write(`numbats: ${e.message}\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`numbats: ${describeError(e)}\n`);
    process.exitCode = 1;
  },
);
