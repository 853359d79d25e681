// The simulator back end: device memory is SharedArrayBuffers, copies are memcpy,
// and all work runs synchronously, so streams and events are always complete.
// Kernels are the JS target's, loaded by sim-kernel.ts.

import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { availableParallelism, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type {
  Artifact, Backend, BackendEvent, BackendStream, CompiledKernel, DeviceBuffer, DeviceInfo, IpcMemory, KernelArg,
} from "../../../abi/backend.js";
import { buildJs, compileJs, loadJs, type JsArtifactFacts } from "../js/index.js";
import type { FunctionIR } from "../../../compiler/ir.js";
import { isSimBuffer, type SimBuffer } from "./buffer.js";
import { loadSimKernel } from "./sim-kernel.js";
import { raiseKernelErrors } from "../../../abi/kernel-errors.js";
import { noteAlloc, noteCollected, noteDeviceCopy, noteFree, noteHostCopy, sanitizes, simChecks } from "./sanitize.js";
import { hostBuffers } from "./sim-workers.js";
import { SimCapture, capturedLaunches } from "./sim-graph.js";

/** Simulated device `id` (NUMBATS_SIM_DEVICES=N gives ids 0…N-1, all alike). */
export function simDevice(id: number): DeviceInfo {
  return { ...SIM_DEVICE, id };
}

/**
 * The simulated device: compute capability 8.0, the oldest every feature of the kernel language runs on
 * natively (PTX for it, as `inspectAsm` prints and `numbats ptx` writes without a GPU, runs on any GPU
 * from the A100 on), with limits every such GPU meets (99 KB of shared memory per block, as on 8.6 and
 * 8.9; 8.0 allows 163 KB, 9.0 227 KB), so that a launch the simulator takes also launches on them.
 */
export const SIM_DEVICE: DeviceInfo = {
  id: 0,
  name: "numbats simulator",
  computeCapability: [8, 0],
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

/**
 * A SimBuffer over a host array's own bytes, no copy: a launch uses it in place, and leaves it as it was
 * if it fails (see keepHostArrays and stageHostArrays in sim-workers.ts).
 */
export function wrapHostArray(view: ArrayBufferView): SimBuffer {
  const buf: SimBuffer = { kind: "sim", bytes: view.buffer, byteOffset: view.byteOffset, byteLength: view.byteLength, freed: false };
  hostBuffers.add(buf);
  return buf;
}

function simBuffer(buf: DeviceBuffer): SimBuffer {
  if (!isSimBuffer(buf)) throw new TypeError("a CUDA device buffer was given to the simulator back end");
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

function copyBytes(dst: DeviceBuffer, dstOffset: number, src: DeviceBuffer, srcOffset: number, bytes: number): void {
  loadShared(simBuffer(src), srcOffset, bytes);
  // TypedArray.set copies correctly when both views share (and overlap in) one buffer
  bytesOf(dst, dstOffset, bytes).set(bytesOf(src, srcOffset, bytes));
  storeShared(dst as SimBuffer, dstOffset, bytes);
}

// ---------------------------------------------------------------------------
// IPC between processes: an exported buffer's bytes live in a file (in /dev/shm, memory, where there is
// one). Each process keeps its own copy and meets the file at coherence points: before a launch or copy
// reads the buffer it loads the file, after one writes it it stores what was written. So a process sees
// another's writes from its first launch or copy after the writer's returned (ordering them is the
// processes' business, as with CUDA IPC, where events order them).

/** buffers with an IPC file in this process; launches look at their arguments only when there are some */
let sharedBuffers = 0;
/** the files this process made: removed at exit when their arrays were never freed */
const ownedFiles = new Set<string>();
let removeAtExit = false;

function own(path: string): void {
  ownedFiles.add(path);
  if (removeAtExit) return;
  removeAtExit = true;
  process.on("exit", () => {
    for (const f of ownedFiles) rmSync(f, { force: true });
  });
}

function ipcDirectory(): string {
  return existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
}

/** Copies [offset, offset + length) of the shared file into the buffer. */
function loadShared(b: SimBuffer, offset = 0, length = b.byteLength - offset): void {
  if (b.ipc) readSync(b.ipc.fd, new Uint8Array(b.bytes, b.byteOffset + offset, length), 0, length, offset);
}

/** Copies [offset, offset + length) of the buffer into the shared file. */
function storeShared(b: SimBuffer, offset = 0, length = b.byteLength - offset): void {
  if (b.ipc) writeSync(b.ipc.fd, new Uint8Array(b.bytes, b.byteOffset + offset, length), 0, length, offset);
}

function exportShared(b: SimBuffer): IpcMemory {
  if (!b.ipc) {
    const path = join(ipcDirectory(), `numbats-ipc-${process.pid}-${randomBytes(6).toString("hex")}`);
    b.ipc = { path, fd: openSync(path, "w+", 0o600), owner: true };
    own(path);
    sharedBuffers++;
    storeShared(b);
  }
  return { handle: b.ipc.path, byteLength: b.byteLength };
}

function openShared(memory: IpcMemory): SimBuffer {
  let fd: number;
  try {
    fd = openSync(memory.handle, "r+");
  } catch (e) {
    throw new Error(`cannot open the shared device memory ${memory.handle}: ${(e as Error).message.split("\n")[0]} (the exporting process must keep the array alive, not freed, while others use it)`);
  }
  const size = fstatSync(fd).size;
  if (size !== memory.byteLength) {
    closeSync(fd);
    throw new Error(`the shared device memory ${memory.handle} holds ${size} bytes, the handle says ${memory.byteLength}: the handle is stale or not from this machine`);
  }
  const b: SimBuffer = { kind: "sim", bytes: new SharedArrayBuffer(size), byteOffset: 0, byteLength: size, freed: false, ipc: { path: memory.handle, fd, owner: false } };
  sharedBuffers++;
  loadShared(b);
  return b;
}

/** Ends this process's share; the owner also removes the file (an opener still open keeps a copy nobody else sees). */
function unshare(b: SimBuffer): void {
  if (!b.ipc) return;
  closeSync(b.ipc.fd);
  if (b.ipc.owner) {
    rmSync(b.ipc.path, { force: true });
    ownedFiles.delete(b.ipc.path);
  }
  b.ipc = undefined;
  sharedBuffers--;
}

/** A kernel whose launches load shared arguments before and store the ones it writes after. */
function syncingShared(kernel: CompiledKernel): CompiledKernel {
  const written = kernel.info.writtenParams;
  const shared = (args: readonly KernelArg[]) => args.filter((a) => a.kind === "array" && isSimBuffer(a.buffer) && a.buffer.ipc);
  return {
    ...kernel,
    launch(dims, args, stream, cooperative, scalarsStored) {
      if (sharedBuffers === 0) return kernel.launch(dims, args, stream, cooperative, scalarsStored);
      const arrays = shared(args) as (KernelArg & { kind: "array"; buffer: SimBuffer })[];
      for (const a of arrays) loadShared(a.buffer);
      kernel.launch(dims, args, stream, cooperative, scalarsStored);
      for (const a of arrays) if (written.has(a.name)) storeShared(a.buffer);
    },
  };
}

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

/** What the simulator's artifacts are for: its JavaScript runs on every simulated device alike. */
const SIM_ARTIFACTS = "sim";

/** The simulator's artifact of `ir`: its plain JavaScript and what loading it needs. */
export const simArtifact = (ir: FunctionIR): Artifact => ({ target: SIM_ARTIFACTS, ...buildJs(ir) });

/** The back end of simulated device `id`; each device counts its own allocations. */
export function createSimBackend(id = 0): Backend {
  const defaultStream = new SimStream(true);
  let allocated = 0;
  const counted = new WeakSet<SimBuffer>(); // device allocations (not pinned host memory)
  const alloc = (bytes: number): SimBuffer => {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`bad allocation size ${bytes}`);
    // shared memory: the worker threads that run large launches (sim-workers.ts) use it in place
    return { kind: "sim", bytes: new SharedArrayBuffer(bytes), byteOffset: 0, byteLength: bytes, freed: false };
  };
  // the sanitizer's view of memory (written bits, frees, leaks); nothing when it is off
  const sanitizing = () => simChecks().tools !== undefined;
  // copies and launches on a capturing stream are recorded (sim-graph.ts)
  const capture = new SimCapture();
  return {
    name: "sim",
    device: simDevice(id),
    alloc(bytes) {
      const buf = alloc(bytes);
      allocated += bytes;
      counted.add(buf);
      if (sanitizing()) noteAlloc(buf);
      return buf;
    },
    allocHost: (bytes) => alloc(bytes),
    free(buf) {
      const b = simBuffer(buf);
      b.freed = true;
      unshare(b);
      if (counted.delete(b)) allocated -= b.byteLength;
      if (sanitizing()) noteFree(buf as SimBuffer);
    },
    copyToDevice(buf, byteOffset, src, stream) {
      capture.run(stream, "a copy to the device", () => {
        bytesOf(buf, byteOffset, src.byteLength).set(viewBytes(src));
        storeShared(buf as SimBuffer, byteOffset, src.byteLength);
        if (sanitizing()) noteHostCopy(buf as SimBuffer, byteOffset, src.byteLength);
      });
    },
    copyToHost(dst, buf, byteOffset, stream) {
      capture.run(stream, "a copy to the host", () => {
        raiseKernelErrors();
        loadShared(simBuffer(buf), byteOffset, dst.byteLength);
        viewBytes(dst).set(bytesOf(buf, byteOffset, dst.byteLength));
      });
    },
    copyDeviceToDevice(dst, dstOffset, src, srcOffset, bytes, stream) {
      capture.run(stream, "a copy between device arrays", () => {
        copyBytes(dst, dstOffset, src, srcOffset, bytes);
        if (sanitizing()) noteDeviceCopy(dst as SimBuffer, dstOffset, src as SimBuffer, srcOffset, bytes);
      });
    },
    // every simulated device's memory is this process's: a peer copy is a copy
    copyFromPeer(dst, dstOffset, srcBackend, src, srcOffset, bytes, stream) {
      if (srcBackend.name !== "sim") throw new TypeError("a CUDA device buffer was given to the simulator back end");
      capture.run(stream, "a copy between devices", () => copyBytes(dst, dstOffset, src, srcOffset, bytes));
    },
    ipcExport: (buf) => exportShared(simBuffer(buf)),
    ipcOpen: openShared,
    compile: (ir) => capturedLaunches(syncingShared(loadSimKernel(compileJs(ir))), capture),
    artifactTarget: SIM_ARTIFACTS,
    build: simArtifact,
    load: ({ info, code, facts }: Artifact, { origin, ir }) =>
      capturedLaunches(syncingShared(loadSimKernel(loadJs(info, code, facts as JsArtifactFacts, origin, ir))), capture),
    inPlace: wrapHostArray,
    hostBytes(buf) {
      const b = buf as SimBuffer;
      return new Uint8Array(b.bytes, b.byteOffset, b.byteLength);
    },
    reportsFreedUse: () => sanitizes("memcheck"),
    collected: noteCollected,
    defaultStream: () => defaultStream,
    createStream: () => new SimStream(false),
    createEvent: () => new SimEvent(),
    synchronize: raiseKernelErrors,
    beginCapture: (stream) => capture.begin(stream),
    endCapture: (stream) => capture.end(stream),
    abandonCapture: (stream) => capture.abandon(stream),
    // each simulated device has the host's memory as its size, less what its own arrays take
    memoryInfo: () => ({ free: Math.max(0, totalmem() - allocated), total: totalmem() }),
  };
}
