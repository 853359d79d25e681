// Is there a usable GPU, and what is it? Used for target selection and
// `npx numbats -s`. Every way of not having one becomes a reason a user can act on.

import { CudaError } from "../../../errors.js";
import type { DeviceInfo } from "../../../abi/backend.js";
import { CUDA_SUCCESS, type CudaDriver, cudaDriver, type FailedCall, openDriver } from "./driver.js";
import { MIN_DRIVER_VERSION, formatDriverVersion } from "./ptxversion.js";
import { NVRTC_LIBRARY, nvrtc } from "../nvrtc/nvrtc.js";
import { NVJITLINK_LIBRARY, nvJitLink } from "../nvrtc/nvjitlink.js";

/**
 * Whether `auto` may choose CUDA here: wherever this module is, which is Node.js (the browser build puts
 * src/browser/no-cuda.ts in its place, so that a browser's `auto` neither probes CUDA nor names it).
 */
export const cudaInAuto = (): boolean => true;

export type CudaProbe =
  | { readonly ok: true; readonly driverVersion: number; readonly devices: DeviceInfo[]; /** the library loaded */ readonly library: string }
  | { readonly ok: false; readonly reason: string; /** the call that failed, with its CUDA error */ readonly failed?: FailedCall };

export type { FailedCall } from "./driver.js";

export type DriverInit =
  | { readonly ok: true; readonly driverVersion: number }
  | { readonly ok: false; readonly reason: string; readonly call: "cuInit" | "cuDriverGetVersion"; readonly code: number };

/** CUDA_ERROR_INSUFFICIENT_DRIVER: what a driver older than we need amounts to */
const CUDA_ERROR_INSUFFICIENT_DRIVER = 35;

/** What a failing cuInit means for a user. */
const INIT_REASONS: Readonly<Record<number, string>> = {
  34: "is the CUDA toolkit's stub library, not a real driver: remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH, or install the NVIDIA driver",
  100: "reports no CUDA-capable device (is the GPU visible to this machine or container? check nvidia-smi and CUDA_VISIBLE_DEVICES)",
  803: "does not match the loaded NVIDIA kernel module (driver updated without a reboot, or a container's forward-compatibility libcuda): reboot or reinstall the driver",
  804: "is a forward-compatibility driver that this GPU does not support: use the system's own NVIDIA driver",
};

/** cuInit + driver-version check, with a human reason on failure. */
export function initDriver(drv: CudaDriver): DriverInit {
  const rc = drv.api.cuInit(0);
  if (rc !== CUDA_SUCCESS) {
    const why = INIT_REASONS[rc] ?? `failed to initialise: ${drv.errorText(rc)}`;
    return { ok: false, reason: `the CUDA driver at ${drv.path} ${why} (cuInit: ${drv.errorName(rc)}, ${rc})`, call: "cuInit", code: rc };
  }
  const version = [0];
  const vrc = drv.api.cuDriverGetVersion(version);
  if (vrc !== CUDA_SUCCESS) return { ok: false, reason: `cuDriverGetVersion failed: ${drv.errorName(vrc)} (${vrc})`, call: "cuDriverGetVersion", code: vrc };
  const v = version[0]!;
  if (v < MIN_DRIVER_VERSION) {
    return {
      ok: false,
      reason: `the NVIDIA driver supports CUDA ${formatDriverVersion(v)}; numbats needs a driver for CUDA ${formatDriverVersion(MIN_DRIVER_VERSION)} or newer (R525+): update the driver`,
      call: "cuDriverGetVersion",
      code: CUDA_ERROR_INSUFFICIENT_DRIVER,
    };
  }
  return { ok: true, driverVersion: v };
}

/** CUdevice_attribute values (cuda.h) */
const ATTR = {
  maxThreadsPerBlock: 1, maxBlockDimX: 2, maxBlockDimY: 3, maxBlockDimZ: 4,
  maxGridDimX: 5, maxGridDimY: 6, maxGridDimZ: 7, maxSharedPerBlock: 8,
  warpSize: 10, multiprocessors: 16, ccMajor: 75, ccMinor: 76, maxSharedPerBlockOptin: 97,
} as const;

