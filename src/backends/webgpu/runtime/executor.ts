/// <reference types="@webgpu/types" />
// The WebGPU device's side of the back end, over one GPUDevice and nothing else of its environment: it
// runs jobs (plain, cloneable messages: buffers by id, writes, copies, dispatches, reads, marks) in the
// order given. In Node.js a worker thread drives it (webgpu-worker.ts); in a browser the page's own
// thread can call `run` directly.
//
// WebGPU's rules it hides from its callers:
// - writes and copies take offsets and sizes that are multiples of 4: other ranges are read, patched
//   and written back (a copy within one buffer too, which WebGPU forbids);
// - a read maps a staging buffer;
// - writeBuffer from a view over a SharedArrayBuffer never completes in Dawn: such data is copied;
// - each dispatch writes its parameter block into its module's uniform buffer and is submitted at once,
//   so one buffer per module serves every launch (the queue runs writes and submits in order).

import type { WgslMessage } from "../wgsl/diagnose.js";

/** GPUBufferUsage, GPUMapMode and GPUShaderStage bits (constants, so no global of the environment is needed) */
export const USAGE = { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, UNIFORM: 64, STORAGE: 128, QUERY_RESOLVE: 512 } as const;
export const MAP_READ = 1;
const COMPUTE_STAGE = 4;

/** How a module's binding is declared: the parameter block, or a storage buffer (read-only or not). */
export type BindingKind = "uniform" | "storage" | "read-only-storage";

/** A module's bind group layout, @group(0): [binding, kind] per binding */
export type BindingLayout = readonly (readonly [binding: number, kind: BindingKind])[];

export type GpuJob =
  | { readonly op: "alloc"; readonly id: number; readonly bytes: number }
  | { readonly op: "free"; readonly id: number }
  | { readonly op: "write"; readonly id: number; readonly offset: number; readonly data: Uint8Array }
  | { readonly op: "copy"; readonly dst: number; readonly dstOffset: number; readonly src: number; readonly srcOffset: number; readonly bytes: number }
  /** a shader module with its bind group layout, @group(0); replies once compiled with the compiler's errors (none: it is loaded) */
  | { readonly op: "module"; readonly id: number; readonly code: string; readonly layout: BindingLayout }
  /** creates a module's pipeline for one set of overrides ahead of its dispatches, so that a failure is reported to the launch */
  | { readonly op: "pipeline"; readonly module: number; readonly entryPoint: string; readonly overrides: Readonly<Record<string, number>> }
  | {
      readonly op: "dispatch";
      readonly module: number;
      readonly entryPoint: string;
      readonly overrides: Readonly<Record<string, number>>;
      /** the uniform parameter block (binding 0) */
      readonly params: Uint8Array;
      /** every storage binding: [binding, buffer id] */
      readonly bindings: readonly (readonly [binding: number, buffer: number])[];
      readonly grid: readonly [number, number, number];
    }
  | { readonly op: "read"; readonly id: number; readonly offset: number; readonly bytes: number }
  /** replies with the time, in ms, at which the work queued before it finished (the GPU's clock where it has timestamp queries) */
  | { readonly op: "mark" }
  /** replies once the work queued before it finished */
  | { readonly op: "done" };

/** What `run` resolves to: a read's bytes, a mark's time, a module's compile errors, else nothing. */
export type GpuJobResult = Uint8Array | number | readonly WgslMessage[] | undefined;

interface Module {
  readonly shader: GPUShaderModule;
  readonly layout: GPUPipelineLayout;
  readonly pipelines: Map<string, GPUComputePipeline>;
  /** the parameter block's buffer, sized by the first dispatch */
  params?: GPUBuffer;
}

const down4 = (n: number) => n & ~3;
const up4 = (n: number) => (n + 3) & ~3;

/** the pipeline cache's key for one set of overrides (BLOCK_X/Y/Z, DYNAMIC_SHARED_BYTES) */
const overrideKey = (entryPoint: string, overrides: Readonly<Record<string, number>>) =>
  `${entryPoint}|${Object.keys(overrides).sort().map((k) => `${k}=${overrides[k]}`).join(",")}`;

/** `data` as WebGPU may take it: over a plain ArrayBuffer (Dawn stalls on a SharedArrayBuffer's). */
function plainBytes(data: Uint8Array): Uint8Array<ArrayBuffer> {
  return data.buffer instanceof ArrayBuffer ? (data as Uint8Array<ArrayBuffer>) : data.slice();
}

/** Runs jobs on one GPUDevice, in the order given. */
export class GpuExecutor {
  private readonly buffers = new Map<number, GPUBuffer>();
  private readonly modules = new Map<number, Module>();
  /** modules the WGSL compiler rejected: their kernels report it, and their dispatches do nothing */
  private readonly rejected = new Set<number>();
  /** bind groups by module, pipeline and buffers (cleared when a buffer is freed) */
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  /** the jobs run so far: each starts when the one before has finished */
  private tail: Promise<unknown> = Promise.resolve();
  /** the first error the device reported on its own (a validation error of a queued command), until taken */
  private deviceError: string | undefined;
  private readonly timer: { readonly querySet: GPUQuerySet; readonly resolve: GPUBuffer; readonly readback: GPUBuffer } | undefined;

