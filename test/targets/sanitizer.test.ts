// The simulator as a sanitizer (docs/sanitizer.md): a gallery of buggy kernels, each caught by the
// right tool with the right kind and source line, and each one's fixed version with no finding and the
// host-computed result; the random schedule; every example and kernel case with zero findings; the CLI.
// Every kernel launched here is also compiled to PTX and assembled with ptxas.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cuda, float32, float64, int16, int32, uint8, ndarray, LaunchError, SanitizerError, type Complex, type DeviceArray, type Kernel, type KernelArray1, type KernelArray2 } from "../../src/index.js";
import { leakReport, parseSchedule, parseTools, setSimChecks, simChecks } from "../../src/backends/sim/runtime/sanitize.js";
import { hasPtxas, ptxasCheck, PTXAS_TARGETS } from "../helpers/ptxas.js";
import type { Backend } from "../../src/abi/backend.js";
import type { SanitizerTool } from "../../src/errors.js";
import type { CudaProbe } from "../../src/backends/cuda/driver/detect.js";
import { selectForced } from "../../src/runtime/select.js";
import { CUDA_BACKEND } from "../../src/backends/cuda/index.js";
import { SIM_BACKEND } from "../../src/backends/sim/index.js";
import { SIM_DEVICE } from "../../src/backends/sim/runtime/sim-backend.js";

process.env.NUMBATS_TARGET = "sim";

const root = fileURLToPath(new URL("../..", import.meta.url));
const thisFile = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");

/** `test/targets/sanitizer.test.ts:N`, N the line of this file holding `snippet` (exactly one does) */
function at(snippet: string): string {
  const lines = thisFile.flatMap((l, i) => (l.includes(snippet) && !l.includes(`at("${snippet}`) ? [i + 1] : []));
  assert.equal(lines.length, 1, `'${snippet}' must be on exactly one line of this file`);
  return `test/targets/sanitizer.test.ts:${lines[0]}`;
}

// a kernel's every launched specialisation through ptxas
const launched = new Set<Kernel>();
function assemble(k: Kernel): void {
  if (launched.has(k) || !hasPtxas()) return;
  launched.add(k);
  for (const sig of k.signatures) for (const t of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(sig, { computeCapability: t.computeCapability }), t.arch);
}

/** runs `launch` with every tool on (or those named); returns the SanitizerError it threw (or undefined) */
function sanitized(k: Kernel, launch: () => void, tools: SanitizerTool[] | "all" = "all"): SanitizerError | undefined {
  const before = simChecks();
  setSimChecks({ tools });
  try {
    launch();
    return undefined;
  } catch (e) {
    if (e instanceof SanitizerError) return e;
    throw e;
  } finally {
    setSimChecks(before);
    assemble(k);
  }
}

interface Expect { tool: string; kind: string; where: string[]; array?: string }

function expectFinding(e: SanitizerError | undefined, want: Expect): void {
  assert.ok(e, `expected a ${want.tool} finding, got none`);
  assert.ok(e instanceof LaunchError, "a SanitizerError is a LaunchError");
  const f = e.findings.find((x) => x.tool === want.tool && x.kind === want.kind);
  assert.ok(f, `no ${want.tool} ${want.kind} finding in:\n${e.message}`);
  assert.deepEqual([...f.where].sort(), [...want.where].sort(), e.message);
  if (want.array) assert.equal(f.array, want.array);
  for (const w of want.where) assert.ok(e.message.includes(w), `the message names ${w}:\n${e.message}`);
}

after(() => setSimChecks(undefined));

const TPB = 8;
const hostMatmul = (A: Float32Array, B: Float32Array, n: number) => {
  const C = new Float32Array(n * n);
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) { let t = 0; for (let k = 0; k < n; k++) t += A[y * n + k]! * B[k * n + x]!; C[y * n + x] = t; }
  return C;
};
const ints = (n: number, mod: number) => Float32Array.from({ length: n }, (_, i) => (i * 7) % mod);

