// One GPU through the driver API: its primary context, memory, copies,
// streams, events and kernels (the Backend interface of src/abi/backend.ts).
//
// Context generations: a kernel fault (illegal address, trap, assert) leaves
// the context unusable; close() (cuda.close()) releases and resets it, and the
// next use of the device makes a fresh back end; resetContext() resets it in
// place. Everything made before (buffers, streams, events) carries the
// generation it was made in and refuses use afterwards, instead of touching
// freed memory. Kernels reload their module transparently.

import { koffi } from "./ffi.js";
import type {
  Artifact, ArtifactSource, ArrayArg, Backend, BackendEvent, BackendGraph, BackendStream, CompiledKernel, DeviceBuffer, DeviceInfo, IpcMemory,
} from "../../../abi/backend.js";
import { kernelInfo, type KernelInfo } from "../../../abi/kernel-info.js";
import type { FunctionIR } from "../../../compiler/ir.js";
import { emitPtx } from "../ptx/emit.js";
import type { PtxModule, PtxTargetOptions } from "../ptx/module.js";
import { isCudaBuffer, type CudaBuffer } from "./buffer.js";
import { CudaError, LaunchError } from "../../../errors.js";
import { CUDA_SUCCESS, STICKY_ERRORS, type CudaCall, type CudaDriver } from "./driver.js";
import { deviceInfo, initDriver } from "./detect.js";
import type { DeviceContext } from "./context.js";
import { CudaKernel } from "./kernel.js";
import { linkKernel, needsLink, ptxNeedsLink } from "./link-kernel.js";
import { ptxVersionForDriver } from "./ptxversion.js";
import { CudaEvent, CudaStream } from "./stream.js";
import { abandonCapture, beginCapture, endCapture } from "./graph.js";
import { raiseKernelErrors } from "../../../abi/kernel-errors.js";

const CU_MEMHOSTALLOC_DEVICEMAP = 2;
const CUDA_ERROR_INVALID_VALUE = 1;
const CUDA_ERROR_CONTEXT_IS_DESTROYED = 709;
const CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
const CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1;
const IPC_HANDLE_BYTES = 64;

/** The context current on this (the main) thread, so switching devices costs one compare per call. */
let currentContext: unknown;

interface Allocation {
  readonly generation: number;
  /** device memory (cuMemFree_v2), another process's memory (cuIpcCloseMemHandle) or the host pointer of pinned memory (cuMemFreeHost) */
  readonly device?: bigint;
  readonly opened?: bigint;
  readonly host?: unknown;
}

export class CudaDevice implements Backend, DeviceContext {
  readonly name = "cuda" as const;
  readonly device: DeviceInfo;
  readonly driver: CudaDriver;
  /** as cuDriverGetVersion reports it, e.g. 12080 */
  readonly driverVersion: number;
  /** highest PTX ISA the driver JIT accepts */
  readonly maxPtxVersion: string | undefined;
  /** bumped by resetContext() */
  generation = 0;

  private readonly ordinal: number;
  private context: unknown;
  private closed = false;
  /** set when a reset could not revive the device: every later call reports it */
  private unusable: CudaError | undefined;
  private readonly nullStream: CudaStream;
  /** per other device: whether this context reads its memory directly (peer access enabled) */
  private readonly peers = new Map<CudaDevice, boolean>();
  // backstops for memory, streams and events nobody freed: they run only in the generation they were made in
  private readonly allocations = new FinalizationRegistry<Allocation>((a) => this.release(a));
  private readonly handles = new FinalizationRegistry<{ generation: number; destroy: () => number }>((h) => {
    if (h.generation === this.generation && !this.closed) h.destroy();
  });

  constructor(driver: CudaDriver, deviceId: number) {
    const init = initDriver(driver);
    if (!init.ok) throw new CudaError(init.call, init.code, driver.errorName(init.code), init.reason);
    this.driver = driver;
    this.driverVersion = init.driverVersion;
    this.maxPtxVersion = ptxVersionForDriver(init.driverVersion);
    this.device = deviceInfo(driver, deviceId);
    const dev = [0];
    driver.check("cuDeviceGet", driver.api.cuDeviceGet(dev, deviceId));
    this.ordinal = dev[0]!;
    this.context = this.retain();
    this.nullStream = new CudaStream(this, null, undefined);
  }

