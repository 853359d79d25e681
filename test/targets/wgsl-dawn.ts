// For the WGSL target's tests: the two CPU adapters the tests compile for, and Dawn's verdict on WGSL
// modules, asked in a child process (dawn.node can crash a process) on each CPU adapter
// (test/helpers/webgpu.ts finds them).

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WgslKernel, WgslMessage, WgslTarget } from "../../src/backends/webgpu/wgsl/index.js";
import { cpuAdapters } from "../helpers/webgpu.js";

export const ADAPTERS: Readonly<Record<"lavapipe" | "swiftshader", WgslTarget>> = {
  lavapipe: { subgroupSize: 8, shaderF16: true, unroundedF16: true, maxWorkgroupStorageBytes: 32768, maxStorageBuffers: 16, adapterName: "WebGPU (llvmpipe)" },
  swiftshader: { subgroupSize: 4, shaderF16: false, maxWorkgroupStorageBytes: 32768, maxStorageBuffers: 12, adapterName: "WebGPU (SwiftShader)" },
};

/** the child's environment for an adapter, or why there is none */
export function dawnSetup(adapter: string): NodeJS.ProcessEnv | string {
  const found = cpuAdapters();
  if ("reason" in found) return found.reason;
  const a = found.adapters.find((x) => x.name === adapter);
  return a ? { ...process.env, ...a.env } : `no ${adapter} adapter among the CPU adapters found (${found.adapters.map((x) => x.name).join(", ")})`;
}

// the child: one device with the adapter's features and limits; per module, the compiler's messages and
// a compute pipeline with the runtime's explicit layout (binding 0 uniform, 1 status, then the arrays)
const CHILD = `
import { create, globals } from "webgpu";
import { readFileSync, writeFileSync } from "node:fs";
Object.assign(globalThis, globals);
const gpu = create([]);
globalThis.__gpu = gpu; // Dawn's instance must outlive the device
const kernels = JSON.parse(readFileSync(0, "utf8"));
const adapter = await gpu.requestAdapter();
const features = [...adapter.features].filter((f) => f === "subgroups" || f === "shader-f16");
const device = await adapter.requestDevice({ requiredFeatures: features, requiredLimits: {
  maxComputeInvocationsPerWorkgroup: adapter.limits.maxComputeInvocationsPerWorkgroup,
  maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
  maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
  maxComputeWorkgroupSizeX: adapter.limits.maxComputeWorkgroupSizeX } });
const out = [];
for (const k of kernels) {
  const errors = [];
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code: k.code });
  const info = await module.getCompilationInfo();
  for (const m of info.messages) if (m.type === "error") errors.push({ type: m.type, lineNum: m.lineNum, linePos: m.linePos, message: m.message });
  const scoped = await device.popErrorScope();
  if (scoped && !errors.length) errors.push({ type: "error", lineNum: 0, linePos: 0, message: scoped.message });
  if (!errors.length) {
    const entries = [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } },
      ...k.arrays.map((a) => ({ binding: a.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: a.readOnly ? "read-only-storage" : "storage" } }))];
    const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries })] });
    const constants = { BLOCK_X: 4, BLOCK_Y: 2, BLOCK_Z: 1, ...(k.dynamicShared ? { DYNAMIC_SHARED_BYTES: 256 } : {}) };
    device.pushErrorScope("validation");
    device.createComputePipeline({ layout, compute: { module, entryPoint: k.entryPoint, constants } });
    const e = await device.popErrorScope();
    if (e) errors.push({ type: "error", lineNum: 0, linePos: 0, message: "pipeline: " + e.message });
  }
  out.push(errors);
}
writeFileSync(process.env.NB_OUT, JSON.stringify(out));
process.exit(0);
`;

/** Dawn's errors for each kernel's module and pipeline (none: accepted; a pipeline's error has line 0) */
export function validateWgsl(env: NodeJS.ProcessEnv, kernels: readonly WgslKernel[]): WgslMessage[][] {
  const input = JSON.stringify(kernels.map((k) => ({ code: k.code, entryPoint: k.entryPoint, arrays: k.arrays, dynamicShared: k.dynamicShared })));
  return JSON.parse(inChild(CHILD, input, env)) as WgslMessage[][];
}

/** One launch of a WGSL kernel: the module, its bound buffers' bytes and the launch's shape. */
export interface WgslJob {
  readonly code: string;
  readonly entryPoint: string;
  readonly params: Uint8Array;
  /** per array binding, its buffer's bytes (a multiple of 4) */
  readonly arrays: readonly { readonly binding: number; readonly readOnly: boolean; readonly data: Uint8Array }[];
  readonly statusWords: number;
  readonly grid: readonly number[];
  readonly block: readonly number[];
  readonly dynamicSharedBytes?: number;
}

/** What a launch left: each array binding's bytes and the status buffer, or the error that stopped it. */
export type WgslRun = { readonly arrays: Uint8Array[]; readonly status: Uint32Array } | { readonly error: string };

