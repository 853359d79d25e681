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
// The runtime makes the bind group layout itself from `arrays` (layout: "auto" would drop the bindings a
// kernel does not use).
// Overrides: the block's extent (BLOCK_X, BLOCK_Y, BLOCK_Z) and, for dynamic shared memory,
// DYNAMIC_SHARED_BYTES (the launch's bytes, as given): one pipeline per distinct set.

import type { ScalarName } from "../../../dtypes.js";

/** What the WGSL target needs to know of the adapter it compiles for. */
export interface WgslTarget {
  /** the adapter's subgroup size with the `subgroups` feature (its `subgroupMinSize` = `Max`); undefined without it */
  readonly subgroupSize?: number;
  /** the adapter has `shader-f16` */
  readonly shaderF16: boolean;
  /**
   * the adapter's f16 arithmetic and conversions are not rounded to half precision (lavapipe keeps f16
   * values in f32): the target rounds each float16 result itself, on the bits
   */
  readonly unroundedF16?: boolean;
  /** the adapter's f32 `fma` rounds once (probed when the device opens): used as it is, not emulated */
  readonly fusedFma?: boolean;
  /** maxComputeWorkgroupStorageSize */
  readonly maxWorkgroupStorageBytes: number;
  /** maxStorageBuffersPerShaderStage */
  readonly maxStorageBuffers: number;
  /** where the adapter is, for messages: "WebGPU (llvmpipe: Mesa 25.0.7)" */
  readonly adapterName: string;
}

/**
 * One 4-byte field of the parameter block, in order: its value comes from launch argument `arg`.
 * A value field holds the scalar's 32-bit form: signed integers as i32, unsigned ones as u32, bool as
 * u32 0/1, float32 as f32, float16 as the f32 of its value; an int64 or uint64 takes two fields, `word`
 * 0 (its low 32 bits, as u32) then 1 (its high 32 bits). `item`, when present, is the path of the
 * value inside a tuple argument (`[1, 0]`: item 0 of item 1).
 */
export type ParamField =
  | { readonly arg: number; readonly what: "value"; readonly dtype: ScalarName; readonly item?: readonly number[]; readonly word?: 0 | 1 }
  | { readonly arg: number; readonly what: "offset" }
  | { readonly arg: number; readonly what: "shape" | "stride"; readonly dim: number };

/**
 * How to compile for one launch's arguments (see `emitWgsl`): groups of array arguments (launch argument
 * indices) that view one buffer, as a record array's fields do. WebGPU cannot bind a written buffer
 * twice to one dispatch, so each group is one binding, whose u32 words every member reads and writes.
 */
export interface WgslLaunchShape {
  readonly sharedBuffers?: readonly (readonly number[])[];
}

/** One array argument's binding. */
export interface ArrayBinding {
  /** the launch argument it binds (an ArrayArg) */
  readonly arg: number;
  /** all the launch arguments that view this binding's buffer (a group of WgslLaunchShape.sharedBuffers), `arg` first */
  readonly args?: readonly number[];
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

/**
 * What `STATUS_WORDS.thrown` holds besides a throw (1 + a string index, below FAULT_ASSERT): a failed
 * `debug` bounds check (FAULT_BOUNDS | the index of its access in WgslKernel.accesses) or a failed
 * `debug` assertion (FAULT_ASSERT | the word of its print record, from printStart).
 */
export const FAULT_BOUNDS = 0x80000000;
export const FAULT_ASSERT = 0x40000000;

/**
 * Words after the print area (at printStart + printWords): the count of print records dropped for want
 * of room, and a failed bounds check's index and shape (3 dimensions each; more are not recorded).
 */
export const STATUS_TAIL = { dropped: 0, index: 1, shape: 4, words: 7 } as const;

/** What a print record's argument words are: one word, two for "i64"/"u64" (low, high), none for a constant argument. */
export type PrintArgKind = "i32" | "u32" | "f32" | "i64" | "u64" | { readonly string: number } | { readonly value: number };

/** the words a print argument of this kind takes in its record */
export const printArgWords = (kind: PrintArgKind): number => (typeof kind === "object" ? 0 : kind === "i64" || kind === "u64" ? 2 : 1);

/**
 * A console.log (or a `debug` assertion's message). Its records in the print area are PRINT_HEADER
 * words (the site's index, the block's linear index, the barriers the thread had passed, the thread's
 * linear index in its block, the thread's count of records before it), then each non-constant
 * argument's words (printArgWords).
 */
export interface PrintSite {
  /** the format's index in the kernel's strings */
  readonly format: number;
  readonly args: readonly PrintArgKind[];
  /** a `debug` assertion's message: the failure's error names it, it is not printed (as on the simulator) */
  readonly assertion?: true;
}
export const PRINT_HEADER = 5;

/** A place in the kernel's source (`source`: the text it is in, when not the kernel's own). */
export interface SourcePlace {
  readonly line: number;
  readonly column: number;
  readonly source?: string;
}

/** An array access that a `debug` build checks: what its bounds error names. */
export interface CheckedAccess extends SourcePlace {
  /** the array's name in the kernel */
  readonly array: string;
  /** its dimensions (a fault records 3 at most) */
  readonly ndim: number;
}

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
  /** the kernel declares dynamic shared memory: the pipeline overrides DYNAMIC_SHARED_BYTES */
  readonly dynamicShared: boolean;
  /** the device features the module enables ("subgroups", "shader-f16") */
  readonly features: readonly string[];
  /** print records' words the status buffer should hold (0: the kernel never prints) */
  readonly printWords: number;
  /** the status buffer's size in words (STATUS_WORDS, the print area, STATUS_TAIL): the runtime zeroes it before each launch */
  readonly statusWords: number;
  /** the kernel's console.log sites, by the index its records start with */
  readonly prints: readonly PrintSite[];
  /** the accesses a `debug` build checks, by the index a bounds fault records */
  readonly accesses: readonly CheckedAccess[];
  /** the places of the barriers, by the N of the `// numbats: place N` comment ending each barrier's WGSL line */
  readonly places: readonly SourcePlace[];
}
