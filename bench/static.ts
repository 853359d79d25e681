// `npm run bench:static`: our PTX against nvcc's for the kernels of bench/gpu.ts,
// compared in the machine code (SASS) ptxas makes of each — no GPU needed.
//
//   node --import tsx bench/static.ts
//
// Per kernel and architecture (sm_90, sm_80): ours is our PTX assembled with
// `ptxas -O3 -v`; nvcc's is its CUDA C++ twin in peers/gpu_kernels.cu built with
// `nvcc -O3 -cubin -Xptxas -v`. From ptxas -v: registers, spill bytes, stack
// frame. From nvdisasm: SASS instructions in all, on the hot path (without the
// cold blocks defined at `coldBlocks`), and per source iteration of the hot loop
// (see `hotLoop`). Without nvdisasm it prints how to get it and reports the
// ptxas -v columns only.
//
// `BENCH_ONLY=math_f32,softmax` compares only the kernels named.
//
// Output: markdown on stdout and in $BENCH_OUT (default bench/out/) as static.md,
// with each kernel's SASS under static/ beside it.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compileToIR } from "../dist/src/compiler/index.js";
import { parseSignature } from "../dist/src/dtypes.js";
import { resolveDeviceFunction } from "../dist/src/device-functions.js";
import { emitPtx } from "../dist/src/backends/cuda/ptx/emit.js";
import { missingTools } from "../test/helpers/tools.js";
import { KERNELS, type KernelBench } from "./gpu.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ARCHES = [[9, 0], [8, 0]] as const;
type Arch = (typeof ARCHES)[number];
const smName = (a: Arch) => `sm_${a[0]}${a[1]}`;

// ---------------------------------------------------------------------------
// tools

function run(tool: string, args: string[]): string {
  const r = spawnSync(tool, args, { encoding: "utf8", maxBuffer: 1 << 28 });
  if (r.error) throw new Error(`${tool}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")} failed:\n${(r.stderr || r.stdout).trim()}`);
  return `${r.stdout}${r.stderr}`;
}

const works = (tool: string) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;

/** nvdisasm from $NVDISASM, the PATH, or an unpacked toolkit under ~/.cache/numbats or bench/out. */
function findNvdisasm(): string | undefined {
  const unpacked = [join(homedir(), ".cache", "numbats"), join(HERE, "out", "nvdisasm")].map((d) => join(d, "usr", "bin", "nvdisasm"));
  return [process.env.NVDISASM, "nvdisasm", ...unpacked].find((t) => t && (t === "nvdisasm" || existsSync(t)) && works(t));
}

const NVDISASM_HELP = [
  "nvdisasm not found: the SASS columns are left out. It ships with the CUDA toolkit (package cuda-nvdisasm-<version>",
  "in NVIDIA's repositories). On Debian, without root: `apt-get download nvidia-cuda-toolkit && dpkg-deb -x",
  "nvidia-cuda-toolkit_*.deb ~/.cache/numbats` (found there by this script), or put nvdisasm on the PATH or in $NVDISASM.",
].join(" ");

// ---------------------------------------------------------------------------
// ptxas -v

interface PtxasInfo { registers: number; stack: number; spillStores: number; spillLoads: number }

/** ptxas -v's resources for each entry function, by (mangled) name. */
function parsePtxasInfo(log: string): Map<string, PtxasInfo> {
  const out = new Map<string, PtxasInfo>();
  let entry = "", properties = "";
  for (const line of log.split("\n")) {
    const compiling = /Compiling entry function '([^']+)'/.exec(line);
    if (compiling) { entry = compiling[1]!; out.set(entry, { registers: 0, stack: 0, spillStores: 0, spillLoads: 0 }); continue; }
    const props = /Function properties for (\S+)/.exec(line);
    if (props) { properties = props[1]!; continue; }
    const info = out.get(entry);
    if (!info) continue;
    const frame = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(line);
    if (frame && properties === entry) Object.assign(info, { stack: +frame[1]!, spillStores: +frame[2]!, spillLoads: +frame[3]! });
    const regs = /Used (\d+) registers/.exec(line);
    if (regs) info.registers = +regs[1]!;
  }
  return out;
}

