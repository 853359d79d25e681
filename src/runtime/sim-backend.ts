// The simulator back end: device memory is SharedArrayBuffers, copies are memcpy,
// and all work runs synchronously, so streams and events are always complete.
// Kernels are compiled to JS by the JS target.

import { availableParallelism, freemem, totalmem } from "node:os";
import type {
  Backend, BackendEvent, BackendStream, DeviceBuffer, DeviceInfo, SimBuffer,
} from "./backend.js";
import { compileSim } from "../targets/js/index.js";
import { raiseKernelErrors } from "./kernel-errors.js";
import { noteAlloc, noteDeviceCopy, noteFree, noteHostCopy, simChecks } from "../targets/js/sanitize.js";

export const SIM_DEVICE: DeviceInfo = {
  id: 0,
  name: "numbats simulator",
  computeCapability: [9, 0],
  multiprocessors: availableParallelism(),
  totalMemory: totalmem(),
  limits: {
    maxThreadsPerBlock: 1024,
    maxBlockDim: [1024, 1024, 64],
    maxGridDim: [2 ** 31 - 1, 65535, 65535],
    maxSharedPerBlock: 48 * 1024,
    maxSharedPerBlockOptin: 99 * 1024,
    warpSize: 32,
  },
};

/** A SimBuffer over a host array's own bytes, no copy (for arrays a kernel only reads). */
export function wrapHostArray(view: ArrayBufferView): SimBuffer {
  return { kind: "sim", bytes: view.buffer, byteOffset: view.byteOffset, byteLength: view.byteLength, freed: false };
}

function simBuffer(buf: DeviceBuffer): SimBuffer {
  if (buf.kind !== "sim") throw new TypeError("a CUDA device buffer was given to the simulator back end");
  if (buf.freed) throw new Error("use of a freed device buffer");
  return buf;
}

/** The bytes [offset, offset + length) of a buffer, bounds-checked. */
function bytesOf(buf: DeviceBuffer, offset: number, length: number): Uint8Array {
  const b = simBuffer(buf);
  if (offset < 0 || length < 0 || offset + length > b.byteLength) {
    throw new RangeError(`copy of ${length} bytes at offset ${offset} is outside a device buffer of ${b.byteLength} bytes`);
  }
  return new Uint8Array(b.bytes, b.byteOffset + offset, length);
}

const viewBytes = (v: ArrayBufferView) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

// the synchronising calls raise the KernelError of a kernel that threw since the last one
class SimStream implements BackendStream {
  constructor(readonly isDefault: boolean) {}
  synchronize(): void {
    raiseKernelErrors();
  }
  done(): Promise<void> {
    try {
      raiseKernelErrors();
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

class SimEvent implements BackendEvent {
  private time: number | undefined;
  record(_stream: BackendStream): void {
    this.time = performance.now();
  }
  synchronize(): void {}
  query(): boolean {
    return true;
  }
  elapsedSince(start: BackendEvent): number {
    if (!(start instanceof SimEvent)) throw new TypeError("elapsed time between events of different back ends");
    return this.recordedTime("end") - start.recordedTime("start");
  }
  private recordedTime(which: string): number {
    if (this.time === undefined) throw new Error(`the ${which} event was never recorded; call event.record() first`);
    return this.time;
  }
}

export function createSimBackend(): Backend {
  const defaultStream = new SimStream(true);
  const alloc = (bytes: number): SimBuffer => {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`bad allocation size ${bytes}`);
    // shared memory: the worker threads that run large launches (sim-workers.ts) use it in place
    return { kind: "sim", bytes: new SharedArrayBuffer(bytes), byteOffset: 0, byteLength: bytes, freed: false };
  };
  // the sanitizer's view of memory (written bits, frees, leaks); nothing when it is off
  const sanitizing = () => simChecks().tools !== undefined;
  return {
    name: "sim",
    device: SIM_DEVICE,
    alloc(bytes) {
      const buf = alloc(bytes);
      if (sanitizing()) noteAlloc(buf);
      return buf;
    },
    allocHost: (bytes) => alloc(bytes),
    free(buf) {
      simBuffer(buf).freed = true;
      if (sanitizing()) noteFree(buf as SimBuffer);
    },
    copyToDevice(buf, byteOffset, src) {
      bytesOf(buf, byteOffset, src.byteLength).set(viewBytes(src));
      if (sanitizing()) noteHostCopy(buf as SimBuffer, byteOffset, src.byteLength);
    },
    copyToHost(dst, buf, byteOffset) {
      raiseKernelErrors();
      viewBytes(dst).set(bytesOf(buf, byteOffset, dst.byteLength));
    },
    copyDeviceToDevice(dst, dstOffset, src, srcOffset, bytes) {
      // TypedArray.set copies correctly when both views share (and overlap in) one buffer
      bytesOf(dst, dstOffset, bytes).set(bytesOf(src, srcOffset, bytes));
      if (sanitizing()) noteDeviceCopy(dst as SimBuffer, dstOffset, src as SimBuffer, srcOffset, bytes);
    },
    compile(ir) {
      return compileSim(ir);
    },
    defaultStream: () => defaultStream,
    createStream: () => new SimStream(false),
    createEvent: () => new SimEvent(),
    synchronize: raiseKernelErrors,
    memoryInfo: () => ({ free: freemem(), total: totalmem() }),
  };
}