  constructor(readonly device: GPUDevice) {
    device.addEventListener("uncapturederror", (e) => {
      this.deviceError ??= (e as GPUUncapturedErrorEvent).error.message;
    });
    void device.lost.then((info) => {
      this.deviceError ??= `the WebGPU device was lost (${info.reason}): ${info.message}`;
    });
    this.timer = device.features.has("timestamp-query")
      ? {
          querySet: device.createQuerySet({ type: "timestamp", count: 1 }),
          resolve: device.createBuffer({ size: 8, usage: USAGE.QUERY_RESOLVE | USAGE.COPY_SRC }),
          readback: device.createBuffer({ size: 8, usage: USAGE.MAP_READ | USAGE.COPY_DST }),
        }
      : undefined;
  }

  /** Runs `job` after every job given before it. */
  run(job: GpuJob): Promise<GpuJobResult> {
    const result = this.tail.then(() => this.runNow(job));
    this.tail = result.catch(() => {});
    return result;
  }

  /** The first error the device reported about queued work since the last call, if any. */
  takeDeviceError(): string | undefined {
    const e = this.deviceError;
    this.deviceError = undefined;
    return e;
  }

  private runNow(job: GpuJob): GpuJobResult | Promise<GpuJobResult> {
    switch (job.op) {
      case "alloc":
        return void this.buffers.set(job.id, this.device.createBuffer({ size: Math.max(4, up4(job.bytes)), usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST }));
      case "free":
        return this.free(job.id);
      case "write":
        return this.write(job.id, job.offset, job.data);
      case "copy":
        return this.copy(job);
      case "module":
        return this.module(job.id, job.code, job.layout);
      case "pipeline":
        if (this.rejected.has(job.module)) return undefined;
        return this.pipelineAsync(this.moduleOf(job.module), job.entryPoint, job.overrides).then(() => undefined);
      case "dispatch":
        return this.rejected.has(job.module) ? undefined : this.dispatch(job);
      case "read":
        return this.read(job.id, job.offset, job.bytes);
      case "mark":
        return this.mark();
      case "done":
        return this.device.queue.onSubmittedWorkDone().then(() => undefined);
    }
  }

  private buffer(id: number): GPUBuffer {
    const b = this.buffers.get(id);
    if (!b) throw new Error(`WebGPU buffer ${id} does not exist (freed?)`);
    return b;
  }

  private moduleOf(id: number): Module {
    const m = this.modules.get(id);
    if (!m) throw new Error(`WebGPU shader module ${id} does not exist`);
    return m;
  }

  private free(id: number): undefined {
    this.buffers.get(id)?.destroy();
    this.buffers.delete(id);
    this.bindGroups.clear();
    return undefined;
  }

  private submit(encode: (encoder: GPUCommandEncoder) => void): void {
    const encoder = this.device.createCommandEncoder();
    encode(encoder);
    this.device.queue.submit([encoder.finish()]);
  }

  private write(id: number, offset: number, data: Uint8Array): undefined | Promise<undefined> {
    if (data.byteLength === 0) return undefined;
    const buf = this.buffer(id);
    const end = offset + data.byteLength;
    // the whole words inside the range are written as they are; the words the range's ends cut, patched
    const first = up4(offset), last = down4(end);
    if (first < last) this.device.queue.writeBuffer(buf, first, plainBytes(data.subarray(first - offset, last - offset)));
    const edges = first < last ? [[offset, first], [last, end]] : [[offset, end]];
    const patches = edges.filter(([from, to]) => from! < to!).map(([from, to]) => this.patch(buf, id, from!, data.subarray(from! - offset, to! - offset)));
    return patches.length === 0 ? undefined : Promise.all(patches).then(() => undefined);
  }

  /** writes `bytes` at `offset`, within the aligned words around them, read first */
  private async patch(buf: GPUBuffer, id: number, offset: number, bytes: Uint8Array): Promise<void> {
    const lo = down4(offset), hi = up4(offset + bytes.byteLength);
    const words = await this.read(id, lo, hi - lo);
    words.set(bytes, offset - lo);
    this.device.queue.writeBuffer(buf, lo, words);
  }

  private copy(job: GpuJob & { op: "copy" }): undefined | Promise<undefined> {
    const { dst, dstOffset, src, srcOffset, bytes } = job;
    if (bytes === 0) return undefined;
    const aligned = dstOffset % 4 === 0 && srcOffset % 4 === 0 && bytes % 4 === 0;
    if (aligned && dst !== src) {
      const from = this.buffer(src), to = this.buffer(dst);
      return void this.submit((e) => e.copyBufferToBuffer(from, srcOffset, to, dstOffset, bytes));
    }
    return this.read(src, srcOffset, bytes).then((data) => this.write(dst, dstOffset, data));
  }

