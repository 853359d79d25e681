// The on-disk cache (cache: true) across processes on the simulator; test/gpu/cache.test.ts runs the
// same on the cuda target.
import { cacheTests } from "../helpers/cache-runs.js";

cacheTests("sim", false);