describe("racecheck", () => {
  const tiled = (sync: boolean) => cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
    const sA = cuda.shared.array([TPB, TPB], float32);
    const sB = cuda.shared.array([TPB, TPB], float32);
    const [x, y] = cuda.grid(2);
    const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
    let acc = float32(0);
    for (let i = 0; i < cuda.gridDim.x; i++) {
      sA[ty][tx] = A[y][i * TPB + tx]; // tiled: load sA
      sB[ty][tx] = B[i * TPB + ty][x];
      cuda.syncthreads();
      for (let k = 0; k < TPB; k++) acc += sA[ty][k] * sB[k][tx]; // tiled: use tiles
      if (sync) cuda.syncthreads();
    }
    C[y][x] = acc;
  }, { env: { TPB, sync } });

  test("tiled matmul without the second barrier: the next tile's load races with the reads of this one", () => {
    const n = 16;
    const a = ints(n * n, 5), b = ints(n * n, 3);
    const run = (k: Kernel) => {
      const C = cuda.deviceArray([n, n], float32);
      k.configure([2, 2], [TPB, TPB])(cuda.toDevice(a).reshape(n, n), cuda.toDevice(b).reshape(n, n), C);
      return C.copyToHost();
    };
    const buggy = tiled(false);
    expectFinding(sanitized(buggy, () => run(buggy)), {
      tool: "racecheck", kind: "write-after-read", array: "sA", where: [at("// tiled: use tiles"), at("// tiled: load sA")],
    });
    const fixed = tiled(true);
    let C: unknown;
    assert.equal(sanitized(fixed, () => { C = run(fixed); }), undefined);
    assert.deepEqual(Array.from((C as { data: Float32Array }).data), Array.from(hostMatmul(a, b, n)));
  });

  const tree = (sync: boolean) => cuda.jit((a: Float32Array, out: Float32Array) => {
    const s = cuda.shared.array(64, float32);
    const t = cuda.threadIdx.x;
    s[t] = a[cuda.grid(1)];
    cuda.syncthreads();
    for (let stride = 32; stride > 0; stride >>= 1) {
      if (t < stride) s[t] += s[t + stride]; // tree: add pair
      if (sync) cuda.syncthreads();
    }
    if (t === 0) out[cuda.blockIdx.x] = s[0];
  }, { env: { sync } });

  test("tree reduction without a barrier per level: a level reads what the previous one still writes", () => {
    const a = ints(128, 11), out = new Float32Array(2);
    const buggy = tree(false);
    const e = sanitized(buggy, () => buggy.configure(2, 64)(a, out));
    expectFinding(e, { tool: "racecheck", kind: "write-after-read", array: "s", where: [at("// tree: add pair"), at("// tree: add pair")] });
    assert.deepEqual(Array.from(out), [0, 0], "the host arrays are left as they were");
    const fixed = tree(true);
    assert.equal(sanitized(fixed, () => fixed.configure(2, 64)(a, out)), undefined);
    const want = [0, 1].map((b) => a.slice(64 * b, 64 * b + 64).reduce((p, q) => p + q, 0));
    assert.deepEqual(Array.from(out), want);
  });

  test("a non-atomic += into one element races across threads; cuda.atomic.add does not", () => {
    const plain = cuda.jit((x: Int32Array, total: Int32Array) => {
      total[0] += x[cuda.grid(1)]; // sum: plain +=
    });
    const atomic = cuda.jit((x: Int32Array, total: Int32Array) => {
      cuda.atomic.add(total, 0, x[cuda.grid(1)]);
    });
    // (host names differ from the kernels': tsx renames a parameter that shadows a name of its scope)
    const values = Int32Array.from({ length: 64 }, (_, i) => i), sum = new Int32Array(1);
    expectFinding(sanitized(plain, () => plain.configure(2, 32)(values, sum)), {
      tool: "racecheck", kind: "read-after-write", array: "total", where: [at("// sum: plain +="), at("// sum: plain +=")],
    });
    assert.equal(sum[0], 0);
    assert.equal(sanitized(atomic, () => atomic.configure(2, 32)(values, sum)), undefined);
    assert.equal(sum[0], (63 * 64) / 2);
  });

  test("blocks writing one global element race (last writer wins); different blocks are ordered only by grid sync", () => {
    const last = cuda.jit((out: Int32Array) => {
      if (cuda.threadIdx.x === 0) out[0] = cuda.blockIdx.x; // winner: every block writes
    });
    const one = cuda.jit((out: Int32Array) => {
      if (cuda.threadIdx.x === 0 && cuda.blockIdx.x === cuda.gridDim.x - 1) out[0] = cuda.blockIdx.x;
    });
    const result = new Int32Array(1);
    const e = sanitized(last, () => last.configure(4, 32)(result));
    expectFinding(e, { tool: "racecheck", kind: "write-after-write", array: "out", where: [at("// winner: every block writes"), at("// winner: every block writes")] });
    const f = e!.findings[0]!;
    assert.notDeepEqual(f.blocks[0], f.blocks[1], "two different blocks");
    assert.equal(sanitized(one, () => one.configure(4, 32)(result)), undefined);
    assert.equal(result[0], 3);
  });

  test("warp operations order the lanes they name: a shuffle-free exchange through shared memory needs syncwarp", () => {
    const exchange = (sync: boolean) => cuda.jit((out: Int32Array) => {
      const s = cuda.shared.array(32, int32);
      const t = cuda.threadIdx.x;
      s[t] = t * 2;
      if (sync) cuda.syncwarp();
      out[t] = s[31 - t]; // warp: read neighbour
    }, { env: { sync } });
    const out = new Int32Array(32);
    const buggy = exchange(false);
    expectFinding(sanitized(buggy, () => buggy.configure(1, 32)(out)), {
      tool: "racecheck", kind: "read-after-write", array: "s", where: [at("s[t] = t * 2;"), at("// warp: read neighbour")],
    });
    const fixed = exchange(true);
    assert.equal(sanitized(fixed, () => fixed.configure(1, 32)(out)), undefined);
    assert.deepEqual(Array.from(out), Array.from({ length: 32 }, (_, t) => (31 - t) * 2));
  });
});

