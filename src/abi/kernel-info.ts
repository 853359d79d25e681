// What a back end's runtime knows of a kernel besides the code its target made: a few facts the
// compiler found, so that loading and launching need none of the compiler's IR.

import { threadWork } from "../compiler/analysis/work.js";
import type { FunctionIR } from "../compiler/ir.js";
import type { Type } from "../dtypes.js";

export interface KernelInfo {
  /** the kernel's name, for messages */
  readonly name: string;
  /** the compiled code's parameters in order (a record's fields and the env arrays included) */
  readonly params: readonly { readonly name: string; readonly type: Type }[];
  /** the array parameters the kernel may write */
  readonly writtenParams: ReadonlySet<string>;
  /** the kernel's strings (console.log formats, throw sites: see `parseThrowSite`), by index */
  readonly strings: readonly string[];
  /** the register cap per thread the user asked for (`maxRegisters`), if any */
  readonly maxRegisters?: number;
  /** an estimate of one thread's work (statements, those in loops counted 16 times per level) */
  readonly work: number;
  /** the kernel synchronises the whole grid (`this_grid().sync()`): it must launch cooperatively */
  readonly gridSync: boolean;
  /** the kernel uses warp-level operations */
  readonly warp: boolean;
}

/** The facts about `ir` that back ends' runtimes read. */
export function kernelInfo(ir: FunctionIR): KernelInfo {
  return {
    name: ir.name,
    params: ir.params.map(({ name, type }) => ({ name, type })),
    writtenParams: ir.writtenParams,
    strings: ir.strings,
    ...(ir.options.maxRegisters !== undefined ? { maxRegisters: ir.options.maxRegisters } : {}),
    work: threadWork(ir.body),
    gridSync: ir.features.gridSync,
    warp: ir.features.warp,
  };
}
