// The simulator as target selection sees it (src/backends/index.ts lists it): always available, the
// fallback of `auto`, and the back end every launch runs on while the sanitizer is on.

import type { BackendDescriptor, DeviceInfo } from "../../abi/backend.js";
import { createSimBackend, simArtifact, simDevice, SIM_DEVICE } from "./runtime/sim-backend.js";
import { simChecks } from "./runtime/sanitize.js";
import { describeSimWorkers, startSimWorkers } from "./runtime/sim-workers.js";

// the sanitizer runs kernels on the simulator: its settings are the simulator's
export { parseSchedule, parseTools } from "./runtime/sanitize.js";

/** The compute capability of the simulated device (PTX printed without a GPU is for it). */
export const SIMULATED_COMPUTE_CAPABILITY = SIM_DEVICE.computeCapability;

/** How many devices the simulator has: NUMBATS_SIM_DEVICES (default 1). */
export function simDeviceCount(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.NUMBATS_SIM_DEVICES?.trim();
  if (!raw) return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1024) {
    throw new RangeError(`NUMBATS_SIM_DEVICES=${env.NUMBATS_SIM_DEVICES} is not a device count: use a whole number from 1 to 1024`);
  }
  return n;
}

export const SIM_BACKEND: BackendDescriptor<"sim"> = {
  name: "sim",
  autoOrder: 1,
  device: "CPU simulator",
  onGpu: false,
  probe: () => ({ ok: true, devices: Array.from({ length: simDeviceCount() }, (_, i): DeviceInfo => simDevice(i)) }),
  create: createSimBackend,
  aheadOfTime: (ir) => [simArtifact(ir)],
  chosen: (_backend, _devices, requestedBy) => `${requestedBy} asks for the simulator`,
  noDevice: (id, n) => `no simulated device ${id}: the simulator has ${n} (ids 0…${n - 1}); NUMBATS_SIM_DEVICES=N gives N`,
  unavailable: (_by, probe) => new Error(probe.reason),
  forced: {
    by: () => (simChecks().tools ? simChecks().by : undefined),
    reason: (by) => `${by} runs kernels on the CPU simulator with the sanitizer's checks`,
  },
  workers: describeSimWorkers,
  startWorkers: startSimWorkers,
};