/** Everything DeviceInfo needs, read from an initialised driver. */
export function deviceInfo(drv: CudaDriver, ordinal: number): DeviceInfo {
  const out = [0];
  drv.check("cuDeviceGet", drv.api.cuDeviceGet(out, ordinal));
  const dev = out[0]!;
  const attr = (a: number): number => {
    drv.check("cuDeviceGetAttribute", drv.api.cuDeviceGetAttribute(out, a, dev), `attribute ${a}`);
    return out[0]!;
  };
  const name = Buffer.alloc(256);
  drv.check("cuDeviceGetName", drv.api.cuDeviceGetName(name, name.length, dev));
  const mem = [0];
  drv.check("cuDeviceTotalMem_v2", drv.api.cuDeviceTotalMem_v2(mem, dev));
  const maxShared = attr(ATTR.maxSharedPerBlock);
  return {
    id: ordinal,
    name: cString(name),
    computeCapability: [attr(ATTR.ccMajor), attr(ATTR.ccMinor)],
    multiprocessors: attr(ATTR.multiprocessors),
    totalMemory: Number(mem[0]),
    limits: {
      maxThreadsPerBlock: attr(ATTR.maxThreadsPerBlock),
      maxBlockDim: [attr(ATTR.maxBlockDimX), attr(ATTR.maxBlockDimY), attr(ATTR.maxBlockDimZ)],
      maxGridDim: [attr(ATTR.maxGridDimX), attr(ATTR.maxGridDimY), attr(ATTR.maxGridDimZ)],
      maxSharedPerBlock: maxShared,
      // older drivers may not know attribute 97; then there is no opt-in beyond the default
      maxSharedPerBlockOptin: Math.max(maxShared, optionalAttr(drv, ATTR.maxSharedPerBlockOptin, dev)),
      warpSize: attr(ATTR.warpSize),
    },
  };
}

const cString = (b: Buffer): string => b.toString("utf8", 0, b.includes(0) ? b.indexOf(0) : b.length);

function optionalAttr(drv: CudaDriver, attr: number, dev: number): number {
  const out = [0];
  return drv.api.cuDeviceGetAttribute(out, attr, dev) === CUDA_SUCCESS ? out[0]! : 0;
}

function probeDriver(drv: CudaDriver): CudaProbe {
  const init = initDriver(drv);
  if (!init.ok) return { ok: false, reason: init.reason, failed: { call: init.call, code: init.code, errorName: drv.errorName(init.code) } };
  try {
    const count = [0];
    drv.check("cuDeviceGetCount", drv.api.cuDeviceGetCount(count));
    if (count[0] === 0) {
      return { ok: false, reason: `the CUDA driver at ${drv.path} reports no CUDA-capable device`, failed: { call: "cuDeviceGetCount", code: 100, errorName: "CUDA_ERROR_NO_DEVICE" } };
    }
    const devices = Array.from({ length: count[0]! }, (_, i) => deviceInfo(drv, i));
    return { ok: true, driverVersion: init.driverVersion, devices, library: drv.path };
  } catch (e) {
    const failed = e instanceof CudaError ? { call: e.call, code: e.code, errorName: e.errorName } : undefined;
    return { ok: false, reason: `querying the GPU failed: ${(e as Error).message}`, failed };
  }
}

let cachedProbe: CudaProbe | undefined;

/**
 * Whether the GPU can be used, and the devices. Without an argument: the
 * system driver (or NUMBATS_CUDA_LIBRARY), probed once per process; with
 * `library`: that library, probed afresh.
 */
export function probeCuda(library?: string): CudaProbe {
  if (library !== undefined) {
    const load = openDriver([library]);
    return load.ok ? probeDriver(load.driver) : load;
  }
  if (!cachedProbe) {
    const load = cudaDriver();
    cachedProbe = load.ok ? probeDriver(load.driver) : load;
  }
  return cachedProbe;
}

/**
 * NVRTC and nvJitLink as `numbats -s` shows them: each one's version and where it was found, or why
 * not (only kernels that link CUDA C++ or LTO-IR need them).
 */
export function deviceCompilers(): readonly (readonly [string, string])[] {
  const row = (title: string, open: () => { readonly path: string; readonly version: readonly number[] }, wheel: string): [string, string] => {
    try {
      const lib = open();
      return [title, `${lib.version.join(".")}: ${lib.path}`];
    } catch (e) {
      return [title, `not usable (needed only to link CUDA C++ or LTO-IR: pip install ${wheel}): ${(e as Error).message}`];
    }
  };
  return [row("NVRTC", nvrtc, NVRTC_LIBRARY.wheel), row("nvJitLink", nvJitLink, NVJITLINK_LIBRARY.wheel)];
}
