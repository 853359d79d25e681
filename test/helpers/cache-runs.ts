// The on-disk cache across processes, on the current target (test/host/cache.test.ts: the simulator;
// test/gpu/cache.test.ts: the cuda target, on a GPU or the emulated one): each run is a child process
// of test/fixtures/cache/app.ts (or linked.ts, a kernel linked with PTX) with NUMBATS_CACHE_TRACE=1,
// whose stderr says which entries it loaded, wrote or rejected.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const APP = "test/fixtures/cache/app.ts";

interface Run { readonly out: number[]; readonly loaded: number; readonly wrote: number; readonly rejected: string[]; readonly stderr: string }

function parseRun(stdout: string, stderr: string, status: number | null): Run {
  assert.equal(status, 0, `the program failed:\n${stderr}`);
  const lines = stderr.split("\n");
  const count = (what: string) => lines.filter((l) => l.startsWith(`numbats cache: ${what} `)).length;
  const rejected = lines.filter((l) => l.startsWith("numbats cache: rejected ")).map((l) => l.replace(/^.*?: rejected '\w+' [^:]*: /, ""));
  return { out: (JSON.parse(stdout) as { out: number[] }).out, loaded: count("loaded"), wrote: count("wrote"), rejected, stderr };
}

const runEnv = (target: string, dir: string, variant: string) => ({ ...process.env, NUMBATS_TARGET: target, NUMBATS_CACHE_DIR: dir, NUMBATS_CACHE_TRACE: "1", CACHE_VARIANT: variant });

function run(target: string, dir: string, variant = "", app = APP, env: Record<string, string> = {}): Run {
  const r = spawnSync(process.execPath, ["--import", "tsx", app], { cwd: root, env: { ...runEnv(target, dir, variant), ...env }, encoding: "utf8" });
  return parseRun(r.stdout, r.stderr, r.status);
}

async function runAsync(target: string, dir: string): Promise<Run> {
  const child = spawn(process.execPath, ["--import", "tsx", APP], { cwd: root, env: runEnv(target, dir, "") });
  let stdout = "", stderr = "";
  child.stdout.on("data", (d) => { stdout += d; });
  child.stderr.on("data", (d) => { stderr += d; });
  const [status] = (await once(child, "close")) as [number | null];
  return parseRun(stdout, stderr, status);
}

/** The kernel's results computed here in float64: the cached code's, in float32, are within a few ulp. */
function reference(variant = ""): number[] {
  const T = [0, 1, 2, 3];
  return Array.from({ length: 256 }, (_, i) => {
    const x = Math.fround(i / 64 - 2);
    return 2 * (Math.exp(x) + Math.sin(x)) + (variant === "env" ? 2.5 : 1.5) + T[i % 4]!;
  });
}

function assertNear(got: readonly number[], want: readonly number[]): void {
  assert.equal(got.length, want.length);
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= 4e-6 * Math.max(1, Math.abs(want[i]!)), `out[${i}] = ${g}, expected ${want[i]}`));
}

const entries = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".json"));

