// The webgpu back end (the Backend interface of src/abi/backend.ts) over a channel to its device
// (channel.ts): buffers are ids the device's thread maps to GPUBuffers; copies to the device and
// launches are queued and return at once; calls that read the device wait (copyToHost, synchronize)
// or have async twins that do not block. WebGPU has one queue: every stream is ordered with every
// other, and events time the queue with timestamp queries where the adapter has them.

import type {
  ArrayArg, Backend, BackendEvent, BackendStream, CompiledKernel, DeviceBuffer, DeviceInfo, IpcMemory,
} from "../../../abi/backend.js";
import { kernelInfo } from "../../../abi/kernel-info.js";
import { raiseKernelErrors } from "../../../abi/kernel-errors.js";
import type { FunctionIR } from "../../../compiler/ir.js";
import { CompileError, LaunchError } from "../../../errors.js";
import { explainWgslErrors, type WgslMessage } from "../wgsl/diagnose.js";
import type { WgslKernel, WgslLaunchShape, WgslTarget } from "../wgsl/layout.js";
import { wgslTargetOf, type AdapterFacts } from "./adapter.js";
import type { DeviceChannel, Ticket } from "./channel.js";
import { settleStatuses, WebGpuKernel, type KernelHost } from "./kernel.js";

/** The WGSL target: a kernel's typed IR for an adapter (and a launch's arguments that share buffers). */
export type WgslCompile = (ir: FunctionIR, target: WgslTarget, shape?: WgslLaunchShape) => WgslKernel;

interface WebGpuBuffer extends DeviceBuffer {
  readonly kind: "webgpu";
  readonly id: number;
}

/** host memory a "pinned" array lives in: WebGPU has no page-locked memory, so plain memory */
interface HostBuffer extends DeviceBuffer {
  readonly kind: "webgpu-host";
  readonly bytes: Uint8Array;
}

/** buffer ids, unique in the process: a back end made after cuda.close() shares the device with the closed one's leftovers */
let bufferIds = 0;

const isDeviceBuffer = (b: DeviceBuffer): b is WebGpuBuffer => b.kind === "webgpu";

/** a view's bytes, copied into memory of their own (the job takes them to the device's thread) */
const copyOf = (v: ArrayBufferView) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();

export class WebGpuBackend implements Backend, KernelHost {
  readonly name = "webgpu";
  readonly canBlock: boolean;
  readonly where: string;
  private allocated = 0;
  private readonly stream: BackendStream;
  /** the device buffers this back end made and has not freed (its kernels' status words among them) */
  private readonly live = new Set<number>();
  /** backstop for buffers garbage-collected without free() */
  private readonly collect = new FinalizationRegistry<number>((id) => this.release(id));

  constructor(
    readonly channel: DeviceChannel,
    readonly facts: AdapterFacts,
    readonly device: DeviceInfo,
    private readonly emit: WgslCompile,
  ) {
    this.canBlock = channel.canBlock;
    this.where = `the webgpu target (${facts.name})`;
    this.stream = new WebGpuStream(this, true);
  }

  // ------------------------------------------------------------------ memory

  allocId(bytes: number): number {
    const id = ++bufferIds;
    this.live.add(id);
    this.channel.post({ op: "alloc", id, bytes });
    return id;
  }

  private release(id: number): void {
    if (this.live.delete(id)) this.channel.post({ op: "free", id });
  }

