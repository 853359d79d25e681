/// <reference types="@webgpu/types" />
// Opening a WebGPU device as numbats uses it, from a GPU (Node's `webgpu` package's `create()`, or a
// browser's navigator.gpu), and what the adapter is, as plain data the host side turns into a
// DeviceInfo and a WgslTarget.

import type { DeviceInfo } from "../../../abi/backend.js";
import type { WgslTarget } from "../wgsl/layout.js";
import { MAP_READ, USAGE } from "./executor.js";

/** The optional features numbats asks for where the adapter has them. */
const WANTED_FEATURES = ["subgroups", "shader-f16", "timestamp-query"] as const;

/** The adapter as the host side needs it (cloneable: it crosses from the device's thread). */
export interface AdapterFacts {
  /** adapter.info's description, else its vendor and architecture */
  readonly name: string;
  /** every numeric limit of the adapter (the device is requested with them all) */
  readonly limits: Readonly<Record<string, number>>;
  /** the features the device has of WANTED_FEATURES */
  readonly features: readonly string[];
  /** subgroupMinSize and subgroupMaxSize (adapter.info), where the adapter says */
  readonly subgroupSizes?: readonly [number, number];
  readonly fallback: boolean;
  /** with `shader-f16`: the device's f16 arithmetic was seen not to round to half precision (f16ArithmeticRounds) */
  readonly unroundedF16?: boolean;
  /** the device's f32 `fma` was seen to round once (fmaIsFused) */
  readonly fusedFma?: boolean;
}

/** The adapter's numeric limits as a plain object (GPUSupportedLimits' fields are getters on its prototype). */
function limitsOf(limits: GPUSupportedLimits): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key in limits) {
    const v = (limits as unknown as Record<string, unknown>)[key];
    if (typeof v === "number") out[key] = v;
  }
  return out;
}

/**
 * Requests an adapter of `gpu` and a device with its maximum limits and the features numbats uses; throws
 * saying why not (`help`: where the environment finds adapters, for the error without one).
 */
export async function openDevice(gpu: GPU, help = ""): Promise<{ device: GPUDevice; facts: AdapterFacts }> {
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error(`WebGPU found no adapter${help && `: ${help}`}`);
  const features = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  const limits = limitsOf(adapter.limits);
  const device = await adapter.requestDevice({ requiredFeatures: features, requiredLimits: limits });
  const info = adapter.info as GPUAdapterInfo & { subgroupMinSize?: number; subgroupMaxSize?: number; isFallbackAdapter?: boolean };
  const name = info.description || [info.vendor, info.architecture, info.device].filter(Boolean).join(" ") || "WebGPU adapter";
  const sizes = info.subgroupMinSize !== undefined && info.subgroupMaxSize !== undefined ? { subgroupSizes: [info.subgroupMinSize, info.subgroupMaxSize] as const } : {};
  const unrounded = features.includes("shader-f16") ? { unroundedF16: !(await runProbe(device, F16_ROUNDS)) } : {};
  const fused = (await runProbe(device, FMA_FUSED)) ? { fusedFma: true } : {};
  return { device, facts: { name, limits, features, ...sizes, fallback: info.isFallbackAdapter ?? false, ...unrounded, ...fused } };
}

/** A one-thread kernel that tells how the device computes: it reads io[0], writes io[1], and `holds(io[1])` says whether the property holds. */
interface Probe {
  readonly code: string;
  readonly input: number;
  holds(result: number): boolean;
}

/**
 * Whether the device rounds f16 arithmetic to half precision: 1 + 2^-12, each operand an f16 read from
 * a buffer (so no compiler folds it), is 1 in f16 but not where f16 values are kept in f32 (lavapipe's
 * llvmpipe does). Watching the behaviour rather than matching adapter names also catches other drivers.
 */
const F16_ROUNDS: Probe = {
  code: `enable f16;
@group(0) @binding(0) var<storage, read_write> io: array<f32, 2>;
@compute @workgroup_size(1) fn main() { io[1] = f32((f16(io[0]) + f16(1.0)) - f16(1.0)); }`,
  input: 2 ** -12,
  holds: (r) => r === 0,
};