describe("initcheck", () => {
  const inc = cuda.jit((x: Float32Array) => {
    const i = cuda.grid(1);
    if (i < x.length) x[i] += 1; // init: read device
  });

  test("a read of cuda.deviceArray memory nothing wrote; after a host copy there is none", () => {
    setSimChecks({ tools: "all" }); // from the allocation on, as NUMBATS_SANITIZE would be (reset by after())
    const d = cuda.deviceArray(16, float32);
    expectFinding(sanitized(inc, () => inc.configure(1, 16)(d)), {
      tool: "initcheck", kind: "uninitialized-read", array: "x", where: [at("// init: read device")],
    });
    d.copyToDevice(new Float32Array(16).fill(2));
    assert.equal(sanitized(inc, () => inc.configure(1, 16)(d)), undefined);
    assert.deepEqual(Array.from(d.copyToHost()), new Array(16).fill(3));
    // a kernel's writes count too: a second launch reads what the first wrote
    const e = cuda.deviceArray(16, float32);
    const fill = cuda.jit((x: Float32Array) => { x[cuda.grid(1)] = 5; });
    assert.equal(sanitized(fill, () => fill.configure(1, 16)(e)), undefined);
    assert.equal(sanitized(inc, () => inc.configure(1, 16)(e)), undefined);
    d.free(); e.free();
    setSimChecks(undefined);
  });

  test("shared memory this block never wrote, and a local array element this thread never wrote", () => {
    const shared = (write: boolean) => cuda.jit((out: Float32Array) => {
      const s = cuda.shared.array(32, float32);
      const t = cuda.threadIdx.x;
      if (write || t < 16) s[t] = t;
      cuda.syncthreads();
      out[t] = s[31 - t]; // init: read shared
    }, { env: { write } });
    const local = (write: boolean) => cuda.jit((out: Float32Array) => {
      const l = cuda.local.array(4, float32);
      l[0] = 1; l[1] = 2; l[2] = 3;
      if (write) l[3] = 4;
      out[cuda.grid(1)] = l[0] + l[3]; // init: read local
    }, { env: { write } });
    const out = new Float32Array(32);
    const s0 = shared(false), s1 = shared(true);
    const l0 = local(false), l1 = local(true);
    expectFinding(sanitized(s0, () => s0.configure(1, 32)(out)), { tool: "initcheck", kind: "uninitialized-read", array: "s", where: [at("// init: read shared")] });
    expectFinding(sanitized(l0, () => l0.configure(1, 32)(out)), { tool: "initcheck", kind: "uninitialized-read", array: "l", where: [at("// init: read local")] });
    assert.equal(sanitized(s1, () => s1.configure(1, 32)(out)), undefined);
    assert.deepEqual(Array.from(out), Array.from({ length: 32 }, (_, t) => 31 - t));
    assert.equal(sanitized(l1, () => l1.configure(1, 32)(out)), undefined);
    assert.deepEqual(Array.from(out), new Array(32).fill(5));
  });
});

describe("the instrumented variants", () => {
  // one kernel with a race (every thread writes total[0]), a read of memory nothing wrote and, launched
  // on a freed array, a use after free: each tool alone finds its own findings and none of the others'
  const racy = cuda.jit((x: Float32Array, total: Float32Array) => {
    total[0] = x[cuda.grid(1)]; // variants: read x, write total
  });
  const kinds = (e: SanitizerError | undefined) => (e?.findings ?? []).map((f) => `${f.tool} ${f.kind}`).sort();

  test("each tool alone finds its own findings, on live and freed arrays alike", () => {
    setSimChecks({ tools: "all" }); // allocations tracked from here on (reset by after())
    const x = cuda.deviceArray(64, float32), total = cuda.toDevice(new Float32Array(1));
    const launch = () => racy.configure(2, 32)(x, total);
    assert.deepEqual(kinds(sanitized(racy, launch, ["racecheck"])), ["racecheck write-after-write"]);
    assert.deepEqual(kinds(sanitized(racy, launch, ["initcheck"])), ["initcheck uninitialized-read"]);
    assert.deepEqual(kinds(sanitized(racy, launch, ["memcheck"])), []);
    assert.deepEqual(kinds(sanitized(racy, launch, ["synccheck"])), []);
    assert.deepEqual(kinds(sanitized(racy, launch)), ["initcheck uninitialized-read", "racecheck write-after-write"]);
    const line = at("// variants: read x, write total");
    expectFinding(sanitized(racy, launch), { tool: "racecheck", kind: "write-after-write", array: "total", where: [line, line] });
    expectFinding(sanitized(racy, launch), { tool: "initcheck", kind: "uninitialized-read", array: "x", where: [line] });
    x.free();
    // a freed array: every access reported (memcheck), the other tools' findings as on a live array
    assert.deepEqual(kinds(sanitized(racy, launch, ["memcheck"])), ["memcheck use-after-free"]);
    assert.equal(sanitized(racy, launch, ["memcheck"])!.message.includes("(64 times)"), true);
    const all = sanitized(racy, launch);
    assert.deepEqual(kinds(all), ["initcheck uninitialized-read", "memcheck use-after-free", "racecheck write-after-write"]);
    expectFinding(all, { tool: "memcheck", kind: "use-after-free", array: "x", where: [line] });
    expectFinding(all, { tool: "racecheck", kind: "write-after-write", array: "total", where: [line, line] });
    // and the same kernel on a live array again: nothing for memcheck
    const live = cuda.toDevice(new Float32Array(64));
    assert.equal(sanitized(racy, () => racy.configure(1, 1)(live, total), ["memcheck"]), undefined);
    live.free(); total.free();
    setSimChecks(undefined);
  });

  test("a kernel's writes mark whole elements written, for elements of 1, 2, 4 and 8 bytes", () => {
    const evens = cuda.jit((x: KernelArray1<number>) => {
      const i = cuda.grid(1);
      if (i % 2 === 0) x[i] = i + 1;
    });
    const odd = cuda.jit((x: KernelArray1<number>, out: Float64Array) => {
      const i = cuda.grid(1);
      out[i] = x[i]; // variants: read every element
    });
    setSimChecks({ tools: ["initcheck"] });
    for (const dtype of [uint8, int16, float32, float64]) {
      const x = cuda.deviceArray(64, dtype), out = new Float64Array(64);
      assert.equal(sanitized(evens, () => evens.configure(2, 32)(x), ["initcheck"]), undefined);
      const e = sanitized(odd, () => odd.configure(2, 32)(x, out), ["initcheck"]);
      expectFinding(e, { tool: "initcheck", kind: "uninitialized-read", array: "x", where: [at("// variants: read every element")] });
      assert.deepEqual(e!.findings.map((f) => f.index), [[1]], `${dtype.name}: the first odd element`);
      assert.ok(e!.message.includes("(32 times)"), `${dtype.name}: every odd element, once each:\n${e!.message}`);
      assert.deepEqual(Array.from(x.copyToHost() as ArrayLike<number>).filter((_, i) => i % 2 === 0), Array.from({ length: 32 }, (_, k) => 2 * k + 1), dtype.name);
      x.free();
    }
    setSimChecks(undefined);
  });
});

