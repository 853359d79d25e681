// The on-disk cache (cache: true) across processes on the simulator; test/gpu/cache.test.ts runs the
// same on the cuda target. And where the cache lives on each platform.
import { test } from "node:test";
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { join } from "node:path";
import { cacheDirectory } from "../../src/runtime/cache.js";
import { cacheTests, linkedCacheTests } from "../helpers/cache-runs.js";

test("the cache directory: NUMBATS_CACHE_DIR, else the platform's user cache directory", () => {
  assert.equal(cacheDirectory({ NUMBATS_CACHE_DIR: "/tmp/mine", XDG_CACHE_HOME: "/x" }, "linux"), "/tmp/mine");
  assert.equal(cacheDirectory({ XDG_CACHE_HOME: "/x" }, "linux"), join("/x", "numbats"));
  assert.equal(cacheDirectory({}, "linux"), join(homedir(), ".cache", "numbats"));
  assert.equal(cacheDirectory({}, "darwin"), join(homedir(), "Library", "Caches", "numbats"));
  assert.equal(cacheDirectory({ LOCALAPPDATA: "/appdata" }, "win32"), join("/appdata", "numbats"));
});

cacheTests("sim", false);
linkedCacheTests("sim", false);

test("the key of a kernel calling a declared device function includes its symbol and signature", async () => {
  const { kernelKey } = await import("../../src/runtime/cache-key.js");
  const { cuda } = await import("../../src/index.js");
  const kernel = (x: Float32Array) => { x[0] = f(x[0]!); };
  const f = (v: number) => v;
  const key = (env: Record<string, unknown>) => kernelKey({
    fn: kernel, name: "kernel", module: undefined, signature: "(float32[:])", warpSize: 32, env, options: {}, link: [], resolve: () => undefined,
  }, "sim", "test");
  const narrow = key({ f: cuda.declareDevice("twice_f32", "float32(float32)", { sim: (v: number) => 2 * v }) });
  const wide = key({ f: cuda.declareDevice("twice_f32", "float64(float64)", { sim: (v: number) => 2 * v }) });
  const other = key({ f: cuda.declareDevice("twice_f32b", "float32(float32)", { sim: (v: number) => 2 * v }) });
  assert.ok(narrow && wide && other);
  assert.notEqual(narrow, wide, "another signature is another entry");
  assert.notEqual(narrow, other, "another symbol is another entry");
  assert.equal(narrow, key({ f: cuda.declareDevice("twice_f32", "float32(float32)", { sim: (v: number) => 2 * v }) }), "the same declaration is the same entry");
});