  private retain(): unknown {
    const ctx: unknown[] = [null];
    const rc = this.driver.api.cuDevicePrimaryCtxRetain(ctx, this.ordinal);
    // Recent drivers keep a faulted process's device state: CUDA documents that after such an error
    // "the process must be terminated and relaunched"
    if (STICKY_ERRORS.has(rc)) {
      throw new CudaError("cuDevicePrimaryCtxRetain", rc, this.driver.errorName(rc),
        "the CUDA driver does not let this process use the GPU again after a kernel fault; restart the process");
    }
    this.driver.check("cuDevicePrimaryCtxRetain", rc);
    currentContext = undefined;
    return ctx[0];
  }

  /** Makes this device's context current on the calling thread. */
  activate(): void {
    if (this.closed) throw new CudaError("cuCtxSetCurrent", 201, "CUDA_ERROR_INVALID_CONTEXT", "the CUDA backend was closed");
    if (this.unusable) throw this.unusable;
    if (currentContext === this.context) return;
    this.driver.check("cuCtxSetCurrent", this.driver.api.cuCtxSetCurrent(this.context));
    currentContext = this.context;
  }

  // ------------------------------------------------------------------ memory

  alloc(bytes: number): CudaBuffer {
    this.activate();
    if (bytes === 0) return { kind: "cuda", ptr: 0n, address: 0, byteLength: 0, generation: this.generation, freed: false };
    const out = [0];
    const rc = this.driver.api.cuMemAlloc_v2(out, bytes);
    if (rc !== CUDA_SUCCESS) throw this.driver.error("cuMemAlloc_v2", rc, `allocating ${bytes} bytes on ${this.device.name}`);
    const buf: CudaBuffer = { kind: "cuda", ptr: BigInt(out[0]!), address: Number(out[0]!), byteLength: bytes, generation: this.generation, freed: false };
    this.allocations.register(buf, { generation: buf.generation, device: buf.ptr }, buf);
    return buf;
  }

  /**
   * Page-locked host memory; `host` is a view of it. The memory lives as long
   * as that ArrayBuffer: free() marks the buffer freed, and the pages are
   * released once the view is garbage-collected (so a kept view never dangles).
   */
  allocHost(bytes: number, mapped: boolean): CudaBuffer {
    this.activate();
    const out: unknown[] = [null];
    const rc = this.driver.api.cuMemHostAlloc(out, Math.max(bytes, 1), mapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0);
    if (rc !== CUDA_SUCCESS) throw this.driver.error("cuMemHostAlloc", rc, `allocating ${bytes} bytes of pinned host memory`);
    const hostPtr = out[0];
    // with unified addressing (every 64-bit platform CUDA 12 supports) pinned memory has the same address on the device
    let ptr = koffi().address(hostPtr);
    if (mapped) {
      const dptr = [0];
      const drc = this.driver.api.cuMemHostGetDevicePointer_v2(dptr, hostPtr, 0);
      if (drc !== CUDA_SUCCESS) {
        this.driver.api.cuMemFreeHost(hostPtr);
        throw this.driver.error("cuMemHostGetDevicePointer_v2", drc, `mapping ${bytes} bytes of pinned host memory into the device's address space`);
      }
      ptr = BigInt(dptr[0]!);
    }
    const host = koffi().view(hostPtr, bytes);
    this.allocations.register(host, { generation: this.generation, host: hostPtr });
    return { kind: "cuda", ptr, address: Number(ptr), byteLength: bytes, generation: this.generation, host, freed: false };
  }

  /**
   * Idempotent; a buffer from a reset context is only marked (its memory went with the context), and
   * another process's memory is closed (its owner frees it). When the driver refuses, the buffer stays
   * allocated and owned: a later free(), or its finaliser, releases it.
   */
  free(buf: DeviceBuffer): void {
    if (!isCudaBuffer(buf) || buf.freed) return;
    if (!buf.host && buf.byteLength > 0 && buf.generation === this.generation && !this.closed) {
      this.activate();
      if (buf.opened) this.call("cuIpcCloseMemHandle", buf.ptr);
      else this.call("cuMemFree_v2", buf.ptr);
      this.allocations.unregister(buf);
    }
    buf.freed = true;
  }