describe("the checks inline in the kernel's code", () => {
  // A launch with a freed array (here `unused`, which the kernel never touches) runs the variant whose
  // every access takes the sanitizer's hooks: each kernel must give the same findings, counts and
  // messages with the common cases checked inline, in every shape (loop, phases, generators).
  const loads = cuda.jit((A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>, unused: Float32Array) => {
    const sA = cuda.shared.array([TPB, TPB], float32);
    const sB = cuda.shared.array([TPB, TPB], float32);
    const [x, y] = cuda.grid(2);
    const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
    let acc = float32(0);
    for (let i = 0; i < cuda.gridDim.x; i++) {
      sA[ty][tx] = A[y][i * TPB + tx];
      sB[ty][tx] = B[i * TPB + ty][x];
      cuda.syncthreads();
      for (let k = 0; k < TPB; k++) acc += sA[ty][k] * sB[k][tx] + A[y][k] * B[k][x];
    }
    C[y][x] = acc; // (no second barrier: the next tiles' loads race with these reads)
  }, { env: { TPB } });
  const global = cuda.jit((x: Float32Array, y: Float32Array, out: Float32Array, unused: Float32Array) => {
    const i = cuda.grid(1);
    y[i] = x[i] + x[(i + 1) % x.length]; // x: half of it never written
    if (cuda.threadIdx.x === 0) out[0] = y[i] + out[1];
    out[1] = cuda.blockIdx.x;
  });

  function findings(freed: boolean, seed: number | undefined, launch: (unused: DeviceArray) => void): string {
    const unused = cuda.toDevice(new Float32Array(1));
    if (freed) unused.free();
    const before = simChecks();
    setSimChecks({ tools: "all", seed });
    try {
      launch(unused);
      return "none";
    } catch (e) {
      if (!(e instanceof SanitizerError)) throw e;
      return `${JSON.stringify(e.findings)}\n${e.message}`;
    } finally {
      setSimChecks(before);
      if (!freed) unused.free();
    }
  }

  for (const seed of [undefined, 7]) {
    test(`find what the hooks find: shared and global races, second readers, uninitialized reads (${seed === undefined ? "fixed order" : "random order, generators"})`, () => {
      const n = 16, a = ints(n * n, 5), b = ints(n * n, 3);
      const matmul = (unused: DeviceArray) => loads.configure([2, 2], [TPB, TPB])(cuda.toDevice(a).reshape(n, n), cuda.toDevice(b).reshape(n, n), cuda.deviceArray([n, n], float32), unused);
      const vector = (unused: DeviceArray) => {
        const x = cuda.deviceArray(128, float32);
        x.slice([0, 64]).copyToDevice(ints(64, 9));
        global.configure(4, 32)(x, cuda.deviceArray(128, float32), cuda.toDevice(new Float32Array(2)), unused);
      };
      for (const [k, launch] of [[loads, matmul], [global, vector]] as const) {
        const inline = findings(false, seed, launch);
        assert.notEqual(inline, "none");
        assert.equal(inline, findings(true, seed, launch));
        assemble(k);
      }
    });
  }
});

