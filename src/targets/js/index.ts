// The JS target: typed IR → JavaScript, run on the CPU with the GPU's dtype
// semantics (the simulator back end's kernels).

import type { FunctionIR } from "../../compiler/ir.js";
import type { BackendStream, CompiledKernel, KernelArg, LaunchDims } from "../../runtime/backend.js";
import { LaunchError } from "../../errors.js";
import { emitKernel, type EmittedKernel } from "./emit.js";
import { launchSatisfies } from "./bounds.js";
import { rt } from "./runtime.js";
import type { LaunchCtx } from "./sim.js";

export { emitKernel, needsGenerators, type EmittedKernel, type KernelShape } from "./emit.js";
export { fma16, fma32, fma64 } from "./fp.js";
export { formatPrintf } from "./printf.js";

type KernelFn = (L: LaunchCtx, args: readonly KernelArg[]) => void;

/** Compiles a kernel for the simulator; launches run the whole grid synchronously. */
export function compileSim(ir: FunctionIR): CompiledKernel {
  if (ir.kind !== "kernel") throw new Error(`compileSim: '${ir.name}' is a device function, not a kernel`);
  const emitted = emitKernel(ir);
  const { code, staticSharedBytes } = emitted;
  const run = build(ir, emitted);
  // launches the proofs' assumptions do not cover run a variant without the proofs that need them
  let checked: KernelFn | undefined;
  const runFor = (dims: LaunchDims, args: readonly KernelArg[]): KernelFn =>
    (launchSatisfies(emitted.assumes, dims.grid, dims.block, args)
      ? run : (checked ??= build(ir, emitKernel(ir, { assumeLaunch: false }))));
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
      try {
        runFor(dims, args)(L, args);
      } finally {
        if (L.out.length > 0) process.stdout.write(L.out.join(""));
      }
    },
  };
}

function build(ir: FunctionIR, { code, sites }: EmittedKernel): KernelFn {
  const factory = new Function("rt", "consts", "sites", code) as (r: typeof rt, consts: readonly ArrayBufferView[], s: typeof sites) => KernelFn;
  return factory(rt, ir.constArrays.map((c) => c.data), sites);
}
