// One case of the driver-fault sweep (fault-cases.ts) in its own process on the emulated GPU:
//   fault-child.ts ID count   the case without a failure: how often its call was made before the op
//                             (what the op does then, a KernelError it throws among it, does not matter here)
//   fault-child.ts ID fail    the case with its failure (for fakecuda cases the test sets FAKECUDA_FAIL), and the checks
// Prints one line `fault-result {"before": n, "problems": [...]}`; no problems is a pass.
//
// Every driver entry point numbats calls goes through a counting wrapper here (the CudaDriver's
// table of koffi functions), which also holds the stand-ins for what fakecuda lacks (IPC, peer
// access) and says in which phase (setup, op, after) each call failed.

import { CudaError, NcclError, cuda } from "../../src/index.js";
import { cudaDriver } from "../../src/backends/cuda/driver/driver.js";
import { CASES, codeOf, isSticky, type FaultCase } from "./fault-cases.js";
import { World, collect, contents, same } from "./fault-world.js";

type Phase = "setup" | "op" | "after";
type Entry = (...args: never[]) => number;

const [id, mode] = process.argv.slice(2) as [string, "count" | "fail"];
const found = CASES.find((x) => x.id === id);
if (!found) throw new Error(`no driver-fault case '${id}'`);
const c: FaultCase = found;
const inject = c.inject ?? "fakecuda";

let phase: Phase = "setup";
const counts = new Map<string, number>();
let atOp = new Map<string, number>();
const failures: { call: string; n: number; rc: number; phase: Phase }[] = [];
const sinceOp = (call: string) => (counts.get(call) ?? 0) - (atOp.get(call) ?? 0);

/** JavaScript stand-ins for what fakecuda does not have: IPC hands the allocation's own address back, a peer copy is cuMemcpyAsync. */
function standins(real: Record<string, Entry>): Record<string, (...args: never[]) => number> {
  const ask = real.cuMemcpyAsync as unknown as (dst: bigint, src: bigint, n: number, stream: unknown) => number;
  return {
    cuIpcGetMemHandle: (handle: Uint8Array, ptr: bigint) => (new DataView(handle.buffer, handle.byteOffset).setBigUint64(0, BigInt(ptr), true), 0),
    cuIpcOpenMemHandle_v2: (out: number[], h: { reserved: number[] }) => (out[0] = Number(new DataView(Uint8Array.from(h.reserved).buffer).getBigUint64(0, true)), 0),
    cuIpcCloseMemHandle: () => 0,
    cuDeviceCanAccessPeer: (can: number[]) => (can[0] = 1, 0),
    cuCtxEnablePeerAccess: () => 0,
    cuMemcpyPeerAsync: (dst: bigint, _dstCtx: unknown, src: bigint, _srcCtx: unknown, n: number, stream: unknown) => ask(dst, src, n, stream),
  };
}

/** Wraps every entry point of the driver numbats loaded: counts, stand-ins, failures by phase. */
function instrument(): void {
  const load = cudaDriver();
  if (!load.ok) throw new Error(load.reason);
  const { driver } = load;
  if (c.oldDriver) (driver.missing as string[]).push("cuLaunchKernelEx");
  const api = driver.api as unknown as Record<string, Entry>;
  const real = { ...api };
  const own = inject === "standin" ? standins(real) : {};
  for (const call of Object.keys(api)) {
    const impl = (own[call] ?? real[call]!) as (...args: unknown[]) => number;
    api[call] = ((...args: unknown[]) => {
      const n = (counts.get(call) ?? 0) + 1;
      counts.set(call, n);
      const injected = inject === "standin" && call === c.call && phase === "op" && sinceOp(call) === (c.nth ?? 1);
      const rc = injected ? codeOf(c) : impl(...args);
      if (rc !== 0 && !call.startsWith("cuGetError")) failures.push({ call, n, rc, phase });
      return rc;
    }) as Entry;
  }
}

const snapshot = (views: readonly ArrayBufferView[]) => views.map((v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice());
const describe = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e));

/** The error the op must throw: the class, naming the call, with the code. */
function checkError(error: unknown, problems: string[]): void {
  const code = codeOf(c);
  if (c.expect === "none") {
    if (error !== undefined) problems.push(`the op threw ${describe(error)}; it must not`);
    return;
  }
  const cls = inject === "nccl" ? NcclError : CudaError;
  if (!(error instanceof cls)) {
    problems.push(`the op ${error === undefined ? "did not throw" : `threw ${describe(error)}`}; expected a ${cls.name} from ${c.call} (${code})`);
    return;
  }
  if (error.call !== c.call || error.code !== code) problems.push(`the ${cls.name} names ${error.call} (${error.code}); expected ${c.call} (${code}): ${describe(error)}`);
}