// ---------------------------------------------------------------------------
// SASS: basic blocks, the hot path, the hot loop

interface Instr { addr: number; text: string; op: string }
interface Block { start: number; instrs: Instr[]; succs: number[]; calls: number[]; slow: boolean }

/** Each function section of nvdisasm's output (`.text.NAME`), as its instruction and label lines. */
function sassSections(sass: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let lines: string[] | undefined;
  for (const line of sass.split("\n")) {
    const head = /^\/\/-+ \.text\.(\S+)/.exec(line);
    if (head) out.set(head[1]!, (lines = []));
    else lines?.push(line);
  }
  return out;
}

const INSTR = /^\s*\/\*([0-9a-f]+)\*\/\s+(.*?)\s*;/;
const LABEL = /^(\.L_x_\d+|\$?[\w$.]+):\s*$/;
const TARGET = /`\((\.L_x_\d+|\$?[^)]+)\)/;

/** An instruction's opcode, its guard predicate stripped. */
const opcode = (text: string) => text.replace(/^@!?U?P\w+\s+/, "").split(/\s+/)[0]!;

const usesLocal = (op: string) => /^(LDL|STL)\b/.test(op) || /^(LD|ST)\.LOCAL/.test(op);
/** A constant-bank load at a register index (`LDC R0, c[0x3][R1]`): the 2/π table of the float32 Payne–Hanek reduction. */
const indexesConstants = (ins: { op: string; text: string }) => /^LDC\b/.test(ins.op) && /c\[0x[0-9a-f]+\]\[R\d/.test(ins.text);
const usesF64 = (op: string) => /^(DADD|DMUL|DFMA|DSETP|DSET|DMNMX|DMMA)\b/.test(op) || /\.F64|64H/.test(op);

/**
 * Splits a function's SASS into basic blocks (at labels and after control transfers) with their
 * successors. NOPs and the closing `BRA` to itself are padding, not code, and are dropped.
 */
function basicBlocks(lines: string[], f64Kernel: boolean): Block[] {
  const labels = new Map<string, number>();
  const instrs: Instr[] = [];
  const starts = new Set<number>([0]);
  let pending: string[] = [];
  for (const line of lines) {
    const label = LABEL.exec(line);
    if (label) { pending.push(label[1]!); continue; }
    const m = INSTR.exec(line);
    if (!m) continue;
    const addr = parseInt(m[1]!, 16), text = m[2]!;
    for (const l of pending) labels.set(l, addr);
    if (pending.length) starts.add(addr);
    pending = [];
    const op = opcode(text);
    const target = TARGET.exec(text)?.[1];
    if (op === "NOP" || (op === "BRA" && target !== undefined && labels.get(target) === addr)) continue;
    instrs.push({ addr, text, op });
  }
  const endsBlock = (op: string) => /^(BRA|BRX|JMP|JMX|EXIT|RET|CALL)/.test(op);
  instrs.forEach((ins, i) => { if (endsBlock(ins.op) && instrs[i + 1]) starts.add(instrs[i + 1]!.addr); });

  const blocks: Block[] = [];
  for (const ins of instrs) {
    if (starts.has(ins.addr) || !blocks.length) blocks.push({ start: ins.addr, instrs: [], succs: [], calls: [], slow: false });
    blocks.at(-1)!.instrs.push(ins);
  }
  blocks.forEach((b, i) => {
    const last = b.instrs.at(-1)!;
    const guarded = /^@/.test(last.text);
    const target = TARGET.exec(last.text)?.[1];
    const to = target === undefined ? undefined : labels.get(target);
    const next = blocks[i + 1]?.start;
    const falls = guarded || !/^(BRA|BRX|JMP|JMX|EXIT|RET)/.test(last.op);
    if (last.op.startsWith("CALL") && to !== undefined) b.calls.push(to);
    else if (to !== undefined) b.succs.push(to);
    if (falls && next !== undefined) b.succs.push(next);
    b.slow = b.instrs.some((x) => usesLocal(x.op) || indexesConstants(x) || (!f64Kernel && usesF64(x.op)));
  });
  return blocks;
}

/**
 * The hot path: blocks reached from the entry without entering a cold block. Cold: a block that uses
 * local memory (LDL/STL: the math library's argument-reduction tables, spills), loads constant memory at a
 * register index (our float32 Payne–Hanek reduction's table), or float64 arithmetic
 * (in a kernel whose data is not float64: the slow paths of float32 functions), a subroutine reached
 * only by CALL (nvcc's `__internal_*_slowpath`, ptxas's IEEE division and square-root fallbacks), and
 * anything reached only through those.
 */
function hotBlocks(blocks: Block[]): Set<Block> {
  const at = new Map(blocks.map((b) => [b.start, b]));
  const hot = new Set<Block>();
  const work = [blocks[0]!];
  while (work.length) {
    const b = work.pop()!;
    if (hot.has(b) || b.slow) continue;
    hot.add(b);
    for (const s of b.succs) work.push(at.get(s)!);
  }
  return hot;
}

/** Elements a load instruction brings: its width over 32 bits (byte and half loads count 1). */
function elementsLoaded(op: string, space: "global" | "shared"): number {
  const ok = space === "global" ? /^(LDG|LD)(\.|$)/.test(op) : /^LDS(\.|$)/.test(op);
  if (!ok) return 0;
  const width = /\.(64|128)\b/.exec(op);
  return width ? +width[1]! / 32 : 1;
}

interface LoopCount { body: number; unroll: number; perIteration: number }

/**
 * The hot loop. Loops are found by their back-edges (a branch in a hot block to an earlier address);
 * a loop's body is the hot instructions from the target to the branch. Of the innermost loops (none
 * nested inside them) that load from the kernel's hot-loop memory space, it takes the one loading the
 * most elements: the unrolled main loop, where an unroll leaves a remainder loop beside it. Its unroll
 * factor is the elements it loads over those one source iteration loads; per iteration = body ÷ unroll.
 */
function hotLoop(blocks: Block[], hot: Set<Block>, hint: NonNullable<KernelBench["hotLoop"]>): LoopCount | undefined {
  const hotInstrs = blocks.filter((b) => hot.has(b)).flatMap((b) => b.instrs);
  const loops = blocks.filter((b) => hot.has(b)).flatMap((b) => {
    const last = b.instrs.at(-1)!;
    return b.succs.filter((s) => s <= last.addr && last.op === "BRA").map((s) => ({ from: s, to: last.addr }));
  });
  const innermost = loops.filter((l) => !loops.some((o) => o !== l && o.from >= l.from && o.to <= l.to));
  let best: LoopCount | undefined, bestLoads = 0;
  for (const l of innermost) {
    const body = hotInstrs.filter((i) => i.addr >= l.from && i.addr <= l.to);
    const loads = body.reduce((n, i) => n + elementsLoaded(i.op, hint.space), 0);
    if (loads <= bestLoads) continue;
    bestLoads = loads;
    const unroll = Math.max(1, Math.round(loads / hint.loads));
    best = { body: body.length, unroll, perIteration: body.length / unroll };
  }
  return best;
}

interface SassCount { total: number; hot: number; loop?: LoopCount }

function countSass(lines: string[], bench: KernelBench): SassCount {
  const blocks = basicBlocks(lines, bench.signature.includes("float64"));
  const hot = hotBlocks(blocks);
  const count = (bs: Iterable<Block>) => [...bs].reduce((n, b) => n + b.instrs.length, 0);
  return { total: count(blocks), hot: count(hot), loop: bench.hotLoop && hotLoop(blocks, hot, bench.hotLoop) };
}

// ---------------------------------------------------------------------------
// one side of the comparison: resources and SASS of a kernel

interface Side { info: PtxasInfo; sass?: SassCount }
interface Row { kernel: string; arch: string; ours: Side | { error: string }; nvcc: Side | { error: string } }

/** ptxas -v over our PTX for the kernel, and its SASS. */
function ours(b: KernelBench, arch: Arch, dir: string, nvdisasm: string | undefined, sassDir: string): Side {
  const ir = compileToIR(b.fn, parseSignature(b.signature).args, { env: b.options?.env, name: b.name, resolveDeviceFunction });
  const ptx = join(dir, `${b.name}.${smName(arch)}.ptx`), cubin = ptx.replace(/ptx$/, "cubin");
  writeFileSync(ptx, emitPtx(ir, { computeCapability: arch }).text);
  const infos = parsePtxasInfo(run("ptxas", ["-O3", `-arch=${smName(arch)}`, "-v", ptx, "-o", cubin]));
  const [name, info] = [...infos][0]!;
  return { info, sass: nvdisasm === undefined ? undefined : sassOf(nvdisasm, cubin, name, b, join(sassDir, `${b.name}.${smName(arch)}.ours.sass`)) };
}

function sassOf(nvdisasm: string, cubin: string, fn: string, b: KernelBench, keep: string): SassCount {
  const sass = run(nvdisasm, ["-c", cubin]);
  const lines = sassSections(sass).get(fn);
  if (!lines) throw new Error(`nvdisasm: no section .text.${fn} in ${cubin}`);
  writeFileSync(keep, lines.join("\n"));
  return countSass(lines, b);
}

/** nvcc's cubin of peers/gpu_kernels.cu for an arch, and ptxas -v's log of it. */
function nvccCubin(arch: Arch, dir: string): { cubin: string; infos: Map<string, PtxasInfo> } {
  const cubin = join(dir, `gpu_kernels.${smName(arch)}.cubin`);
  const log = run("nvcc", ["-O3", "-cubin", `-arch=${smName(arch)}`, "-Xptxas", "-v", "-o", cubin, join(HERE, "peers", "gpu_kernels.cu")]);
  return { cubin, infos: parsePtxasInfo(log) };
}

/** The twin's mangled name: `_Z` + length + name (parameter types follow). */
const mangled = (infos: Map<string, PtxasInfo>, peer: string) => [...infos.keys()].find((k) => k.startsWith(`_Z${peer.length}${peer}`));

// ---------------------------------------------------------------------------
// report

const errorText = (e: unknown) => (e instanceof Error ? e.message.split("\n").slice(0, 2).join(" ") : String(e));
const attempt = (f: () => Side): Side | { error: string } => { try { return f(); } catch (e) { return { error: errorText(e) }; } };

const fmtNum = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(2)}×` : "—");
const pair = (a: number | undefined, b: number | undefined) => `${a === undefined ? "—" : fmtNum(a)} / ${b === undefined ? "—" : fmtNum(b)}`;

