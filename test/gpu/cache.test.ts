// The on-disk cache (cache: true) across processes on the cuda target, where the entry holds the cubin
// the driver's linker made (npm run test:gpu; npm run test:emu on the emulated GPU, whose linker wraps
// the PTX). test/host/cache.test.ts runs the same on the simulator.
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { cacheTests, linkedCacheTests } from "../helpers/cache-runs.js";

const probe = probeCuda();
cacheTests("cuda", probe.ok ? false : `no usable GPU: ${probe.reason.split("\n")[0]}`);
linkedCacheTests("cuda", probe.ok ? false : `no usable GPU: ${probe.reason.split("\n")[0]}`);