/** Registers the cache's tests for `target` ("sim" or "cuda"); `skip`: why they cannot run here. */
export function cacheTests(target: string, skip: string | false): void {
  const fresh = () => mkdtempSync(join(tmpdir(), "numbats-cache-"));

  test(`${target}: a second process loads the kernel from the cache and computes the same results`, { skip }, () => {
    const dir = fresh();
    try {
      const first = run(target, dir);
      assert.deepEqual([first.loaded, first.wrote], [0, 1], first.stderr);
      assertNear(first.out, reference());
      const second = run(target, dir);
      assert.deepEqual([second.loaded, second.wrote], [1, 0], second.stderr);
      assert.deepEqual(second.out, first.out); // bit for bit
      assert.equal(entries(dir).length, 1);
      assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith(".tmp")), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${target}: a changed source, env constant, host array, option or device function is a new entry`, { skip }, () => {
    const dir = fresh();
    try {
      run(target, dir);
      const variants = ["source", "env", "table", "option", "device"];
      for (const [k, variant] of variants.entries()) {
        const r = run(target, dir, variant);
        assert.deepEqual([r.loaded, r.wrote], [0, 1], `${variant}: ${r.stderr}`);
        assert.equal(entries(dir).length, k + 2, variant);
      }
      assertNear(run(target, dir, "env").out, reference("env"));
      const again = run(target, dir, "device");
      assert.deepEqual([again.loaded, again.wrote], [1, 0], again.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${target}: a corrupt or truncated entry is not loaded, and is rewritten`, { skip }, () => {
    const dir = fresh();
    try {
      const first = run(target, dir);
      const [entry] = entries(dir), file = join(dir, entry!);
      const whole = readFileSync(file);
      const damages: [string, Buffer, RegExp][] = [
        ["a byte changed", Buffer.from(whole.map((b, i) => (i === whole.length - 10 ? b ^ 1 : b))), /corrupt/],
        ["truncated", whole.subarray(0, whole.length - 100), /truncated/],
        ["not an entry", Buffer.from("garbage"), /not a numbats cache entry/],
      ];
      for (const [what, bytes, reason] of damages) {
        writeFileSync(file, bytes);
        const r = run(target, dir);
        assert.deepEqual([r.loaded, r.wrote], [0, 1], `${what}: ${r.stderr}`);
        assert.match(r.rejected.join("\n"), reason, what);
        assert.deepEqual(r.out, first.out, what);
        assert.deepEqual(readFileSync(file), whole, `${what}: rewritten as it was`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${target}: processes sharing the directory at once each run, and leave one whole entry`, { skip }, async () => {
    const dir = fresh();
    try {
      const runs = await Promise.all([runAsync(target, dir), runAsync(target, dir), runAsync(target, dir)]);
      for (const r of runs) assert.deepEqual(r.out, runs[0]!.out);
      assertNear(runs[0]!.out, reference());
      assert.equal(entries(dir).length, 1);
      assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith(".tmp")), []);
      const after = run(target, dir);
      assert.deepEqual([after.loaded, after.wrote], [1, 0], after.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${target}: an unwritable directory warns once and runs uncached; a captured DeviceArray is not cached`, { skip }, () => {
    const dir = fresh();
    try {
      writeFileSync(join(dir, "file"), "");
      const r = run(target, join(dir, "file", "cache"));
      assert.deepEqual([r.loaded, r.wrote], [0, 0], r.stderr);
      assert.equal(r.stderr.match(/is not writable/g)?.length, 1, r.stderr);
      assertNear(r.out, reference());
      const captured = run(target, dir, "devicearray");
      assert.deepEqual([captured.loaded, captured.wrote], [0, 0], captured.stderr);
      assert.deepEqual(entries(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** PTX defining `extern "C" __device__ float scale_by(float x)`, x times `factor` (an integer). */
const scaleByPtx = (factor: number): string => {
  const bits = Buffer.alloc(4);
  bits.writeFloatBE(factor);
  return `.version 7.8\n.target sm_75\n.address_size 64\n.visible .func (.param .b32 func_retval0) scale_by(.param .b32 x)\n{\n\t.reg .f32 %f<3>;\n\tld.param.f32 %f1, [x];\n\tmul.rn.f32 %f2, %f1, 0f${bits.toString("hex").toUpperCase()};\n\tst.param.f32 [func_retval0], %f2;\n\tret;\n}\n`;
};

/** Registers the cache's tests of a kernel linked with code compiled elsewhere, for `target`. */
export function linkedCacheTests(target: string, skip: string | false): void {
  test(`${target}: a kernel linked with PTX is cached (the linked image on the GPU); changed PTX bytes are a new entry`, { skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), "numbats-cache-")), ptx = join(dir, "scale_by.ptx");
    const linked = (factor: number) => run(target, dir, "", "test/fixtures/cache/linked.ts", { LINK_PTX: ptx, LINK_FACTOR: String(factor) });
    // the kernel's own float32 arithmetic: x * factor + 1, each step rounded
    const want = (factor: number) => Array.from({ length: 256 }, (_, i) => Math.fround(Math.fround(Math.fround(i / 64 - 2) * factor) + 1));
    try {
      writeFileSync(ptx, scaleByPtx(2));
      const first = linked(2);
      assert.deepEqual([first.loaded, first.wrote], [0, 1], first.stderr);
      assert.deepEqual(first.out, want(2));
      const second = linked(2);
      assert.deepEqual([second.loaded, second.wrote], [1, 0], second.stderr);
      assert.deepEqual(second.out, first.out);
      writeFileSync(ptx, scaleByPtx(3));
      const changed = linked(3);
      assert.deepEqual([changed.loaded, changed.wrote], [0, 1], changed.stderr);
      assert.deepEqual(changed.out, want(3));
      assert.equal(entries(dir).length, 2);
      const again = linked(3);
      assert.deepEqual([again.loaded, again.wrote], [1, 0], again.stderr);
      assert.deepEqual(again.out, want(3));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
