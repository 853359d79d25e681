// A CUDA device allocation (or page-locked host memory) as the driver back end holds it.

import type { DeviceBuffer } from "../../../abi/launch-abi.js";

export interface CudaBuffer extends DeviceBuffer {
  readonly kind: "cuda";
  readonly ptr: bigint;
  /** `ptr` as a Number (exact: addresses are below 2^53), for launches: converting a BigInt costs more than a launch's driver call */
  readonly address: number;
  /** the context generation it was allocated in; a context reset invalidates it */
  readonly generation: number;
  /** host memory for pinned/mapped buffers (else undefined) */
  readonly host?: ArrayBuffer;
  /** memory of another process opened through IPC: free() closes it (cuIpcCloseMemHandle) */
  readonly opened?: boolean;
}

export const isCudaBuffer = (buf: DeviceBuffer): buf is CudaBuffer => buf.kind === "cuda";