describe("synccheck", () => {
  test("a divergent barrier: threads of one block wait at different syncthreads", () => {
    const divergent = (uniform: boolean) => cuda.jit((out: Float32Array) => {
      const t = cuda.threadIdx.x;
      if (uniform || t < 16) {
        cuda.syncthreads(); // sync: first barrier
      } else {
        cuda.syncthreads(); // sync: second barrier
      }
      out[t] = t;
    }, { env: { uniform } });
    const out = new Float32Array(32);
    const bad = divergent(false), good = divergent(true);
    expectFinding(sanitized(bad, () => bad.configure(1, 32)(out)), {
      tool: "synccheck", kind: "divergent-barrier", where: [at("// sync: first barrier"), at("// sync: second barrier")],
    });
    assert.equal(sanitized(good, () => good.configure(1, 32)(out)), undefined);
    assert.deepEqual(Array.from(out), Array.from({ length: 32 }, (_, t) => t));
  });

  test("an early return before a barrier: the barrier is one some threads never reach", () => {
    const early = (guarded: boolean) => cuda.jit((out: Float32Array) => {
      const s = cuda.shared.array(32, float32);
      const t = cuda.threadIdx.x;
      if (!guarded && t >= 24) return;
      s[t] = t;
      cuda.syncthreads(); // sync: after return
      if (t < 24) out[t] = s[23 - t];
    }, { env: { guarded } });
    const out = new Float32Array(24);
    const bad = early(false), good = early(true);
    const e = sanitized(bad, () => bad.configure(1, 32)(out));
    expectFinding(e, { tool: "synccheck", kind: "barrier-after-exit", where: [at("// sync: after return")] });
    assert.ok(e!.findings[0]!.threads[1]![0] >= 24, "the exited thread is one that returned");
    assert.equal(sanitized(good, () => good.configure(1, 32)(out)), undefined);
    assert.deepEqual(Array.from(out), Array.from({ length: 24 }, (_, t) => 23 - t));
  });

  test("a warp operation whose mask names lanes that exited", () => {
    const shuffle = (masked: boolean) => cuda.jit((out: Float32Array) => {
      const t = cuda.threadIdx.x;
      if (t >= 16) return;
      const v = cuda.shflDownSync(masked ? 0xffff : 0xffffffff, t * 1.5, 1); // sync: shuffle
      out[t] = v;
    }, { env: { masked } });
    const out = new Float32Array(16);
    const bad = shuffle(false), good = shuffle(true);
    expectFinding(sanitized(bad, () => bad.configure(1, 32)(out)), { tool: "synccheck", kind: "warp-mask-exited", where: [at("// sync: shuffle")] });
    assert.equal(sanitized(good, () => good.configure(1, 32)(out)), undefined);
    assert.deepEqual(Array.from(out), Array.from({ length: 16 }, (_, t) => (t < 15 ? t + 1 : t) * 1.5));
  });
});

describe("barrier kernels, sanitized as phases", () => {
  // the sanitizer counts the barriers a block passes, not the phases: leaving a loop is no barrier
  const lastRead = (sync: boolean) => cuda.jit((out: Float32Array) => {
    const s = cuda.shared.array(32, float32);
    const t = cuda.threadIdx.x;
    s[t] = t;
    let acc = float32(0);
    for (let i = 0; i < 2; i++) {
      cuda.syncthreads();
      acc += s[(t + 1) % 32] + i; // phases: read the neighbour
    }
    if (sync) cuda.syncthreads();
    s[t] = acc; // phases: write after the loop
    out[t] = s[t];
  }, { env: { sync } });

  test("a write after a loop races with the last iteration's reads when no barrier separates them", () => {
    const out = new Float32Array(32);
    const bad = lastRead(false), good = lastRead(true);
    expectFinding(sanitized(bad, () => bad.configure(1, 32)(out)), {
      tool: "racecheck", kind: "write-after-read", array: "s", where: [at("// phases: read the neighbour"), at("// phases: write after the loop")],
    });
    assert.equal(sanitized(good, () => good.configure(1, 32)(out)), undefined);
    const want = Array.from({ length: 32 }, (_, t) => 2 * ((t + 1) % 32) + 1);
    assert.deepEqual(Array.from(out), want);
  });

  test("a local array that lives across a barrier keeps each thread's written bits", () => {
    const across = (bug: boolean) => cuda.jit((out: Float32Array) => {
      const l = cuda.local.array(2, float32);
      const t = cuda.threadIdx.x;
      l[0] = t;
      if (!bug) l[1] = 1;
      cuda.syncthreads();
      out[t] = l[0] + l[1]; // phases: read local after the barrier
    }, { env: { bug } });
    const out = new Float32Array(32);
    const bad = across(true), good = across(false);
    expectFinding(sanitized(bad, () => bad.configure(1, 32)(out)), {
      tool: "initcheck", kind: "uninitialized-read", array: "l", where: [at("// phases: read local after the barrier")],
    });
    assert.equal(sanitized(good, () => good.configure(1, 32)(out)), undefined);
    assert.deepEqual(Array.from(out), Array.from({ length: 32 }, (_, t) => t + 1));
  });

  test("threads that disagree on a loop holding a barrier: a synccheck finding, the launch stopped", () => {
    const loop = cuda.jit((n: Int32Array, out: Float32Array) => {
      const t = cuda.threadIdx.x;
      for (let i = 0; i < n[t]; i++) { // phases: loop with a barrier
        out[t] += 1;
        cuda.syncthreads();
      }
    });
    const out = new Float32Array(32);
    const e = sanitized(loop, () => loop.configure(1, 32)(Int32Array.from({ length: 32 }, (_, t) => (t < 16 ? 2 : 3)), out));
    expectFinding(e, { tool: "synccheck", kind: "divergent-barrier", where: [at("// phases: loop with a barrier")] });
    assert.deepEqual(e!.findings.find((f) => f.tool === "synccheck")!.threads, [[16, 0, 0]], "the first thread that stays in the loop");
  });
});

