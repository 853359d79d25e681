// The launch ABI: what a compiled kernel is handed at a launch (its arguments, its shape) and the
// storage those arguments point into. Both targets' code and both back ends read these shapes, so they
// live below all of them.

import type { ScalarName } from "../dtypes.js";

/** Storage of a device allocation. */
export type DeviceBuffer = SimBuffer | CudaBuffer;

export interface SimBuffer {
  readonly kind: "sim";
  /** the bytes; may be a user's host ArrayBuffer for arrays a kernel only reads */
  readonly bytes: ArrayBuffer | SharedArrayBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;
  freed: boolean;
  /** the file the bytes are shared through with other processes, once exported or opened (IPC) */
  ipc?: SimIpcFile;
}

/** The simulator's shared device memory: a file every sharing process reads and writes at launches and copies. */
export interface SimIpcFile {
  readonly path: string;
  readonly fd: number;
  /** the exporting process (which removes the file when it frees the memory) */
  readonly owner: boolean;
}

export interface CudaBuffer {
  readonly kind: "cuda";
  readonly ptr: bigint;
  /** `ptr` as a Number (exact: addresses are below 2^53), for launches: converting a BigInt costs more than a launch's driver call */
  readonly address: number;
  readonly byteLength: number;
  /** the context generation it was allocated in; a context reset invalidates it */
  readonly generation: number;
  /** host memory for pinned/mapped buffers (else undefined) */
  readonly host?: ArrayBuffer;
  /** memory of another process opened through IPC: free() closes it (cuIpcCloseMemHandle) */
  readonly opened?: boolean;
  freed: boolean;
}

/** Launch geometry, already validated and padded to 3-d. */
export interface LaunchDims {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedMemBytes: number;
}

/**
 * The layout of a strided N-d array: extent and step (in elements) per dimension; as numbers, or as what
 * holds them in generated code (PTX registers, JavaScript locals).
 */
export interface Strided<T = number> {
  readonly shape: readonly T[];
  readonly strides: readonly T[];
}

/** An array argument as a compiled kernel sees it. */
export interface ArrayArg extends Strided {
  readonly kind: "array";
  readonly buffer: DeviceBuffer;
  /** offset of element [0, 0, …] from the buffer's start, in bytes */
  readonly byteOffset: number;
  readonly dtype: ScalarName;
  /** the parameter's name, for bounds-check messages */
  readonly name: string;
}

export interface ScalarArg {
  readonly kind: "scalar";
  readonly dtype: ScalarName;
  /** already converted to dtype: number, bigint (64-bit ints) or boolean */
  readonly value: number | bigint | boolean;
}

export type KernelArg = ArrayArg | ScalarArg;

/** A back end's stream, opaque to everything but the back end that made it. */
export interface BackendStream {
  synchronize(): void;
  /** resolves when all work queued so far is done, without blocking the event loop */
  done(): Promise<void>;
  /** true if this is the default (null) stream */
  readonly isDefault: boolean;
}
