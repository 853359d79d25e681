// The simulator's device memory: bytes in this process (shared with worker threads, and through a file
// with other processes once exported).

import type { DeviceBuffer } from "../../../abi/launch-abi.js";

export interface SimBuffer extends DeviceBuffer {
  readonly kind: "sim";
  /** the bytes; may be a user's host ArrayBuffer for arrays a kernel only reads */
  readonly bytes: ArrayBuffer | SharedArrayBuffer;
  readonly byteOffset: number;
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

export const isSimBuffer = (buf: DeviceBuffer): buf is SimBuffer => buf.kind === "sim";
