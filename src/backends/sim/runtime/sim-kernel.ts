// A simulator kernel loaded for launching: per launch it picks the JS target's variant (plain, with
// every bounds check, sanitized, randomly scheduled) and where it runs (the calling thread, or the
// workers for large plain launches). Launches run the whole grid synchronously.

import type { BackendStream, CompiledKernel, KernelArg, LaunchDims } from "../../../abi/backend.js";
import { KernelError, LaunchError } from "../../../errors.js";
import { noteThrowingLaunch } from "../../../abi/kernel-errors.js";
import { keepHostArrays, ParallelKernel } from "./sim-workers.js";
import type { FunctionIR } from "../../../compiler/ir.js";
import { compileJs, launchSatisfies, randomSchedule, runSanitized, simChecks, type JsKernel, type LaunchCtx } from "../js/index.js";

/** Loads a kernel the JS target compiled. */
export function loadSimKernel(js: JsKernel): CompiledKernel {
  const { info, code, staticSharedBytes, sites, consts } = js;
  const parallel = new ParallelKernel(info, { code, consts, sites });
  return {
    info,
    code,
    staticSharedBytes,
    suggestedBlockSize: () => 128,
    launch(dims: LaunchDims, args: readonly KernelArg[], _stream: BackendStream, cooperative: boolean): void {
      if (args.length !== info.params.length) {
        throw new LaunchError(`kernel '${info.name}' takes ${info.params.length} argument(s), got ${args.length}`);
      }
      const L: LaunchCtx = {
        grid: dims.grid, block: dims.block, sharedMemBytes: dims.sharedMemBytes,
        cooperative: cooperative || info.gridSync, out: [],
      };
      const checks = simChecks();
      const assumed = launchSatisfies(js.assumes, dims.grid, dims.block, args);
      // the sanitizer and the random schedule run in the calling thread; large plain launches on workers;
      // a launch ends at the first throw, which the calling thread catches (so no worker threads); the
      // stand-ins of declared functions are the calling thread's JavaScript functions (so none either)
      if (!checks.tools && checks.seed === undefined && assumed && !js.throws && js.externals.length === 0) {
        const runners = parallel.runners(dims, L.cooperative);
        if (runners > 1) return parallel.launch(dims, args, runners);
      }
      // workers run on copies of host arrays; here the kernel writes them in place: back them up
      const restore = keepHostArrays(info, args);
      try {
        if (checks.tools) {
          // threads are generators only where the kernel synchronises or the schedule is random
          const random = checks.seed !== undefined;
          const variant = js.sanitized(random, assumed && !random);
          runSanitized(variant.run, info.name, variant.sites, info.warp, L, args, checks);
        } else if (checks.seed !== undefined) {
          js.shuffled()({ ...L, hooks: randomSchedule(checks.seed) }, args);
        } else if (assumed) {
          js.run(L, args);
        } else {
          js.checked()(L, args);
        }
      } catch (e) {
        restore();
        // as on the GPU, the host learns of it at its next synchronising call
        if (!(e instanceof KernelError)) throw e;
        noteThrowingLaunch(() => e);
      } finally {
        if (L.out.length > 0) process.stdout.write(L.out.join(""));
      }
    },
  };
}

/** The JS target and the simulator's loader in one step, for tools and tests that run IR directly. */
export const compileSim = (ir: FunctionIR): CompiledKernel => loadSimKernel(compileJs(ir));