function markdownRow(r: Row, withSass: boolean): string[] {
  if ("error" in r.ours || "error" in r.nvcc) {
    const why = ["error" in r.ours ? `ours: ${r.ours.error}` : "", "error" in r.nvcc ? `nvcc: ${r.nvcc.error}` : ""].filter(Boolean).join("; ");
    return [r.kernel, r.arch, why];
  }
  const o = r.ours, n = r.nvcc;
  const spill = (s: Side) => s.info.spillStores + s.info.spillLoads;
  const cols = [r.kernel, r.arch, pair(o.info.registers, n.info.registers), pair(spill(o), spill(n)), pair(o.info.stack, n.info.stack)];
  if (!withSass) return cols;
  const os = o.sass!, ns = n.sass!;
  const loop = (s: SassCount) => (s.loop ? `${s.loop.body} ÷ ${s.loop.unroll}` : "no loop");
  const hasLoop = os.loop || ns.loop;
  return [...cols, pair(os.total, ns.total), ratio(os.total, ns.total), pair(os.hot, ns.hot), ratio(os.hot, ns.hot),
    hasLoop ? `${loop(os)} / ${loop(ns)}` : "", hasLoop ? pair(os.loop?.perIteration, ns.loop?.perIteration) : "", ratio(os.loop?.perIteration, ns.loop?.perIteration)];
}