const RUN_CHILD = `
import { create, globals } from "webgpu";
import { readFileSync, writeFileSync } from "node:fs";
Object.assign(globalThis, globals);
const gpu = create(["enable-dawn-features=disable_workgroup_init"]);
globalThis.__gpu = gpu;
const jobs = JSON.parse(readFileSync(0, "utf8"));
const adapter = await gpu.requestAdapter();
const features = [...adapter.features].filter((f) => f === "subgroups" || f === "shader-f16");
const L = adapter.limits;
const device = await adapter.requestDevice({ requiredFeatures: features, requiredLimits: {
  maxComputeInvocationsPerWorkgroup: L.maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupStorageSize: L.maxComputeWorkgroupStorageSize,
  maxStorageBuffersPerShaderStage: L.maxStorageBuffersPerShaderStage, maxComputeWorkgroupSizeX: L.maxComputeWorkgroupSizeX,
  maxComputeWorkgroupSizeY: L.maxComputeWorkgroupSizeY, maxComputeWorkgroupSizeZ: L.maxComputeWorkgroupSizeZ } });
const bytes = (b64) => new Uint8Array(Buffer.from(b64, "base64"));
const S = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
function buffer(data, usage) {
  const b = device.createBuffer({ size: Math.max(16, data.byteLength), usage });
  device.queue.writeBuffer(b, 0, data);
  return b;
}
async function read(b, size) {
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(b, 0, staging, 0, size);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = Buffer.from(staging.getMappedRange().slice(0)).toString("base64");
  staging.destroy();
  return out;
}
const out = [];
for (const job of jobs) {
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code: job.code });
  const entries = [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } },
    { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } },
    ...job.arrays.map((a) => ({ binding: a.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: a.readOnly ? "read-only-storage" : "storage" } }))];
  const bgl = device.createBindGroupLayout({ entries });
  const constants = { BLOCK_X: job.block[0], BLOCK_Y: job.block[1], BLOCK_Z: job.block[2], ...(job.dynamicSharedBytes !== undefined ? { DYNAMIC_SHARED_BYTES: job.dynamicSharedBytes } : {}) };
  const pipeline = device.createComputePipeline({ layout: device.createPipelineLayout({ bindGroupLayouts: [bgl] }), compute: { module, entryPoint: job.entryPoint, constants } });
  const params = buffer(bytes(job.params), GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  const status = buffer(new Uint8Array(job.statusWords * 4), S);
  const arrays = job.arrays.map((a) => buffer(bytes(a.data), S));
  const group = device.createBindGroup({ layout: bgl, entries: [{ binding: 0, resource: { buffer: params } }, { binding: 1, resource: { buffer: status } },
    ...job.arrays.map((a, k) => ({ binding: a.binding, resource: { buffer: arrays[k] } }))] });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(job.grid[0], job.grid[1], job.grid[2]);
  pass.end();
  device.queue.submit([enc.finish()]);
  const e = await device.popErrorScope();
  if (e) { out.push({ error: e.message }); continue; }
  out.push({ arrays: await Promise.all(job.arrays.map((a, k) => read(arrays[k], Math.max(16, bytes(a.data).byteLength)))), status: await read(status, job.statusWords * 4) });
  for (const b of [params, status, ...arrays]) b.destroy();
}
writeFileSync(process.env.NB_OUT, JSON.stringify(out));
process.exit(0);
`;

const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

/** Runs the launches in order in one child process on the adapter `env` names. */
export function runWgsl(env: NodeJS.ProcessEnv, jobs: readonly WgslJob[]): WgslRun[] {
  const input = JSON.stringify(jobs.map((j) => ({ ...j, params: b64(j.params), arrays: j.arrays.map((a) => ({ ...a, data: b64(a.data) })) })));
  return (JSON.parse(inChild(RUN_CHILD, input, env)) as ({ arrays: string[]; status: string } | { error: string })[]).map((o) => {
    if ("error" in o) return o;
    const status = new Uint8Array(Buffer.from(o.status, "base64")); // a copy: aligned for the words
    return { arrays: o.arrays.map((a) => new Uint8Array(Buffer.from(a, "base64"))), status: new Uint32Array(status.buffer) };
  });
}

/** runs `script` in a child Node.js with `input` on its stdin; returns what it wrote to $NB_OUT (a large stdout may be cut at its exit) */
function inChild(script: string, input: string, env: NodeJS.ProcessEnv): string {
  const dir = mkdtempSync(join(tmpdir(), "nb-wgsl-"));
  try {
    const out = join(dir, "out.json");
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { input, env: { ...env, NB_OUT: out }, encoding: "utf8", timeout: 600_000 });
    if (r.status !== 0) throw new Error(`the Dawn child failed (status ${r.status}, signal ${r.signal}): ${r.stderr.slice(-2000)}`);
    return readFileSync(out, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
