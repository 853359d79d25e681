// WebGPU as target selection sees it (src/backends/index.ts lists it): kernels compiled to WGSL
// (wgsl/) and run through the `webgpu` package (Dawn) in a worker thread (runtime/). In Node.js `auto`
// never chooses it (a GPU with CUDA is the GPU target; without one, the simulator is exact and needs
// nothing installed): NUMBATS_TARGET=webgpu asks for it.

import type { BackendDescriptor } from "../../abi/backend.js";
import { emitWgsl } from "./wgsl/emit.js";
import { deviceInfoOf } from "./runtime/adapter.js";
import { WebGpuBackend } from "./runtime/backend.js";
import { openNodeDevice } from "./runtime/node-channel.js";

/** what a machine without a WebGPU adapter needs, after the probe's own reason */
const ADAPTER_HELP =
  "WebGPU needs the `webgpu` package (npm install webgpu) and an adapter: a GPU with a Vulkan, Metal or D3D12 driver, " +
  "or a CPU Vulkan driver (Mesa's lavapipe, SwiftShader) named by VK_ICD_FILENAMES";

export const WEBGPU_BACKEND: BackendDescriptor<"webgpu"> = {
  name: "webgpu",
  // between the GPU and the simulator, where `auto` may choose it
  autoOrder: 0.5,
  device: "WebGPU adapter",
  onGpu: true,
  inAuto: () => false,
  probe() {
    const opened = openNodeDevice();
    if (!opened.ok) return { ok: false, reason: `${opened.reason}. ${ADAPTER_HELP}` };
    return { ok: true, devices: [deviceInfoOf(opened.facts, 0, opened.totalMemory)] };
  },
  create(id) {
    const opened = openNodeDevice();
    if (!opened.ok) throw new Error(opened.reason);
    if (id !== 0) throw new RangeError(WEBGPU_BACKEND.noDevice(id, 1));
    return new WebGpuBackend(opened.channel, opened.facts, deviceInfoOf(opened.facts, id, opened.totalMemory), emitWgsl);
  },
  chosen: (backend, _devices, requestedBy) => `${requestedBy}: WebGPU on ${backend.device.name}`,
  noDevice: (id) => `no WebGPU device ${id}: the webgpu target has one device (id 0), its adapter`,
  unavailable: (requestedBy, probe) => new Error(`${requestedBy} but WebGPU cannot run kernels here: ${probe.reason}`),
};