  // ------------------------------------------------------------------ IPC

  /** The allocation's cuIpcMemHandle (base64), which another process opens with ipcOpen. */
  ipcExport(buf: DeviceBuffer): IpcMemory {
    const b = this.useBuffer(buf, "cuIpcGetMemHandle");
    if (b.host) throw new TypeError("pinned host memory cannot be shared with another process; share a device array");
    if (b.opened) throw new TypeError("this memory was opened from another process; share the owner's handle instead");
    this.activate();
    const handle = new Uint8Array(IPC_HANDLE_BYTES);
    this.call("cuIpcGetMemHandle", handle, b.ptr);
    return { handle: Buffer.from(handle).toString("base64"), byteLength: b.byteLength };
  }

  /** Opens another process's allocation in this device's context. */
  ipcOpen(memory: IpcMemory): CudaBuffer {
    const reserved = Buffer.from(memory.handle, "base64");
    if (reserved.length !== IPC_HANDLE_BYTES) throw new TypeError(`not a CUDA IPC memory handle: ${reserved.length} bytes, expected ${IPC_HANDLE_BYTES}`);
    this.activate();
    const out = [0];
    this.call("cuIpcOpenMemHandle_v2", out, { reserved: [...reserved] }, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    const buf: CudaBuffer = {
      kind: "cuda", ptr: BigInt(out[0]!), address: Number(out[0]!), byteLength: memory.byteLength, generation: this.generation, opened: true, freed: false,
    };
    this.allocations.register(buf, { generation: buf.generation, opened: buf.ptr }, buf);
    return buf;
  }

  private release(a: Allocation): void {
    if (a.generation !== this.generation || this.closed) return;
    try {
      this.activate();
      // a sticky error may make these fail; nothing to do about it in a finaliser
      if (a.device !== undefined) this.driver.api.cuMemFree_v2(a.device);
      else if (a.opened !== undefined) this.driver.api.cuIpcCloseMemHandle(a.opened);
      else this.driver.api.cuMemFreeHost(a.host);
    } catch {
      /* closed or unusable context */
    }
  }

  /** The buffer, checked usable by `call`: ours, not freed, from the current context. */
  useBuffer(buf: DeviceBuffer, call: string): CudaBuffer {
    if (!isCudaBuffer(buf)) throw new LaunchError(`${call}: a simulator buffer was given to the CUDA backend`);
    if (buf.generation !== this.generation) {
      throw new CudaError(call, CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED",
        "device array belongs to a context that was reset; allocate it again");
    }
    if (buf.freed) throw new CudaError(call, CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "device array was already freed");
    return buf;
  }

  /** Device address of an array argument (what a kernel parameter receives), as a Number (exact below 2^53). */
  devicePointer(arg: ArrayArg): number {
    const buf = arg.buffer;
    // the check of useBuffer, without making its message on every launch
    const usable = isCudaBuffer(buf) && buf.generation === this.generation && !buf.freed;
    return (usable ? buf as CudaBuffer : this.useBuffer(buf, `argument '${arg.name}'`)).address + arg.byteOffset;
  }

  // ------------------------------------------------------------------ copies

  copyToDevice(buf: DeviceBuffer, byteOffset: number, src: ArrayBufferView, stream?: BackendStream): void {
    const dst = this.copyTarget(buf, byteOffset, src.byteLength, "cuMemcpyHtoD_v2");
    if (src.byteLength === 0) return;
    const bytes = asBytes(src);
    const s = this.useStream(stream ?? this.nullStream, "cuMemcpyHtoD_v2");
    if (dst.host) return this.hostCopy(s, new Uint8Array(dst.host, byteOffset, bytes.length), bytes);
    const at = dst.ptr + BigInt(byteOffset);
    if (s.isDefault) this.call("cuMemcpyHtoD_v2", at, bytes, bytes.length);
    else this.call("cuMemcpyHtoDAsync_v2", at, bytes, bytes.length, s.handle);
  }

  copyToHost(dst: ArrayBufferView, buf: DeviceBuffer, byteOffset: number, stream?: BackendStream): void {
    const src = this.copyTarget(buf, byteOffset, dst.byteLength, "cuMemcpyDtoH_v2");
    if (dst.byteLength === 0) return;
    const bytes = asBytes(dst);
    const s = this.useStream(stream ?? this.nullStream, "cuMemcpyDtoH_v2");
    // a copy to the host synchronises: a kernel that threw is reported before anything is copied
    raiseKernelErrors();
    if (src.host) return this.hostCopy(s, bytes, new Uint8Array(src.host, byteOffset, bytes.length));
    const at = src.ptr + BigInt(byteOffset);
    // from device to pageable memory the driver returns only once the copy is done, so JS memory is safe
    if (s.isDefault) this.call("cuMemcpyDtoH_v2", bytes, at, bytes.length);
    else this.call("cuMemcpyDtoHAsync_v2", bytes, at, bytes.length, s.handle);
  }

  copyDeviceToDevice(dst: DeviceBuffer, dstOffset: number, src: DeviceBuffer, srcOffset: number, bytes: number, stream?: BackendStream): void {
    const d = this.copyTarget(dst, dstOffset, bytes, "cuMemcpyDtoD_v2");
    const from = this.copyTarget(src, srcOffset, bytes, "cuMemcpyDtoD_v2");
    if (bytes === 0) return;
    const s = this.useStream(stream ?? this.nullStream, "cuMemcpyDtoD_v2");
    const a = d.ptr + BigInt(dstOffset), b = from.ptr + BigInt(srcOffset);
    // pinned host memory takes the unified-addressing copy, which infers each side's kind
    const host = d.host !== undefined || from.host !== undefined;
    if (s.isDefault) this.call(host ? "cuMemcpy" : "cuMemcpyDtoD_v2", a, b, bytes);
    else this.call(host ? "cuMemcpyAsync" : "cuMemcpyDtoDAsync_v2", a, b, bytes, s.handle);
  }

  /**
   * From another GPU: peer to peer (cuMemcpyPeerAsync) when cuDeviceCanAccessPeer allows, else staged
   * through pinned host memory (the source's copy, then ours on `stream`).
   */
  copyFromPeer(dst: DeviceBuffer, dstOffset: number, srcBackend: Backend, src: DeviceBuffer, srcOffset: number, bytes: number, stream?: BackendStream): void {
    if (!(srcBackend instanceof CudaDevice)) throw new LaunchError("cuMemcpyPeerAsync: the source array is not on a GPU");
    const d = this.copyTarget(dst, dstOffset, bytes, "cuMemcpyPeerAsync");
    const from = srcBackend.copyTarget(src, srcOffset, bytes, "cuMemcpyPeerAsync");
    if (bytes === 0) return;
    const s = this.useStream(stream ?? this.nullStream, "cuMemcpyPeerAsync");
    if (!d.host && !from.host && this.canAccess(srcBackend)) {
      this.call("cuMemcpyPeerAsync", d.ptr + BigInt(dstOffset), this.context, from.ptr + BigInt(srcOffset), srcBackend.context, bytes, s.handle);
      return;
    }
    const staging = srcBackend.allocHost(bytes, false);
    const hostBytes = new Uint8Array((staging as CudaBuffer).host!, 0, bytes);
    srcBackend.copyToHost(hostBytes, src, srcOffset);
    this.copyToDevice(dst, dstOffset, hostBytes, s);
    s.synchronize(); // the staging memory is released below
    srcBackend.free(staging);
  }

  /** Whether this context reads `peer`'s memory directly; enables the access on first use. */
  private canAccess(peer: CudaDevice): boolean {
    let ok = this.peers.get(peer);
    if (ok === undefined) {
      const can = [0];
      // a driver without the call (or an emulator) stages through the host
      ok = this.driver.api.cuDeviceCanAccessPeer(can, this.ordinal, peer.ordinal) === CUDA_SUCCESS && can[0] === 1;
      if (ok) {
        this.activate();
        const rc = this.driver.api.cuCtxEnablePeerAccess(peer.context, 0);
        if (rc !== CUDA_SUCCESS && rc !== CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) throw this.driver.error("cuCtxEnablePeerAccess", rc, `from ${this.device.name} (device ${this.device.id}) to device ${peer.device.id}`);
      }
      this.peers.set(peer, ok);
    }
    return ok;
  }

  private copyTarget(buf: DeviceBuffer, byteOffset: number, bytes: number, call: string): CudaBuffer {
    const b = this.useBuffer(buf, call);
    if (byteOffset < 0 || byteOffset + bytes > b.byteLength) {
      throw new LaunchError(`${call}: copy of ${bytes} bytes at offset ${byteOffset} does not fit in a buffer of ${b.byteLength} bytes`);
    }
    this.activate();
    return b;
  }

  /** Copies from or to pinned host memory after the stream's earlier work (which may use it) is done. */
  private hostCopy(stream: CudaStream, to: Uint8Array, from: Uint8Array): void {
    stream.synchronize();
    to.set(from);
  }

  private call(call: CudaCall, ...args: unknown[]): void {
    this.driver.check(call, this.driver.api[call](...args));
  }

  // ------------------------------------------------------------------ kernels

  get ptxTarget(): PtxTargetOptions {
    return { computeCapability: this.device.computeCapability, maxPtxVersion: this.maxPtxVersion };
  }

  compile(ir: FunctionIR): CompiledKernel {
    const ptx = emitPtx(ir, this.ptxTarget);
    if (!needsLink(ir)) return this.loadPtx(kernelInfo(ir), ptx);
    return new CudaKernel(this, kernelInfo(ir), ptx, linkKernel(this, ptx, ir.link ?? [], ir.options.maxRegisters));
  }

  /** Artifacts are cubins for this device's compute capability, made by this driver's JIT. */
  get artifactTarget(): string {
    return `cuda sm_${this.device.computeCapability.join("")} driver ${this.driverVersion}`;
  }

  /** The PTX, and the cubin the driver's linker makes of it (which a later process loads with no JIT). */
  build(ir: FunctionIR): Artifact {
    const info = kernelInfo(ir), { text, ...facts } = emitPtx(ir, this.ptxTarget);
    this.activate();
    const image = linkKernel(this, { text, entry: facts.entry }, ir.link ?? [], info.maxRegisters);
    return { target: this.artifactTarget, info, code: text, binary: image, facts };
  }

  /**
   * Loads an artifact's cubin (or JIT-compiles its PTX). A kernel linked with code compiled elsewhere
   * whose artifact has no cubin this device loads (a bundle built where nvJitLink was not found, or by
   * another toolkit) is linked here with `source.link`, the kernel's own link code, which its key matched.
   */
  load(artifact: Artifact, source?: ArtifactSource): CompiledKernel {
    this.activate();
    const ptx: PtxModule = { ...(artifact.facts as Omit<PtxModule, "text">), text: artifact.code };
    const link = source?.link ?? [];
    if (!ptxNeedsLink(ptx.text, link)) return new CudaKernel(this, artifact.info, ptx, artifact.binary);
    if (artifact.binary) {
      try {
        return new CudaKernel(this, artifact.info, ptx, artifact.binary);
      } catch {
        // a cubin this device cannot load, whose PTX alone does not link: linked again below
      }
    }
    return new CudaKernel(this, artifact.info, ptx, linkKernel(this, ptx, link, artifact.info.maxRegisters));
  }

  /** JIT-loads a PTX module as the kernel `info` describes (compile's second half; tests load hand-written PTX). */
  loadPtx(info: KernelInfo, ptx: PtxModule): CudaKernel {
    this.activate();
    return new CudaKernel(this, info, ptx);
  }

  /** page-locked memory's host view (kernels address only device memory: host arrays are copied) */
  hostBytes(buf: DeviceBuffer): Uint8Array | undefined {
    const { host } = buf as CudaBuffer;
    return host && new Uint8Array(host);
  }

  /** Registers a module so it is unloaded when its kernel is garbage-collected. */
  trackModule(owner: object, module: unknown): void {
    this.handles.register(owner, { generation: this.generation, destroy: () => this.driver.api.cuModuleUnload(module) });
  }

  // ------------------------------------------------------------------ streams and events

  defaultStream(): CudaStream {
    return this.nullStream;
  }

  createStream(): CudaStream {
    return this.createHandle("cuStreamCreate", "cuStreamDestroy_v2", (h) => new CudaStream(this, h, this.generation));
  }

  createEvent(): CudaEvent {
    return this.createHandle("cuEventCreate", "cuEventDestroy_v2", (h) => new CudaEvent(this, h, this.generation));
  }

  /** A driver object made by `create` (flags 0), wrapped; destroyed by `destroy` when the wrapper is garbage-collected. */
  private createHandle<T extends object>(create: "cuStreamCreate" | "cuEventCreate", destroy: "cuStreamDestroy_v2" | "cuEventDestroy_v2", wrap: (handle: unknown) => T): T {
    this.activate();
    const out: unknown[] = [null];
    this.driver.check(create, this.driver.api[create](out, 0));
    const wrapper = wrap(out[0]);
    this.handles.register(wrapper, { generation: this.generation, destroy: () => this.driver.api[destroy](out[0]) });
    return wrapper;
  }

  /** The stream, checked to be ours and from the current context; activates the context. */
  useStream(stream: BackendStream, call: string): CudaStream {
    if (!(stream instanceof CudaStream) || stream.owner !== this) throw new LaunchError(`${call}: the stream belongs to another device or backend`);
    if (stream.generation !== undefined && stream.generation !== this.generation) {
      throw new CudaError(call, CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "stream belongs to a context that was reset");
    }
    this.activate();
    return stream;
  }

  useEvent(event: BackendEvent, call: string): CudaEvent {
    if (!(event instanceof CudaEvent) || event.owner !== this) throw new LaunchError(`${call}: the event belongs to another device or backend`);
    if (event.generation !== this.generation) {
      throw new CudaError(call, CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "event belongs to a context that was reset");
    }
    this.activate();
    return event;
  }

  // graphs by stream capture (graph.ts)
  beginCapture(stream: BackendStream): void {
    beginCapture(this, stream);
  }
  endCapture(stream: BackendStream): BackendGraph {
    return endCapture(this, stream);
  }
  abandonCapture(stream: BackendStream): void {
    abandonCapture(this, stream);
  }

  // ------------------------------------------------------------------ device-wide

  synchronize(): void {
    this.activate();
    this.call("cuCtxSynchronize");
    raiseKernelErrors();
  }

  memoryInfo(): { free: number; total: number } {
    this.activate();
    const free = [0], total = [0];
    this.call("cuMemGetInfo_v2", free, total);
    return { free: Number(free[0]), total: Number(total[0]) };
  }

  /**
   * Destroys the context (after a sticky kernel fault) and starts a fresh one in place.
   * All device memory, streams and events made before are gone and refuse use.
   */
  resetContext(): void {
    this.activate();
    // as cudaDeviceReset does: reset, then retain afresh (no release in between: after a reset the
    // driver does not honour it, and the old handle is gone)
    this.call("cuDevicePrimaryCtxReset_v2", this.ordinal);
    this.generation++;
    this.peers.clear();
    try {
      this.context = this.retain();
    } catch (e) {
      if (!(e instanceof CudaError) || !STICKY_ERRORS.has(e.code)) throw e;
      this.unusable = e; // said on every later call
      throw e;
    }
    this.activate();
  }

  /**
   * `cuda.close()`: waits for the device's queued work, then releases and resets its primary context
   * (as Numba's close does), so that the next use of the device starts a fresh one, also after a
   * kernel fault. What the queued work reports (a fault among it) is not thrown: closing is how a
   * process recovers from it. Everything made before refuses use afterwards; the back end too.
   * Throws a CudaError if the driver refuses the release or the reset (after trying both).
   */
  close(): void {
    if (this.closed) return;
    const { api } = this.driver;
    if (!this.unusable && api.cuCtxSetCurrent(this.context) === CUDA_SUCCESS) api.cuCtxSynchronize();
    this.closed = true;
    this.generation++;
    this.peers.clear();
    currentContext = undefined;
    const release = api.cuDevicePrimaryCtxRelease_v2(this.ordinal);
    const reset = api.cuDevicePrimaryCtxReset_v2(this.ordinal);
    this.driver.check("cuDevicePrimaryCtxRelease_v2", release, `closing ${this.device.name} (device ${this.device.id})`);
    this.driver.check("cuDevicePrimaryCtxReset_v2", reset, `closing ${this.device.name} (device ${this.device.id})`);
  }
}

function asBytes(v: ArrayBufferView): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}