describe("memcheck", () => {
  test("a freed DeviceArray used by a kernel is reported where the kernel touches it", () => {
    const scale = cuda.jit((x: Float32Array) => {
      x[cuda.grid(1)] *= 2; // free: use
    });
    const d = cuda.toDevice(new Float32Array(8).fill(1));
    d.free();
    expectFinding(sanitized(scale, () => scale.configure(1, 8)(d)), {
      tool: "memcheck", kind: "use-after-free", array: "x", where: [at("// free: use")],
    });
    const live = cuda.toDevice(new Float32Array(8).fill(1));
    assert.equal(sanitized(scale, () => scale.configure(1, 8)(live)), undefined);
    assert.deepEqual(Array.from(live.copyToHost()), new Array(8).fill(2));
    live.free();
  });

  test("an out-of-bounds access is a memcheck finding, and a SanitizerError", () => {
    const over = cuda.jit((x: Float32Array) => {
      x[cuda.grid(1)] = 1; // oob: write
    });
    const host = new Float32Array(8);
    const e = sanitized(over, () => over.configure(1, 16)(host));
    expectFinding(e, { tool: "memcheck", kind: "out-of-bounds", array: "x", where: [at("// oob: write")] });
    assert.deepEqual(e!.findings.find((f) => f.kind === "out-of-bounds")!.index, [8]);
    assert.deepEqual(Array.from(host), new Array(8).fill(0), "the host array is left as it was");
  });

  test("device arrays never freed are listed as a warning, with where they were allocated", () => {
    setSimChecks({ tools: ["memcheck"] });
    try {
      const d = cuda.deviceArray(4, float32); // leak: allocation
      const line = `1 allocated at ${at("// leak: allocation")} (16 bytes)`;
      assert.ok(leakReport().includes(line), leakReport());
      d.free();
      assert.ok(!leakReport().includes(line), leakReport());
    } finally {
      setSimChecks(undefined);
    }
  });
});

describe("the leak report lists only what the program allocated", () => {
  test("numbats' own device temporaries are freed or never made: a ufunc's complex scalar (passed by value), a ufunc.reduce's work array", () => {
    setSimChecks({ tools: ["memcheck"] });
    try {
      const scale = cuda.vectorize((z: Complex, x: number) => cuda.cmath.mul(z, x), ["complex128(complex128, float64)"]);
      const x = cuda.toDevice(new Float64Array([1, 2]));
      const scaled = scale({ re: 2, im: 1 }, x) as DeviceArray; // temporaries: a ufunc
      const add = cuda.vectorize((a: number, b: number) => a + b, ["float32(float32, float32)"]);
      const m = cuda.toDevice(ndarray(Float32Array.from({ length: 6 }, (_, i) => i), [2, 3]));
      const sums = add.reduce!(m, { axis: 1 }) as DeviceArray; // temporaries: a reduction
      assert.deepEqual(Array.from(scaled.copyToHost() as Float64Array), [2, 1, 4, 2]);
      assert.deepEqual(Array.from(sums.copyToHost() as Float32Array), [3, 12]);
      const places = [at("// temporaries: a ufunc"), at("// temporaries: a reduction")];
      const ours = () => leakReport().split("\n").filter((l) => places.some((p) => l.includes(`at ${p} `))).map((l) => l.trim());
      assert.deepEqual(ours(), [`1 allocated at ${places[0]} (32 bytes)`, `1 allocated at ${places[1]} (8 bytes)`], "each call's result only, which the program owns");
      for (const d of [x, scaled, m, sums]) d.free();
      assert.deepEqual(ours(), []);
    } finally {
      setSimChecks(undefined);
    }
  });
});

describe("views made in the kernel: checked on the memory of the array they view", () => {
  test("a race through two overlapping subarrays of one array is found on the array's element", () => {
    const halves = (sync: boolean) => cuda.jit((a: Float32Array, out: Float32Array) => {
      const t = cuda.threadIdx.x;
      const lo = a.subarray(0, 16), hi = a.subarray(8);
      if (t < 16) lo[t] = t; // views: write lo
      if (sync) cuda.syncthreads();
      if (t >= 16) out[t] = hi[t - 16]; // views: read hi
    }, { env: { sync } });
    const host = Float32Array.from({ length: 32 }, (_, i) => 100 + i), out = new Float32Array(32);
    const buggy = halves(false);
    const e = sanitized(buggy, () => buggy.configure(1, 32)(host, out));
    expectFinding(e, { tool: "racecheck", kind: "read-after-write", array: "a", where: [at("// views: write lo"), at("// views: read hi")] });
    // thread 16 reads hi[0], which is a[8], written by thread 8
    const f = e!.findings.find((x) => x.tool === "racecheck")!;
    assert.deepEqual([f.index, f.threads], [[8], [[8, 0, 0], [16, 0, 0]]]);
    const fixed = halves(true);
    assert.equal(sanitized(fixed, () => fixed.configure(1, 32)(host, out)), undefined);
    assert.deepEqual(Array.from(out.subarray(16)), Array.from({ length: 16 }, (_, k) => (k < 8 ? 8 + k : 100 + 16 + k - 8)));
  });

  test("an uninitialized read through a dtype view of a subarray is found on the viewed array's element", () => {
    const bits = cuda.jit((x: KernelArray1<number>, out: Int32Array) => {
      const u = x.subarray(4).view(int32);
      const i = cuda.grid(1);
      if (i < u.length) out[i] = u[i]; // views: read bits
    });
    const half = cuda.jit((x: Float32Array) => {
      const i = cuda.grid(1);
      if (i < 8) x[i] = i;
    });
    setSimChecks({ tools: "all" }); // from the allocation on (reset by after())
    const d = cuda.deviceArray(16, float32), out = new Int32Array(12);
    assert.equal(sanitized(half, () => half.configure(1, 16)(d)), undefined);
    // u[k] is x[4 + k]: u[0..3] were written, u[4] (x[8]) is the first that was not
    const e = sanitized(bits, () => bits.configure(1, 12)(d, out));
    expectFinding(e, { tool: "initcheck", kind: "uninitialized-read", array: "x", where: [at("// views: read bits")] });
    assert.deepEqual(e!.findings[0]!.index, [8]);
    d.copyToDevice(Float32Array.from({ length: 16 }, (_, i) => i));
    assert.equal(sanitized(bits, () => bits.configure(1, 12)(d, out)), undefined);
    assert.deepEqual(Array.from(out), Array.from({ length: 12 }, (_, k) => new Int32Array(Float32Array.of(4 + k).buffer)[0]));
    d.free();
    setSimChecks(undefined);
  });

  test("an access past the end of a view is an out-of-bounds finding on the view", () => {
    const past = cuda.jit((x: KernelArray1<number>) => {
      const u = x.subarray(2).view(uint8);
      u[cuda.grid(1)] = 1; // views: past the end
    });
    const host = new Float32Array(4);
    const e = sanitized(past, () => past.configure(1, 16)(host));
    expectFinding(e, { tool: "memcheck", kind: "out-of-bounds", array: "u", where: [at("// views: past the end")] });
    // the two float32 after the first two are 8 bytes: u[8] is the first one past them
    assert.deepEqual(e!.findings.find((f) => f.kind === "out-of-bounds")!.index, [8]);
    assert.deepEqual(Array.from(host), [0, 0, 0, 0], "the host array is left as it was");
  });
});

