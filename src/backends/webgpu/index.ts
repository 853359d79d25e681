// WebGPU as target selection sees it (src/backends/index.ts lists it): kernels compiled to WGSL
// (wgsl/) and run on a device that, in Node.js, the `webgpu` package (Dawn) opens in a worker thread
// (runtime/node-channel.ts) and, in a browser or Deno, navigator.gpu in the calling thread (browser.ts).
// In Node.js `auto` never chooses it (a GPU with CUDA is the GPU target; without one, the simulator is
// exact and needs nothing installed): NUMBATS_TARGET=webgpu asks for it. In a browser `auto` takes it
// where an adapter is found.

import type { BackendDescriptor } from "../../abi/backend.js";
import { emitWgsl } from "./wgsl/emit.js";
import { deviceInfoOf } from "./runtime/adapter.js";
import { WebGpuBackend } from "./runtime/backend.js";
import { openNodeDevice, type NodeDevice } from "./runtime/node-channel.js";
import { browserDevice, openBrowserDevice, usesNavigatorGpu } from "./browser.js";

/** the environment's device: navigator.gpu's where there is one, else Dawn's in a worker thread */
const opened = (): NodeDevice => (usesNavigatorGpu() ? browserDevice() : openNodeDevice());

export const WEBGPU_BACKEND: BackendDescriptor<"webgpu"> = {
  name: "webgpu",
  // between the GPU and the simulator, where `auto` may choose it
  autoOrder: 0.5,
  device: "WebGPU adapter",
  onGpu: true,
  inAuto: usesNavigatorGpu,
  async prepare() {
    if (usesNavigatorGpu()) await openBrowserDevice();
  },
  probe() {
    const d = opened();
    if (!d.ok) return { ok: false, reason: d.reason };
    return { ok: true, devices: [deviceInfoOf(d.facts, 0, d.totalMemory)] };
  },
  create(id) {
    const d = opened();
    if (!d.ok) throw new Error(d.reason);
    if (id !== 0) throw new RangeError(WEBGPU_BACKEND.noDevice(id, 1));
    return new WebGpuBackend(d.channel, d.facts, deviceInfoOf(d.facts, id, d.totalMemory), emitWgsl);
  },
  chosen: (backend, _devices, requestedBy) => `${requestedBy}: WebGPU on ${backend.device.name}`,
  noDevice: (id) => `no WebGPU device ${id}: the webgpu target has one device (id 0), its adapter`,
  unavailable: (requestedBy, probe) => new Error(`${requestedBy} but WebGPU cannot run kernels here: ${probe.reason}`),
};
