// The JS target: typed IR → JavaScript, run on the CPU with the GPU's dtype
// semantics (the simulator back end's kernels).

import { canThrow, type FunctionIR } from "../../compiler/ir.js";
import type { BackendStream, CompiledKernel, KernelArg, LaunchDims } from "../../runtime/backend.js";
import { KernelError, LaunchError } from "../../errors.js";
import { noteThrowingLaunch } from "../../runtime/kernel-errors.js";
import { emitKernel, type EmitOptions } from "./emit.js";
import { launchSatisfies } from "./bounds.js";
import { rt } from "./runtime.js";
import { randomSchedule, runSanitized, sanitizedRuntime, simChecks, type SanitizedKernelFn } from "./sanitize.js";
import type { LaunchCtx } from "./sim.js";
import { keepHostArrays, ParallelKernel } from "../../runtime/sim-workers.js";

export { emitKernel, needsGenerators, type EmittedKernel, type KernelShape } from "./emit.js";
export { fma16, fma32, fma64 } from "../../fp.js";
export { formatPrintf } from "./printf.js";

type KernelFn = (L: LaunchCtx, args: readonly KernelArg[]) => void;

/** Compiles `ir` to a launch function; `runtime` is what its `rt.*` names resolve to. */
function build(ir: FunctionIR, options: EmitOptions, runtime: typeof rt) {
  const emitted = emitKernel(ir, options);
  const factory = new Function("rt", "consts", "sites", emitted.code) as (r: typeof rt, consts: readonly ArrayBufferView[], s: typeof emitted.sites) => KernelFn;
  return { ...emitted, run: factory(runtime, ir.constArrays.map((c) => c.data), emitted.sites) };
}

/**
 * Compiles a kernel for the simulator; launches run the whole grid synchronously. Plain launches run the
 * code whose left-out bounds checks assume things of the launch (bounds.ts) when the launch satisfies
 * them, else a variant that keeps those checks; large ones run on worker threads. The sanitizer's
 * instrumented variant and the random schedule's all-generator variant are compiled at their first use.
 */
export function compileSim(ir: FunctionIR): CompiledKernel {
  if (ir.kind !== "kernel") throw new Error(`compileSim: '${ir.name}' is a device function, not a kernel`);
  const plain = build(ir, {}, rt);
  const { code, staticSharedBytes, sites, run } = plain;
  const parallel = new ParallelKernel(ir, { code, consts: ir.constArrays.map((c) => c.data), sites });
  let checked: KernelFn | undefined, shuffled: KernelFn | undefined;
  // the sanitizer's variants: the plain code's shape, and all generators for the random schedule
  const sanitized = new Map<string, ReturnType<typeof build>>();
  // a launch ends at the first throw, which the calling thread catches (so no worker threads)
  const throws = canThrow(ir);
  return {
    ir,
    code,
    staticSharedBytes,
    suggestedBlockSize: () => 128,
    launch(dims: LaunchDims, args: readonly KernelArg[], _stream: BackendStream, cooperative: boolean): void {
      if (args.length !== ir.params.length) {
        throw new LaunchError(`kernel '${ir.name}' takes ${ir.params.length} argument(s), got ${args.length}`);
      }
      const L: LaunchCtx = {
        grid: dims.grid, block: dims.block, sharedMemBytes: dims.sharedMemBytes,
        cooperative: cooperative || ir.features.gridSync, out: [],
      };
      const checks = simChecks();
      const assumed = launchSatisfies(plain.assumes, dims.grid, dims.block, args);
      // the sanitizer and the random schedule run in the calling thread; large plain launches on workers
      if (!checks.tools && checks.seed === undefined && assumed && !throws) {
        const runners = parallel.runners(dims, L.cooperative);
        if (runners > 1) return parallel.launch(dims, args, runners);
      }
      // workers run on copies of host arrays; here the kernel writes them in place: back them up
      const restore = keepHostArrays(ir, args);
      try {
        if (checks.tools) {
          // threads are generators only where the kernel synchronises or the schedule is random
          // (it leaves out the bounds checks the plain code does, under the same assumptions of the launch)
          const random = checks.seed !== undefined, assume = assumed && !random, key = `${random}:${assume}`;
          const variant = sanitized.get(key) ?? sanitized.set(key, build(ir, { sanitize: true, generators: random, assumeLaunch: assume }, sanitizedRuntime)).get(key)!;
          runSanitized(variant.run as unknown as SanitizedKernelFn, ir.name, variant.sites, ir.features.warp, L, args, checks);
        } else if (checks.seed !== undefined) {
          shuffled ??= build(ir, { generators: true, assumeLaunch: false }, rt).run;
          shuffled({ ...L, hooks: randomSchedule(checks.seed) }, args);
        } else if (assumed) {
          run(L, args);
        } else {
          (checked ??= build(ir, { assumeLaunch: false }, rt).run)(L, args);
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