describe("the message and the findings", () => {
  test("reads like compute-sanitizer's, with both source lines, and each finding once with a count", () => {
    const k = cuda.jit((out: Int32Array) => { out[0] = cuda.threadIdx.x; }, { name: "lastWriter" });
    const e = sanitized(k, () => k.configure(1, 4)(new Int32Array(1)));
    assert.ok(e);
    assert.equal(e.findings.length, 1);
    const line = at("{ name: \"lastWriter\" }");
    assert.match(e.message, /^sanitizer: 1 finding in kernel 'lastWriter' \(racecheck: 1\):/);
    assert.ok(e.message.includes(`Race reported between Write access at ${line} in thread (0,0,0) block (0,0,0) and Write access at ${line} in thread (1,0,0) block (0,0,0), on out[0] (global memory) (3 times)`), e.message);
    assert.equal(e.message.split("\n").filter((l) => l.includes("out[0] = cuda.threadIdx.x")).length, 2, "both source lines quoted");
    assert.deepEqual(e.findings[0], {
      tool: "racecheck", kind: "write-after-write", array: "out", index: [0],
      threads: [[0, 0, 0], [1, 0, 0]], blocks: [[0, 0, 0], [0, 0, 0]], where: [line, line],
    });
  });

  test("NUMBATS_SANITIZE and NUMBATS_SIM_SCHEDULE are parsed strictly", () => {
    assert.deepEqual([...parseTools("all")!], ["memcheck", "racecheck", "initcheck", "synccheck"]);
    assert.deepEqual([...parseTools(" racecheck, initcheck ")!], ["racecheck", "initcheck"]);
    assert.equal(parseTools(""), undefined);
    assert.throws(() => parseTools("racecheck,leakcheck"), /'leakcheck' is not a sanitizer tool; use all, or a comma list of memcheck, racecheck, initcheck, synccheck/);
    assert.equal(parseSchedule("random:42"), 42);
    assert.equal(parseSchedule("fixed"), undefined);
    assert.throws(() => parseSchedule("random"), /use random:SEED/);
  });
});

describe("the target", () => {
  test("with the sanitizer on, launches run on the simulator; a GPU found is named once on stderr", () => {
    const gpu: CudaProbe = { ok: true, driverVersion: 12040, devices: [{ ...SIM_DEVICE, name: "Fake H100" }], library: "libcuda.so.1" };
    const none: CudaProbe = { ok: false, reason: "libcuda.so.1 not found" };
    for (const [probe, notices] of [[gpu, 1], [none, 0]] as const) {
      const warnings: string[] = [];
      const fakeCuda = () => { throw new Error("the GPU back end must not be made"); };
      const gpuBackend = { ...CUDA_BACKEND, probe: () => probe, create: fakeCuda as () => Backend };
      const sel = selectForced(SIM_BACKEND, "NUMBATS_SANITIZE=all", { backends: [gpuBackend, SIM_BACKEND], warn: (l) => warnings.push(l) });
      assert.equal(sel.info.target, "sim");
      assert.equal(sel.backend.name, "sim");
      assert.equal(warnings.length, notices);
      if (notices) assert.equal(warnings[0], "numbats: NUMBATS_SANITIZE=all runs kernels on the CPU simulator with the sanitizer's checks; the GPU (Fake H100) is not used");
    }
  });
});

