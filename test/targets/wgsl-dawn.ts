// For the WGSL target's tests: the two CPU adapters the tests compile for, and Dawn's verdict on WGSL
// modules, asked in a child process (dawn.node can crash a process) on the Vulkan driver that
// VK_ICD_FILENAMES names (its directory holds both drivers' ICD files: lvp_icd.json, swiftshader_icd.json).

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { WgslKernel, WgslTarget } from "../../src/backends/webgpu/wgsl/index.js";

export const ADAPTERS: Readonly<Record<"lavapipe" | "swiftshader", WgslTarget>> = {
  lavapipe: { subgroupSize: 8, shaderF16: true, maxWorkgroupStorageBytes: 32768, maxStorageBuffers: 16, adapterName: "WebGPU (llvmpipe)" },
  swiftshader: { subgroupSize: 4, shaderF16: false, maxWorkgroupStorageBytes: 32768, maxStorageBuffers: 12, adapterName: "WebGPU (SwiftShader)" },
};

const ICD: Readonly<Record<keyof typeof ADAPTERS, string>> = { lavapipe: "lvp_icd.json", swiftshader: "swiftshader_icd.json" };

/** the child's environment for an adapter, or why there is none */
export function dawnSetup(adapter: string): NodeJS.ProcessEnv | string {
  const icd = process.env.VK_ICD_FILENAMES;
  if (!icd || !process.env.LD_LIBRARY_PATH) return "no CPU WebGPU adapter: VK_ICD_FILENAMES and LD_LIBRARY_PATH are unset (source the env-lavapipe.sh that get-webgpu-cpu.sh writes)";
  const file = join(dirname(icd), ICD[adapter as keyof typeof ADAPTERS]);
  if (!existsSync(file)) return `no ${adapter} ICD file at ${file}`;
  return { ...process.env, VK_ICD_FILENAMES: file };
}

// the child: one device with the adapter's features and limits; per module, the compiler's messages and
// a compute pipeline with the runtime's explicit layout (binding 0 uniform, 1 status, then the arrays)
const CHILD = `
import { create, globals } from "webgpu";
import { readFileSync } from "node:fs";
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
  for (const m of info.messages) if (m.type === "error") errors.push(m.lineNum + ":" + m.linePos + " " + m.message);
  const scoped = await device.popErrorScope();
  if (scoped && !errors.length) errors.push(scoped.message);
  if (!errors.length) {
    const entries = [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } },
      ...k.arrays.map((a) => ({ binding: a.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: a.readOnly ? "read-only-storage" : "storage" } }))];
    const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries })] });
    const constants = { BLOCK_X: 4, BLOCK_Y: 2, BLOCK_Z: 1, ...(k.dynamicShared ? { DYNAMIC_SHARED_WORDS: 64 } : {}) };
    device.pushErrorScope("validation");
    device.createComputePipeline({ layout, compute: { module, entryPoint: k.entryPoint, constants } });
    const e = await device.popErrorScope();
    if (e) errors.push("pipeline: " + e.message);
  }
  out.push(errors);
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
`;

/** Dawn's errors for each kernel's module and pipeline (none: accepted) */
export function validateWgsl(env: NodeJS.ProcessEnv, kernels: readonly WgslKernel[]): string[][] {
  const input = JSON.stringify(kernels.map((k) => ({ code: k.code, entryPoint: k.entryPoint, arrays: k.arrays, dynamicShared: k.dynamicShared })));
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", CHILD], { input, env, encoding: "utf8", maxBuffer: 64 << 20, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`the Dawn child failed (status ${r.status}, signal ${r.signal}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout) as string[][];
}
