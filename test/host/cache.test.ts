// The on-disk cache (cache: true) across processes on the simulator; test/gpu/cache.test.ts runs the
// same on the cuda target. And where the cache lives on each platform.
import { test } from "node:test";
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { join } from "node:path";
import { cacheDirectory } from "../../src/runtime/cache.js";
import { cacheTests } from "../helpers/cache-runs.js";

test("the cache directory: NUMBATS_CACHE_DIR, else the platform's user cache directory", () => {
  assert.equal(cacheDirectory({ NUMBATS_CACHE_DIR: "/tmp/mine", XDG_CACHE_HOME: "/x" }, "linux"), "/tmp/mine");
  assert.equal(cacheDirectory({ XDG_CACHE_HOME: "/x" }, "linux"), join("/x", "numbats"));
  assert.equal(cacheDirectory({}, "linux"), join(homedir(), ".cache", "numbats"));
  assert.equal(cacheDirectory({}, "darwin"), join(homedir(), "Library", "Caches", "numbats"));
  assert.equal(cacheDirectory({ LOCALAPPDATA: "/appdata" }, "win32"), join("/appdata", "numbats"));
});

cacheTests("sim", false);