describe("the random schedule", () => {
  // which block writes last is up to the schedule: the fixed order ends with the last block
  const lastBlock = cuda.jit((out: Int32Array, order: Int32Array, counter: Int32Array) => {
    if (cuda.threadIdx.x === 0) {
      out[0] = cuda.blockIdx.x;
      order[cuda.atomic.add(counter, 0, 1)] = cuda.blockIdx.x;
    }
  });
  const sum = cuda.jit((a: Float32Array, out: Float32Array) => {
    const s = cuda.shared.array(32, float32);
    const t = cuda.threadIdx.x;
    s[t] = a[cuda.grid(1)];
    cuda.syncthreads();
    for (let stride = 16; stride > 0; stride >>= 1) {
      if (t < stride) s[t] += s[t + stride];
      cuda.syncthreads();
    }
    if (t === 0) out[cuda.blockIdx.x] = s[0];
  });

  function orderWith(seed: number | undefined): number[] {
    setSimChecks(seed === undefined ? undefined : { seed });
    try {
      const out = new Int32Array(1), order = new Int32Array(16), counter = new Int32Array(1);
      lastBlock.configure(16, 32)(out, order, counter);
      assert.equal(out[0], order[15], "the last block to run wrote last");
      return Array.from(order);
    } finally {
      setSimChecks(undefined);
    }
  }

  test("the same seed gives the same order, different seeds different orders, the default is fixed", () => {
    const fixed = orderWith(undefined);
    assert.deepEqual(fixed, Array.from({ length: 16 }, (_, b) => b));
    const a = orderWith(7), b = orderWith(7), c = orderWith(8);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.notDeepEqual(a, fixed);
    assert.deepEqual([...a].sort((p, q) => p - q), fixed, "every block ran once");
    assemble(lastBlock);
  });

  test("results that do not depend on the order are identical under any seed (with the sanitizer too)", () => {
    const a = Float32Array.from({ length: 128 }, (_, i) => (i % 13) - 6);
    const want = [0, 1, 2, 3].map((b) => a.slice(32 * b, 32 * b + 32).reduce((p, q) => p + q, 0));
    for (const checks of [{ seed: 1 }, { seed: 99 }, { seed: 5, tools: "all" as const }]) {
      setSimChecks(checks);
      try {
        const out = new Float32Array(4);
        sum.configure(4, 32)(a, out);
        assert.deepEqual(Array.from(out), want, JSON.stringify(checks));
      } finally {
        setSimChecks(undefined);
      }
    }
    assemble(sum);
  });
});

describe("whole programs", () => {
  // (without NODE_TEST_CONTEXT, a child `node --test` prints its report instead of sending it to this runner)
  const { NODE_TEST_CONTEXT: _, ...parentEnv } = process.env;
  const run = (args: string[], env: Record<string, string>) =>
    spawnSync(process.execPath, ["--import", "tsx", ...args], { cwd: root, encoding: "utf8", env: { ...parentEnv, NUMBATS_TARGET: "sim", ...env }, timeout: 600_000 });

  test("every example runs under NUMBATS_SANITIZE=all with zero findings", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "examples/run-all.ts"], {
      cwd: root, encoding: "utf8", env: { ...process.env, NUMBATS_SANITIZE: "all" }, timeout: 600_000,
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    // run-all prints each example's output after a "== NAME" line; examples/sanitizer.ts shows a finding on purpose
    const outputs = r.stdout.split(/^== /m).slice(1);
    assert.ok(outputs.length >= 10, r.stdout);
    for (const out of outputs.filter((o) => !o.startsWith("sanitizer.ts"))) assert.doesNotMatch(out, /SanitizerError|sanitizer: \d+ finding/);
  });

  test("every end-to-end kernel case runs under NUMBATS_SANITIZE=all with zero findings", () => {
    const r = run(["--test", "test/host/e2e.test.ts"], { NUMBATS_SANITIZE: "all" });
    assert.equal(r.status, 0, r.stdout.split("\n").filter((l) => /not ok|finding|Error/.test(l)).join("\n"));
    assert.match(r.stdout, /# fail 0/);
  });

  test("npx numbats sanitize runs a program with the sanitizer, and exits non-zero on a finding", () => {
    const cli = "src/cli.ts";
    const racy = run([cli, "sanitize", "--tool", "racecheck", "--", process.execPath, "--import", "tsx", "examples/sanitizer.ts", "--race-only"], {});
    assert.equal(racy.status, 1, racy.stdout + racy.stderr);
    assert.match(racy.stderr, /SanitizerError: sanitizer: 1 finding in kernel 'sumWithoutBarrier' \(racecheck: 1\)/);
    const clean = run([cli, "sanitize", "--schedule", "random:3", "--", process.execPath, "--import", "tsx", "examples/increment-by-one.ts"], {});
    assert.equal(clean.status, 0, clean.stdout + clean.stderr);
    const bad = run([cli, "sanitize", "--tool", "leakcheck", "--", "node", "x.js"], {});
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /'leakcheck' is not a sanitizer tool/);
  });

  test("the leak report does not depend on garbage collection: arrays never freed are listed, collected or not, the same in every run", () => {
    const fixture = readFileSync(join(root, "test/fixtures/leaks.ts"), "utf8").split("\n");
    const line = (marker: string) => `test/fixtures/leaks.ts:${fixture.findIndex((l) => l.includes(marker)) + 1}`;
    const want = "numbats sanitizer (memcheck) warning: 4 device array(s), 112 bytes, never freed: free each with d.free() or `using d = …` (memory the garbage collector releases does not count):\n"
      + `  1 allocated at ${line("// leak: kept")} (16 bytes)\n  3 allocated at ${line("// leak: dropped")} (96 bytes)\n`;
    for (let i = 0; i < 3; i++) {
      const r = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", "test/fixtures/leaks.ts"], {
        cwd: root, encoding: "utf8", env: { ...parentEnv, NUMBATS_TARGET: "sim", NUMBATS_SANITIZE: "memcheck" },
      });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, "kept 4\n");
      assert.equal(r.stderr.slice(r.stderr.indexOf("numbats sanitizer")), want, `run ${i + 1}`);
    }
  });

  test("examples/sanitizer.ts shows a race found and then fixed", () => {
    const r = run(["examples/sanitizer.ts"], {});
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Race reported between/);
    assert.match(r.stdout, /fixed: no findings/);
  });
});