/** The injected failure hit the op, and it was the call's first use (or a later one) of the process. */
function checkInjection(problems: string[]): void {
  if (inject === "kernel" || inject === "nccl") return;
  const before = atOp.get(c.call) ?? 0;
  if (c.use === "first" && before !== 0) problems.push(`${c.call} was called ${before} time(s) before the op: not its first use`);
  if (c.use === "later" && before === 0) problems.push(`${c.call} was not called before the op: not a later use`);
  const hit = failures.filter((f) => f.call === c.call && f.rc === codeOf(c));
  if (!hit.some((f) => f.phase === "op")) problems.push(`the injected failure of ${c.call} did not happen during the op (failures: ${JSON.stringify(failures)})`);
  if (hit.some((f) => f.phase === "setup")) problems.push(`the injected failure of ${c.call} hit the setup`);
}

async function main(): Promise<{ before?: number; problems: string[] }> {
  instrument();
  const w = new World();
  const problems: string[] = [];
  const memory = c.memory !== false;
  const fresh = memory ? cuda.getMemoryInfo().free : undefined;
  const s = await c.setup?.(w);
  const host = c.host?.(s) ?? [];
  const hostBefore = snapshot(host);
  const memBefore = memory ? cuda.getMemoryInfo().free : undefined;
  atOp = new Map(counts);

  phase = "op";
  if (inject === "nccl" && mode === "fail") process.env.STANDIN_NCCL_FAIL = c.call;
  let error: unknown;
  try {
    await c.run(w, s);
  } catch (e) {
    error = e;
  } finally {
    delete process.env.STANDIN_NCCL_FAIL;
    phase = "after";
  }
  const opCalls = new Map([...counts.keys()].map((k) => [k, sinceOp(k)]));

  if (mode === "count") {
    if ((opCalls.get(c.call) ?? 0) < (c.nth ?? 1)) problems.push(`the op calls ${c.call} ${opCalls.get(c.call) ?? 0} time(s), fewer than ${c.nth ?? 1}`);
    return { before: atOp.get(c.call) ?? 0, problems };
  }

  checkError(error, problems);
  checkInjection(problems);
  for (const [call, n] of Object.entries(c.calls ?? {})) {
    if (opCalls.get(call) !== n) problems.push(`the op called ${call} ${opCalls.get(call) ?? 0} time(s); expected ${n}`);
  }
  snapshot(host).forEach((bytes, i) => {
    const k = bytes.findIndex((b, j) => b !== hostBefore[i]![j]);
    if (k >= 0) problems.push(`host array ${i} changed at byte ${k}`);
  });

  const after = async (what: string, step: () => unknown) => {
    try {
      await step();
    } catch (e) {
      problems.push(`${what}: ${describe(e)}`);
    }
  };
  if (isSticky(c)) {
    // the recovery from a sticky error: a fresh context, nothing of the old one left
    await after("cuda.close() after the sticky error", () => cuda.close());
    if (fresh !== undefined) await after("memory after the recovery", () => {
      const free = cuda.getMemoryInfo().free;
      if (free !== fresh) throw new Error(`${fresh - free} bytes of device memory still allocated`);
    });
  } else {
    if (memBefore !== undefined) await after("device memory", async () => {
      if (c.gc) await collect();
      const free = cuda.getMemoryInfo().free;
      if (free !== memBefore) throw new Error(`${memBefore - free} bytes leaked by the failed op`);
    });
    for (const [d, want] of c.device?.(s) ?? []) await after("a device array the op was given", () => same(contents(d), want, "its elements"));
  }
  if (c.check) await after("after the op", () => c.check!(w, s));
  await after("the next operation", () => (c.next ? c.next(w, s) : w.canary()));
  return { problems };
}

main().then(
  (result) => {
    console.log(`fault-result ${JSON.stringify(result)}`);
    process.exit(0);
  },
  (e: unknown) => {
    console.log(`fault-result ${JSON.stringify({ problems: [`the case itself failed (${phase}): ${e instanceof Error ? e.stack : String(e)}`] })}`);
    process.exit(0);
  },
);
