// The GPU as target selection sees it (src/backends/index.ts lists it): available where the CUDA driver
// finds a device, first in `auto`'s order. In the browser bundle the driver's modules it imports are
// src/browser/no-cuda.ts, which says why there is no GPU there and keeps `auto` from trying it.

import type { BackendDescriptor, DeviceInfo } from "../../abi/backend.js";
import { CudaError } from "../../errors.js";
import { createCudaBackend } from "./driver/backend.js";
import { ptxArtifact } from "./ptx/artifact.js";
import { cudaInAuto, probeCuda, type CudaProbe } from "./driver/detect.js";
export { deviceCompilers } from "./driver/detect.js";
import { formatDriverVersion, ptxVersionForDriver } from "./driver/ptxversion.js";
import type { PtxTargetOptions } from "./ptx/module.js";

export const CUDA_BACKEND: BackendDescriptor<"cuda"> = {
  name: "cuda",
  autoOrder: 0,
  device: "GPU",
  onGpu: true,
  inAuto: cudaInAuto,
  probe: () => probeCuda(),
  create: createCudaBackend,
  aheadOfTime: (ir, computeCapabilities) => computeCapabilities.map((cc) => ptxArtifact(ir, cc)),
  chosen: (backend, devices) => `found ${devices.length} CUDA device${devices.length === 1 ? "" : "s"}, using ${backend.device.name}`,
  noDevice: (id, n) => `no CUDA device ${id}: found ${n} (ids 0…${n - 1})`,
  unavailable(requestedBy, probe: CudaProbe & { ok: false }) {
    // no driver library at all: the failing "call" is loading it
    const f = probe.failed ?? { call: "dlopen(libcuda)", code: -1, errorName: "driver library not found" };
    return new CudaError(f.call, f.code, f.errorName, probe.reason, "", `${requestedBy} but no usable GPU: ${probe.reason}`);
  },
};

/** The GPU driver as `numbats -s` shows it: its library, version and the PTX ISA its JIT takes, and its devices; or why there is none. */
export function gpuDriver(): { ok: true; library: string; version: string; devices: readonly DeviceInfo[] } | { ok: false; reason: string } {
  const probe = probeCuda();
  if (!probe.ok) return { ok: false, reason: probe.reason };
  const version = `CUDA ${formatDriverVersion(probe.driverVersion)} (${probe.driverVersion}), JIT accepts PTX ISA ${ptxVersionForDriver(probe.driverVersion) ?? "none"}`;
  return { ok: true, library: probe.library, version, devices: probe.devices };
}

/** PTX options for GPU 0 (its compute capability, the ISA its driver takes); undefined without a GPU. */
export function gpuPtxTarget(): PtxTargetOptions | undefined {
  const probe = probeCuda();
  return probe.ok ? { computeCapability: probe.devices[0]!.computeCapability, maxPtxVersion: ptxVersionForDriver(probe.driverVersion) } : undefined;
}