const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

function report(rows: Row[], nvdisasm: string | undefined, versions: string): string {
  const head = ["kernel", "arch", "registers ours / nvcc", "spill bytes", "stack bytes"];
  if (nvdisasm) head.push("SASS ours / nvcc", "ratio", "hot-path SASS", "ratio", "hot loop: body ÷ unroll", "per iteration", "ratio");
  return [
    "# numbats static comparison: our PTX against nvcc's, in SASS",
    "",
    `${new Date().toISOString()} · ${versions}`,
    "",
    "Ours: our PTX through `ptxas -O3 -v`; nvcc: the CUDA C++ twin (bench/peers/gpu_kernels.cu) through `nvcc -O3 -cubin -Xptxas -v`. " +
      "Spill bytes: stores + loads. SASS: instructions in the kernel's section (subroutines included, NOP padding not). " +
      "Hot path: without the blocks that use local memory, constant memory at a register index, or float64 arithmetic (float64 counts as hot in float64 kernels), " +
      "subroutines reached only by CALL (IEEE division / square-root slow paths), and what is reached only through them. " +
      "Hot loop: the innermost loop (a backward branch) loading the most elements from the kernel's hot-loop memory; " +
      "unroll = elements it loads ÷ elements one source iteration loads; per iteration = body ÷ unroll, loop overhead included.",
    "",
    nvdisasm ? "" : `**${NVDISASM_HELP}**\n`,
    table(head, rows.map((r) => markdownRow(r, nvdisasm !== undefined))),
  ].join("\n");
}

