// The hand-written side of `bench/webgpu.ts`: a Dawn device of our own in the main thread (the
// `webgpu` package), the WGSL kernels beside this file, and what it takes to run them: buffers,
// one pipeline per kernel, a dispatch per launch.

/// <reference types="@webgpu/types" />
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

/** Our device, and what the benchmark needs to know of its adapter. */
export interface HandDevice {
  readonly device: GPUDevice;
  /** "llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)" */
  readonly adapterName: string;
  readonly subgroupSize: number;
}

// The object `create()` returns must outlive every use of the device: Dawn's instance is freed with
// it, and the next event callback then crashes the process (a V8 GC away from the last await).
let heldGpu: GPU | undefined;

/**
 * A device on the adapter the environment names (VK_ICD_FILENAMES on a CPU-only machine), with the
 * subgroups feature, or why there is none. `toggles` are Dawn's (`enable-dawn-features=…`): the same
 * as the numbats runtime's, so both sides run under the same rules.
 */
export async function openHandDevice(toggles: readonly string[]): Promise<HandDevice | { reason: string }> {
  let create: (options: string[]) => GPU, globals: object;
  try {
    ({ create, globals } = await import("webgpu"));
  } catch (e) {
    return { reason: `the \`webgpu\` package (Dawn for Node) does not load: ${(e as Error).message.split("\n")[0]}` };
  }
  Object.assign(globalThis, globals);
  heldGpu = create([...toggles]);
  const adapter = await heldGpu.requestAdapter();
  if (!adapter) return { reason: "Dawn found no WebGPU adapter (on a machine without a GPU, source a CPU adapter's environment file first)" };
  const subgroupSize = adapter.info.subgroupMaxSize;
  if (!adapter.features.has("subgroups") || !subgroupSize) return { reason: `the adapter (${adapter.info.description}) lacks the subgroups feature the softmax needs` };
  const device = await adapter.requestDevice({
    requiredFeatures: ["subgroups"],
    requiredLimits: { maxComputeInvocationsPerWorkgroup: 256, maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize },
  });
  return { device, adapterName: adapter.info.description || adapter.info.vendor, subgroupSize };
}

/** One argument of a hand-written kernel, in binding order. */
export type HandArg =
  /** a storage buffer holding the array's bytes (8-bit arrays padded to whole 32-bit words) */
  | { readonly array: ArrayBufferView }
  /** a uniform block of 32-bit unsigned words */
  | { readonly uniform: readonly number[] };

/** A hand-written kernel bound to its arguments, ready to dispatch. */
export class HandKernel {
  private readonly pipeline: GPUComputePipeline;
  private readonly bindGroup: GPUBindGroup;
  private readonly buffers: GPUBuffer[];

  /** `file`: a WGSL file beside this one, with its entry point `main`; rejects with WGSL's or WebGPU's first error */
  static async create(hd: HandDevice, file: string, args: readonly HandArg[], groups: readonly [number, number]): Promise<HandKernel> {
    hd.device.pushErrorScope("validation");
    const kernel = new HandKernel(hd, file, args, groups);
    const error = await hd.device.popErrorScope();
    if (error) {
      kernel.destroy();
      throw new Error(`${file}: ${error.message}`);
    }
    return kernel;
  }

  private constructor(private readonly hd: HandDevice, file: string, args: readonly HandArg[], private readonly groups: readonly [number, number]) {
    const { device } = hd;
    const module = device.createShaderModule({ code: readFileSync(join(HERE, file), "utf8"), label: file });
    this.pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" }, label: file });
    this.buffers = args.map((arg) => ("uniform" in arg ? this.uniformBuffer(arg.uniform) : this.storageBuffer(arg.array)));
    this.bindGroup = device.createBindGroup({
      layout: this.pipeline.getBindGroupLayout(0),
      entries: this.buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
  }

  private uniformBuffer(words: readonly number[]): GPUBuffer {
    const data = new Uint32Array(Math.ceil(words.length / 4) * 4);
    data.set(words);
    const buffer = this.hd.device.createBuffer({ size: data.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.hd.device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  }

  private storageBuffer(view: ArrayBufferView): GPUBuffer {
    const size = Math.ceil(view.byteLength / 4) * 4;
    const buffer = this.hd.device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const bytes = new Uint8Array(size);
    bytes.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    this.hd.device.queue.writeBuffer(buffer, 0, bytes);
    return buffer;
  }

  /** Overwrites argument `index`'s buffer with `view`'s bytes (the same length). */
  write(index: number, view: ArrayBufferView): void {
    this.hd.device.queue.writeBuffer(this.buffers[index]!, 0, view.buffer, view.byteOffset, view.byteLength);
  }

  /** One launch: a command buffer with one compute pass of one dispatch, submitted. */
  dispatch(): void {
    const encoder = this.hd.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bindGroup);
    pass.dispatchWorkgroups(this.groups[0], this.groups[1]);
    pass.end();
    this.hd.device.queue.submit([encoder.finish()]);
  }

  /** Resolves once every submitted launch has finished. */
  finished(): Promise<undefined> {
    return this.hd.device.queue.onSubmittedWorkDone();
  }

  /** Argument `index`'s bytes, after the launches submitted so far. */
  async read(index: number): Promise<ArrayBuffer> {
    const { device } = this.hd;
    const source = this.buffers[index]!;
    const staging = device.createBuffer({ size: source.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(source, 0, staging, 0, source.size);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const bytes = staging.getMappedRange().slice(0);
    staging.destroy();
    return bytes;
  }

  destroy(): void {
    for (const b of this.buffers) b.destroy();
  }
}
