// What the PTX target hands to the CUDA runtime: the module text plus the
// layout of the kernel's parameters, computed once per specialisation so a
// launch only writes values into slots.

/** One `.param` of the entry point and where its value comes from. */
export interface PtxParam {
  readonly name: string;
  /** PTX type of the slot: u64 for pointers, s32 for shapes/strides, else the scalar's type */
  readonly ptxType: "u8" | "u16" | "u32" | "u64" | "s8" | "s16" | "s32" | "s64" | "f32" | "f64" | "b16";
  /** byte size and alignment of the slot */
  readonly size: 1 | 2 | 4 | 8;
  /** which launch argument fills it: the array's device address (buffer ptr + byteOffset), one shape or stride (elements) entry, or a scalar's value */
  readonly from: { readonly arg: number; readonly part: "ptr" | "shape" | "stride" | "value"; readonly dim?: number };
}

export interface PtxModule {
  /** full module text: .version/.target/.address_size, globals, the entry */
  readonly text: string;
  /** entry point name to pass to cuModuleGetFunction */
  readonly entry: string;
  readonly params: readonly PtxParam[];
  readonly staticSharedBytes: number;
  /** the kernel uses `this_grid().sync()`: launch with cuLaunchCooperativeKernel */
  readonly cooperative: boolean;
  /** the kernel may `throw`: after a launch the host reads (and clears) the module's KERNEL_ERROR_SYMBOL */
  readonly throws: boolean;
}

/**
 * The error record of a kernel that may throw, a `.global` array of KERNEL_ERROR_WORDS uint32: 0 while
 * nothing threw, else the throw site's index in the kernel's strings + 1, then the first thrower's
 * threadIdx x, y, z and blockIdx x, y, z.
 */
export const KERNEL_ERROR_SYMBOL = "__numbats_error";
export const KERNEL_ERROR_WORDS = 7;

export interface PtxTargetOptions {
  /** compute capability, e.g. [9, 0]; default [7, 5] (the oldest ptxas 13 assembles; `Kernel.inspectAsm` gives the current device's) */
  readonly computeCapability?: readonly [number, number];
  /** highest PTX ISA version the driver accepts, e.g. "8.7" (from cuDriverGetVersion); default: no clamp */
  readonly maxPtxVersion?: string;
}