  private async module(id: number, code: string, layout: BindingLayout): Promise<readonly WgslMessage[]> {
    // the compiler's errors are taken from the compilation info, not left to the device's error event
    this.device.pushErrorScope("validation");
    const shader = this.device.createShaderModule({ code });
    const info = await shader.getCompilationInfo();
    await this.device.popErrorScope();
    // plain objects: they cross to the caller's thread
    const errors = info.messages.filter((m) => m.type === "error").map(({ type, lineNum, linePos, message }) => ({ type, lineNum, linePos, message }));
    if (errors.length > 0) {
      this.rejected.add(id);
      return errors;
    }
    const entries = layout.map(([binding, type]): GPUBindGroupLayoutEntry => ({ binding, visibility: COMPUTE_STAGE, buffer: { type } }));
    this.device.pushErrorScope("validation");
    const bindGroupLayout = this.device.createBindGroupLayout({ entries });
    const pipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [bindGroupLayout] });
    const invalid = await this.device.popErrorScope();
    if (invalid) throw new Error(`the bind group layout is invalid: ${invalid.message}`);
    this.modules.set(id, { shader, layout: pipelineLayout, pipelines: new Map() });
    return [];
  }

  private pipelineDescriptor(m: Module, entryPoint: string, constants: Readonly<Record<string, number>>): GPUComputePipelineDescriptor {
    return { layout: m.layout, compute: { module: m.shader, entryPoint, constants: { ...constants } } };
  }

  private async pipelineAsync(m: Module, entryPoint: string, overrides: Readonly<Record<string, number>>): Promise<GPUComputePipeline> {
    const key = overrideKey(entryPoint, overrides);
    let p = m.pipelines.get(key);
    if (!p) {
      p = await this.device.createComputePipelineAsync(this.pipelineDescriptor(m, entryPoint, overrides));
      m.pipelines.set(key, p);
    }
    return p;
  }

  private pipeline(m: Module, entryPoint: string, overrides: Readonly<Record<string, number>>): [GPUComputePipeline, string] {
    const key = overrideKey(entryPoint, overrides);
    let p = m.pipelines.get(key);
    if (!p) {
      p = this.device.createComputePipeline(this.pipelineDescriptor(m, entryPoint, overrides));
      m.pipelines.set(key, p);
    }
    return [p, key];
  }

  private dispatch(job: GpuJob & { op: "dispatch" }): undefined {
    const m = this.moduleOf(job.module);
    const [pipeline, key] = this.pipeline(m, job.entryPoint, job.overrides);
    const size = Math.max(16, (job.params.byteLength + 15) & ~15);
    if (!m.params || m.params.size < size) {
      m.params?.destroy();
      m.params = this.device.createBuffer({ size, usage: USAGE.UNIFORM | USAGE.COPY_DST });
      this.bindGroups.clear();
    }
    if (job.params.byteLength > 0) this.device.queue.writeBuffer(m.params, 0, plainBytes(job.params));
    const groupKey = `${job.module}|${key}|${job.bindings.map(([b, id]) => `${b}:${id}`).join(",")}`;
    let group = this.bindGroups.get(groupKey);
    if (!group) {
      const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: m.params } }];
      for (const [binding, id] of job.bindings) entries.push({ binding, resource: { buffer: this.buffer(id) } });
      group = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
      this.bindGroups.set(groupKey, group);
    }
    const [x, y, z] = job.grid;
    this.submit((e) => {
      const pass = e.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(x, y, z);
      pass.end();
    });
    return undefined;
  }

  private async read(id: number, offset: number, bytes: number): Promise<Uint8Array<ArrayBuffer>> {
    if (bytes === 0) return new Uint8Array(0);
    const buf = this.buffer(id);
    const lo = down4(offset), hi = up4(offset + bytes);
    const staging = this.device.createBuffer({ size: hi - lo, usage: USAGE.MAP_READ | USAGE.COPY_DST });
    try {
      this.submit((e) => e.copyBufferToBuffer(buf, lo, staging, 0, hi - lo));
      await staging.mapAsync(MAP_READ);
      return new Uint8Array(staging.getMappedRange()).slice(offset - lo, offset - lo + bytes);
    } finally {
      staging.destroy();
    }
  }

  private async mark(): Promise<number> {
    const t = this.timer;
    if (!t) {
      await this.device.queue.onSubmittedWorkDone();
      return performance.now();
    }
    this.submit((e) => {
      e.beginComputePass({ timestampWrites: { querySet: t.querySet, beginningOfPassWriteIndex: 0 } }).end();
      e.resolveQuerySet(t.querySet, 0, 1, t.resolve, 0);
      e.copyBufferToBuffer(t.resolve, 0, t.readback, 0, 8);
    });
    await t.readback.mapAsync(MAP_READ);
    const ns = new BigUint64Array(t.readback.getMappedRange())[0]!;
    t.readback.unmap();
    return Number(ns) / 1e6;
  }
}