  alloc(bytes: number): DeviceBuffer {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`bad allocation size ${bytes}`);
    const most = this.facts.limits.maxBufferSize ?? Infinity;
    if (bytes > most) throw new RangeError(`${this.where} cannot allocate ${bytes} bytes: its largest buffer is ${most} bytes (maxBufferSize)`);
    const buf: WebGpuBuffer = { kind: "webgpu", id: this.allocId(bytes), byteLength: bytes, freed: false };
    this.allocated += bytes;
    this.collect.register(buf, buf.id, buf);
    return buf;
  }

  allocHost(bytes: number, mapped: boolean): DeviceBuffer {
    if (mapped) throw new Error(`${this.where} cannot map host memory into kernels (mappedArray): use a device array (cuda.toDevice)`);
    const host: HostBuffer = { kind: "webgpu-host", bytes: new Uint8Array(bytes), byteLength: bytes, freed: false };
    return host;
  }

  free(buf: DeviceBuffer): void {
    if (buf.freed) return;
    buf.freed = true;
    if (!isDeviceBuffer(buf)) return;
    this.collect.unregister(buf);
    this.allocated -= buf.byteLength;
    this.release(buf.id);
  }

  hostBytes(buf: DeviceBuffer): Uint8Array | undefined {
    return buf.kind === "webgpu-host" ? (buf as HostBuffer).bytes : undefined;
  }

  bufferId(arg: ArrayArg): number {
    return this.deviceBuffer(arg.buffer, `array '${arg.name}'`).id;
  }

  private deviceBuffer(buf: DeviceBuffer, what: string): WebGpuBuffer {
    if (!isDeviceBuffer(buf)) throw new TypeError(`${what} is not in ${this.where}'s memory (a buffer of kind '${buf.kind}')`);
    if (buf.freed) throw new Error(`${what} was freed`);
    return buf;
  }

  private range(buf: DeviceBuffer, offset: number, bytes: number, what: string): WebGpuBuffer {
    const b = this.deviceBuffer(buf, what);
    if (offset < 0 || offset + bytes > b.byteLength) throw new RangeError(`${what}: bytes ${offset}…${offset + bytes} are outside the buffer's ${b.byteLength}`);
    return b;
  }

  copyToDevice(buf: DeviceBuffer, byteOffset: number, src: ArrayBufferView): void {
    const b = this.range(buf, byteOffset, src.byteLength, "copy to the device");
    if (src.byteLength > 0) this.channel.post({ op: "write", id: b.id, offset: byteOffset, data: copyOf(src) });
  }

  /** the read of `dst.byteLength` bytes from `buf` at `byteOffset`, after the kernel errors are raised (a copy to the host synchronises) */
  private readTicket(dst: ArrayBufferView, b: WebGpuBuffer, byteOffset: number): Ticket | undefined {
    this.raiseErrors();
    return dst.byteLength === 0 ? undefined : this.channel.request({ op: "read", id: b.id, offset: byteOffset, bytes: dst.byteLength });
  }

  copyToHost(dst: ArrayBufferView, buf: DeviceBuffer, byteOffset: number): void {
    this.mustBlock("copyToHost", "copyToHostAsync");
    const t = this.readTicket(dst, this.range(buf, byteOffset, dst.byteLength, "copy to the host"), byteOffset);
    if (t) new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(this.failing(() => t.wait()) as Uint8Array);
  }

  async copyToHostAsync(dst: ArrayBufferView, buf: DeviceBuffer, byteOffset: number): Promise<void> {
    const b = this.range(buf, byteOffset, dst.byteLength, "copy to the host");
    await settleStatuses();
    const t = this.readTicket(dst, b, byteOffset);
    if (t) new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set((await this.failingAsync(t.promise())) as Uint8Array);
  }

  /** runs `f`; a failure of the device is a LaunchError naming the target */
  private failing<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      throw this.deviceFailure(e);
    }
  }

  private failingAsync<T>(p: Promise<T>): Promise<T> {
    return p.catch((e: unknown) => Promise.reject(this.deviceFailure(e)));
  }

  private deviceFailure(e: unknown): LaunchError {
    return e instanceof LaunchError ? e : new LaunchError(`${this.where}: ${(e as Error).message}`);
  }

  /** a failure of queued work, then what the kernels threw */
  private raiseErrors(): void {
    this.failing(() => this.channel.check());
    raiseKernelErrors();
  }

  copyDeviceToDevice(dst: DeviceBuffer, dstOffset: number, src: DeviceBuffer, srcOffset: number, bytes: number): void {
    const d = this.range(dst, dstOffset, bytes, "device-to-device copy (destination)");
    const s = this.range(src, srcOffset, bytes, "device-to-device copy (source)");
    if (bytes > 0) this.channel.post({ op: "copy", dst: d.id, dstOffset, src: s.id, srcOffset, bytes });
  }

  copyFromPeer(): void {
    throw new Error(`${this.where} has one device: there is no peer to copy from`);
  }

  ipcExport(): IpcMemory {
    throw new Error(`${this.where} cannot share device memory with another process (IPC)`);
  }

  ipcOpen(): DeviceBuffer {
    throw new Error(`${this.where} cannot open another process's device memory (IPC)`);
  }

  // ------------------------------------------------------------------ kernels

  compile(ir: FunctionIR): CompiledKernel {
    const target = wgslTargetOf(this.facts);
    const compiler = {
      compile: (shape: WgslLaunchShape) => this.emit(ir, target, shape),
      explain: (wgsl: WgslKernel, errors: readonly WgslMessage[]) => explainWgslErrors(ir, wgsl, errors),
    };
    try {
      return new WebGpuKernel(this, kernelInfo(ir), this.emit(ir, target), ir.source, compiler);
    } catch (e) {
      // more arrays than the adapter binds may still run where a launch's arguments share buffers (record fields)
      const unbounded = e instanceof CompileError ? this.tryEmit(ir, { ...target, maxStorageBuffers: Infinity }) : undefined;
      if (!unbounded || unbounded.arrays.length < target.maxStorageBuffers) throw e;
      return new WebGpuKernel(this, kernelInfo(ir), unbounded, ir.source, compiler, e as CompileError);
    }
  }

  /** the kernel for `target`, or undefined where the target cannot compile it */
  private tryEmit(ir: FunctionIR, target: WgslTarget): WgslKernel | undefined {
    try {
      return this.emit(ir, target);
    } catch {
      return undefined;
    }
  }

  // ------------------------------------------------------------------ the queue

  defaultStream(): BackendStream {
    return this.stream;
  }

  createStream(): BackendStream {
    return new WebGpuStream(this, false);
  }

  createEvent(): BackendEvent {
    return new WebGpuEvent(this);
  }

  /** A blocking call where this thread cannot wait is a LaunchError naming its async twin. */
  mustBlock(call: string, twin: string): void {
    if (!this.canBlock) throw new LaunchError(`${call} would block, which ${this.where} cannot do on this thread (a browser's main thread): use ${twin}`);
  }

  synchronize(): void {
    this.mustBlock("synchronize", "synchronizeAsync");
    this.failing(() => this.channel.request({ op: "done" }).wait());
    this.raiseErrors();
  }

  async synchronizeAsync(): Promise<void> {
    await this.failingAsync(this.channel.request({ op: "done" }).promise());
    await settleStatuses();
    this.raiseErrors();
  }

  /** `cuda.close()`: frees every buffer this back end made (the device, shared by the next back end, stays open) */
  close(): void {
    for (const id of [...this.live]) this.release(id);
    this.allocated = 0;
  }

  memoryInfo(): { free: number; total: number } {
    const total = this.device.totalMemory;
    return { free: Math.max(0, total - this.allocated), total };
  }
}

