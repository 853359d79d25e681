// The launch ABI: what a compiled kernel is handed at a launch (its arguments, its shape) and the
// storage those arguments point into. Every back end's code and runtime reads these shapes, so they
// live below all of them.

import type { ScalarName } from "../dtypes.js";

/**
 * Storage of a device allocation, opaque but for these fields to everything outside the back end that
 * made it (each back end has its own kind, with what it needs: bytes, a device pointer).
 */
export interface DeviceBuffer {
  /** the back end's kind of buffer (its own code tells its buffers from another's by it) */
  readonly kind: string;
  readonly byteLength: number;
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

/** A `throw` site as its entry in `FunctionIR.strings`: the message, then, when known, where it is (`file:line`). */
export function throwSite(message: string, where?: string): string {
  return where === undefined ? message : `${message}\0${where}`;
}

/** The message and place of a `throw` site's string (see `throwSite`). */
export function parseThrowSite(text: string): { message: string; where?: string } {
  const cut = text.lastIndexOf("\0");
  return cut < 0 ? { message: text } : { message: text.slice(0, cut), where: text.slice(cut + 1) };
}

/** Marks an object that `env` captures by reference (DeviceArray carries it): the compiled code takes it as a parameter. */
export const CAPTURED_BY_REFERENCE = Symbol.for("numbats.capturedByReference");