/**
 * Whether the device's f32 `fma` rounds once (WGSL lets it round twice): with a = 1 + 2^-12, a·a =
 * 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 in f32, so fma(a, a, -(1 + 2^-11)) is 2^-24 fused and 0 not.
 * Where it is fused, kernels use it (an exact emulation otherwise).
 */
const FMA_FUSED: Probe = {
  code: `@group(0) @binding(0) var<storage, read_write> io: array<f32, 2>;
@compute @workgroup_size(1) fn main() { let a = 1.0 + io[0]; io[1] = fma(a, a, -(1.0 + 2.0 * io[0])); }`,
  input: 2 ** -12,
  holds: (r) => r === 2 ** -24,
};

/** Runs `probe` on the device. */
async function runProbe(device: GPUDevice, probe: Probe): Promise<boolean> {
  const module = device.createShaderModule({ code: probe.code });
  const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
  const io = device.createBuffer({ size: 8, usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST });
  const read = device.createBuffer({ size: 8, usage: USAGE.MAP_READ | USAGE.COPY_DST });
  device.queue.writeBuffer(io, 0, new Float32Array([probe.input, -1]));
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: io } }] }));
  pass.dispatchWorkgroups(1);
  pass.end();
  encoder.copyBufferToBuffer(io, 0, read, 0, 8);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(MAP_READ);
  const result = new Float32Array(read.getMappedRange().slice(0))[1];
  read.destroy();
  io.destroy();
  return probe.holds(result!);
}

/** The subgroup size kernels can rely on: the adapter's one size with the `subgroups` feature (min = max). */
export function fixedSubgroupSize(facts: AdapterFacts): number | undefined {
  const s = facts.subgroupSizes;
  return facts.features.includes("subgroups") && s && s[0] === s[1] ? s[0] : undefined;
}

const limit = (facts: AdapterFacts, name: string): number => facts.limits[name] ?? 0;

/** The adapter as numbats' device `id`: its launch limits from the adapter's; `totalMemory` where the environment knows it. */
export function deviceInfoOf(facts: AdapterFacts, id: number, totalMemory: number): DeviceInfo {
  const perDimension = limit(facts, "maxComputeWorkgroupsPerDimension");
  const shared = limit(facts, "maxComputeWorkgroupStorageSize");
  return {
    id,
    name: facts.name,
    // WebGPU has no compute capability
    computeCapability: [0, 0],
    // nor says how many compute units it has
    multiprocessors: 1,
    totalMemory,
    limits: {
      maxThreadsPerBlock: limit(facts, "maxComputeInvocationsPerWorkgroup"),
      maxBlockDim: [limit(facts, "maxComputeWorkgroupSizeX"), limit(facts, "maxComputeWorkgroupSizeY"), limit(facts, "maxComputeWorkgroupSizeZ")],
      maxGridDim: [perDimension, perDimension, perDimension],
      maxSharedPerBlock: shared,
      maxSharedPerBlockOptin: shared,
      // without one fixed subgroup size, the largest the adapter may use
      warpSize: fixedSubgroupSize(facts) ?? facts.subgroupSizes?.[1] ?? 32,
    },
  };
}

/** What the WGSL target needs of the adapter. */
export function wgslTargetOf(facts: AdapterFacts): WgslTarget {
  const subgroupSize = fixedSubgroupSize(facts);
  return {
    ...(subgroupSize !== undefined ? { subgroupSize } : {}),
    shaderF16: facts.features.includes("shader-f16"),
    ...(facts.unroundedF16 ? { unroundedF16: true } : {}),
    ...(facts.fusedFma ? { fusedFma: true } : {}),
    maxWorkgroupStorageBytes: limit(facts, "maxComputeWorkgroupStorageSize"),
    maxStorageBuffers: limit(facts, "maxStorageBuffersPerShaderStage"),
    adapterName: `WebGPU (${facts.name})`,
  };
}