/** A stream: the one queue, which runs everything in order. */
class WebGpuStream implements BackendStream {
  constructor(
    private readonly owner: WebGpuBackend,
    readonly isDefault: boolean,
  ) {}
  synchronize(): void {
    this.owner.synchronize();
  }
  done(): Promise<void> {
    return this.owner.synchronizeAsync();
  }
}

/** An event: the time the queue reached it (the GPU's timestamp, else the host's when it was seen done). */
class WebGpuEvent implements BackendEvent {
  private mark: Ticket | undefined;

  constructor(private readonly owner: WebGpuBackend) {}

  record(): void {
    this.mark = this.owner.channel.request({ op: "mark" });
  }

  synchronize(): void {
    this.owner.mustBlock("event.synchronize", "cuda.synchronizeAsync()");
    this.time("synchronized");
  }

  query(): boolean {
    return this.mark?.settled() ?? true;
  }

  elapsedSince(start: BackendEvent): number {
    if (!(start instanceof WebGpuEvent)) throw new TypeError("elapsed time between events of different back ends");
    this.owner.mustBlock("event.elapsedTime", "cuda.synchronizeAsync() first");
    return this.time("end") - start.time("start");
  }

  private time(which: string): number {
    if (!this.mark) throw new Error(`the ${which} event was never recorded; call event.record() first`);
    return this.mark.wait() as number;
  }
}