// ---------------------------------------------------------------------------

function main(): void {
  const missing = missingTools("ptxas", "nvcc");
  if (missing) {
    process.stderr.write(`${missing}: this benchmark needs ptxas and nvcc.\n`);
    process.exit(1);
  }
  const nvdisasm = findNvdisasm();
  if (!nvdisasm) process.stderr.write(`${NVDISASM_HELP}\n`);
  const outDir = resolve(process.env.BENCH_OUT ?? join(HERE, "out"));
  const sassDir = join(outDir, "static");
  mkdirSync(sassDir, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), "numbats-static-"));
  const rows: Row[] = [];
  const only = process.env.BENCH_ONLY?.split(",");
  try {
    for (const arch of ARCHES) {
      const peer = nvccCubin(arch, dir);
      for (const b of KERNELS.filter((k) => k.peer !== undefined && (!only || only.includes(k.name)))) {
        const name = mangled(peer.infos, b.peer!);
        const nvcc = attempt(() => {
          if (!name) throw new Error(`no kernel ${b.peer} in gpu_kernels.cu`);
          return { info: peer.infos.get(name)!, sass: nvdisasm === undefined ? undefined : sassOf(nvdisasm, peer.cubin, name, b, join(sassDir, `${b.name}.${smName(arch)}.nvcc.sass`)) };
        });
        rows.push({ kernel: b.name, arch: smName(arch), ours: attempt(() => ours(b, arch, dir, nvdisasm, sassDir)), nvcc });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const version = (tool: string) => run(tool, ["--version"]).trim().split("\n").at(-1)!.trim();
  const versions = [`ptxas ${version("ptxas")}`, `nvcc ${version("nvcc")}`, nvdisasm ? `nvdisasm ${version(nvdisasm)}` : "no nvdisasm"].join(" · ");
  const markdown = report(rows, nvdisasm, versions) + "\n";
  process.stdout.write(markdown);
  writeFileSync(join(outDir, "static.md"), markdown);
  process.stdout.write(`\nwritten: ${join(outDir, "static.md")} (SASS of each kernel in ${sassDir})\n`);
  if (rows.some((r) => "error" in r.ours)) process.exitCode = 1;
}

main();
