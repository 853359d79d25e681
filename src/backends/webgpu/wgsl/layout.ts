// What the WGSL target hands the WebGPU runtime besides the code: the bind group layout, how launch
// arguments fill the parameter block, and what the runtime reads back after a launch (throws, prints).
// The runtime needs nothing else of the kernel to create its pipeline and bind its buffers.
//
// The layout every kernel has, @group(0):
//   @binding(0)  var<uniform> params: Params        the scalar arguments and each array's view
//                                                  (element offset, shape, strides): 4-byte fields
//   @binding(1)  var<storage, read_write> status    atomic<u32> words: [0] the first throw's record
//                                                  (see STATUS_WORDS), then console.log's records
//   @binding(2…) one storage buffer per array argument (kernel parameters, then env arrays), bound
//                whole: the view's offset is a parameter, so any slice of a buffer binds without an
//                alignment rule
// Overrides: the block's extent (BLOCK_X, BLOCK_Y, BLOCK_Z) and, for dynamic shared memory,
// DYNAMIC_SHARED_WORDS: one pipeline per distinct set.

import type { ScalarName } from "../../../dtypes.js";

/** What the WGSL target needs to know of the adapter it compiles for. */
export interface WgslTarget {
  /** the adapter's subgroup size with the `subgroups` feature (its `subgroupMinSize` = `Max`); undefined without it */
  readonly subgroupSize?: number;
  /** the adapter has `shader-f16` */
  readonly shaderF16: boolean;
  /** maxComputeWorkgroupStorageSize */
  readonly maxWorkgroupStorageBytes: number;
  /** maxStorageBuffersPerShaderStage */
  readonly maxStorageBuffers: number;
  /** where the adapter is, for messages: "WebGPU (llvmpipe: Mesa 25.0.7)" */
  readonly adapterName: string;
}

/** One 4-byte field of the parameter block, in order: its value comes from launch argument `arg`. */
export type ParamField =
  | { readonly arg: number; readonly what: "value"; readonly dtype: ScalarName }
  | { readonly arg: number; readonly what: "offset" }
  | { readonly arg: number; readonly what: "shape" | "stride"; readonly dim: number };

/** One array argument's binding. */
export interface ArrayBinding {
  /** the launch argument it binds (an ArrayArg) */
  readonly arg: number;
  /** @binding(n) */
  readonly binding: number;
  /** read-only storage (the kernel never writes it) */
  readonly readOnly: boolean;
}

/** Words at the start of the status buffer: a throw's record; console.log's records follow. */
export const STATUS_WORDS = {
  /** 0: nothing thrown; else 1 + the index of the thrown site's string in KernelInfo.strings */
  thrown: 0,
  /** the throwing thread's block (x, y, z) and thread (x, y, z) */
  block: 1,
  thread: 4,
  /** the next free word of the print area (atomicAdd); records past the capacity are dropped and counted */
  printCursor: 7,
  /** where print records start */
  printStart: 8,
} as const;

/** A kernel compiled to WGSL. */
export interface WgslKernel {
  readonly code: string;
  /** the entry point's name */
  readonly entryPoint: string;
  /** the parameter block's fields, 4 bytes each, in order (the runtime rounds the size up to 16) */
  readonly params: readonly ParamField[];
  readonly arrays: readonly ArrayBinding[];
  /** bytes of `var<workgroup>` the kernel declares (without dynamic shared memory) */
  readonly staticSharedBytes: number;
  /** the kernel declares dynamic shared memory: the pipeline overrides DYNAMIC_SHARED_WORDS */
  readonly dynamicShared: boolean;
  /** the device features the module enables ("subgroups", "shader-f16") */
  readonly features: readonly string[];
  /** print records' words the status buffer should hold (0: the kernel never prints) */
  readonly printWords: number;
}
