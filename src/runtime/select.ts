// Which back end runs kernels (docs/runtime.md): NUMBATS_TARGET=cuda|sim|auto
// (default auto), NUMBATS_ENABLE_CUDASIM=1 as in Numba. auto takes the GPU
// when the driver and a device are found, else the simulator, saying why in
// one line on stderr. Selection (with the list of back ends, src/backends/index.ts)
// is the one place outside src/backends/ that tells the back ends apart: the host
// API asks here what differs between them.

import { CudaError } from "../errors.js";
import type { Backend, DeviceInfo } from "../abi/backend.js";
import { probeCuda, type CudaProbe } from "../backends/cuda/driver/detect.js";
import { formatDriverVersion, ptxVersionForDriver } from "../backends/cuda/driver/ptxversion.js";
import { TARGET_NAMES, type PtxTargetOptions, type TargetName } from "../backends/index.js";
import { SIM_DEVICE, createSimBackend, simDevice } from "../backends/sim/runtime/sim-backend.js";
import { createCudaBackend } from "../backends/cuda/driver/backend.js";
import { simChecks } from "../backends/sim/runtime/sanitize.js";
// the sanitizer runs kernels on the simulator: its settings are the simulator's
export { parseSchedule, parseTools } from "../backends/sim/runtime/sanitize.js";
import { describeSimWorkers } from "../backends/sim/runtime/sim-workers.js";
// the browser build exports it: there a program awaits its simulator's worker threads before launching
export { startSimWorkers as startSimulatorWorkers } from "../backends/sim/runtime/sim-workers.js";
import { dropKernelErrors } from "../abi/kernel-errors.js";

type CreateCuda = (deviceId: number) => Backend;

export type TargetRequest = "auto" | TargetName;

const isTargetRequest = (raw: string): raw is TargetRequest => raw === "auto" || (TARGET_NAMES as readonly string[]).includes(raw);

export interface TargetInfo {
  readonly target: TargetName;
  /** what the environment asked for, and which variable said so */
  readonly requested: TargetRequest;
  readonly requestedBy: string;
  /** why this target was chosen (or why the GPU is not used) */
  readonly reason: string;
  readonly device: DeviceInfo;
  /** the GPUs found, or the simulated devices (NUMBATS_SIM_DEVICES, default 1) */
  readonly devices: readonly DeviceInfo[];
  /** CUDA driver version as the driver reports it (12040 = 12.4), when a driver was found */
  readonly driverVersion?: number;
}

export interface Selection {
  readonly backend: Backend;
  readonly info: TargetInfo;
}

/** The target the environment asks for. */
export function requestedTarget(env: NodeJS.ProcessEnv = process.env): { request: TargetRequest; by: string } {
  const raw = env.NUMBATS_TARGET?.trim().toLowerCase();
  if (raw) {
    if (isTargetRequest(raw)) return { request: raw, by: `NUMBATS_TARGET=${raw}` };
    throw new Error(`NUMBATS_TARGET=${env.NUMBATS_TARGET} is not a target: use ${TARGET_NAMES.join(", ")} or auto`);
  }
  const cudasim = env.NUMBATS_ENABLE_CUDASIM?.trim();
  if (cudasim && cudasim !== "0") return { request: "sim", by: `NUMBATS_ENABLE_CUDASIM=${cudasim}` };
  return { request: "auto", by: "default (NUMBATS_TARGET unset)" };
}

/** What selection needs from the outside world; tests substitute fakes. */
export interface SelectDeps {
  probe(): CudaProbe;
  createCuda?: CreateCuda;
  /** the back end of simulated device `id` (0 when omitted) */
  createSim(id?: number): Backend;
  warn(line: string): void;
}

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

/** The simulated devices: device 0's back end made now, the others on selectDevice. */
function simSelection(deps: SelectDeps, fields: Omit<TargetInfo, "target" | "device" | "devices">): Selection {
  const backend = deps.createSim(0);
  const devices = Array.from({ length: simDeviceCount() }, (_, i) => (i === 0 ? backend.device : simDevice(i)));
  return { backend, info: { target: "sim", ...fields, device: backend.device, devices } };
}

/** Picks the back end for `request`. Pure apart from `deps` (and NUMBATS_SIM_DEVICES). */
export function selectTarget(request: TargetRequest, by: string, deps: SelectDeps): Selection {
  const sim = (reason: string, found: { driverVersion?: number } = {}): Selection =>
    simSelection(deps, { requested: request, requestedBy: by, reason, ...found });
  if (request === "sim") return sim(`${by} asks for the simulator`);

  const probe = deps.probe();
  const gpu = (): Selection => {
    if (!probe.ok) throw new Error("unreachable: no GPU probed");
    if (!deps.createCuda) throw new Error("no CUDA back end was given to target selection");
    const backend = deps.createCuda(0);
    const n = probe.devices.length;
    return {
      backend,
      info: {
        target: "cuda", requested: request, requestedBy: by, device: backend.device, devices: probe.devices, driverVersion: probe.driverVersion,
        reason: `found ${n} CUDA device${n === 1 ? "" : "s"}, using ${backend.device.name}`,
      },
    };
  };
  if (request === "cuda") {
    if (!probe.ok) {
      // no driver library at all: the failing "call" is loading it
      const f = probe.failed ?? { call: "dlopen(libcuda)", code: -1, errorName: "driver library not found" };
      throw new CudaError(f.call, f.code, f.errorName, probe.reason, "", `${by} but no usable GPU: ${probe.reason}`);
    }
    return gpu();
  }
  let why: string;
  if (probe.ok) {
    try {
      return gpu();
    } catch (e) {
      why = `the GPU could not be used: ${(e as Error).message}`;
    }
  } else {
    why = probe.reason;
  }
  deps.warn(`numbats: running kernels on the CPU simulator: ${oneLine(why)} (set NUMBATS_TARGET=sim to silence this, or NUMBATS_TARGET=cuda to require a GPU)`);
  return sim(why, probe.ok ? { driverVersion: probe.driverVersion } : {});
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, "; ");

const realDeps: SelectDeps = {
  probe: () => probeCuda(),
  createCuda: createCudaBackend,
  createSim: createSimBackend,
  warn: (line) => process.stderr.write(`${line}\n`),
};

let current: Selection | undefined;
/** each device's back end once made, so that its arrays, streams and compiled kernels stay valid across selectDevice */
const backends = new Map<number, Backend>();

function selection(): Selection {
  if (!current) {
    const { request, by } = requestedTarget();
    const sanitize = simChecks().tools ? simChecks().by : undefined;
    current = sanitize ? selectForSanitizer(sanitize, realDeps) : selectTarget(request, by, realDeps);
    backends.set(current.backend.device.id, current.backend);
  }
  return current;
}

/** The sanitizer runs every launch on the simulator; when a GPU is there, it says so once. */
export function selectForSanitizer(by: string, deps: SelectDeps): Selection {
  const probe = deps.probe();
  const reason = `${by} runs kernels on the CPU simulator with the sanitizer's checks`;
  if (probe.ok) deps.warn(`numbats: ${reason}; the GPU (${probe.devices[0]?.name ?? "found"}) is not used`);
  return simSelection(deps, { requested: "sim", requestedBy: by, reason, ...(probe.ok ? { driverVersion: probe.driverVersion } : {}) });
}

/** The back end kernels run on, chosen on first use and cached. */
export function getBackend(): Backend {
  return selection().backend;
}

/** Which target is in use, and why (for `numbats -s` and `cuda.detect()`). */
export function currentTargetInfo(): TargetInfo {
  return selection().info;
}

/**
 * Makes device `id` current for this process (Numba's `cuda.select_device`): a GPU's primary context,
 * or a simulated device. Each device keeps one back end, so switching back finds its arrays valid.
 */
export function selectDevice(id: number): Backend {
  const sel = selection();
  const n = sel.info.devices.length;
  if (!Number.isInteger(id) || id < 0 || id >= n) {
    throw new RangeError(sel.info.target === "sim"
      ? `no simulated device ${id}: the simulator has ${n} (ids 0…${n - 1}); NUMBATS_SIM_DEVICES=N gives N`
      : `no CUDA device ${id}: found ${n} (ids 0…${n - 1})`);
  }
  const backend = sel.backend.device.id === id ? sel.backend : deviceBackend(id);
  backend.activate?.();
  if (backend !== sel.backend) {
    current = { backend, info: { ...sel.info, device: backend.device, reason: `${sel.info.reason.replace(/; selected device \d+$/, "")}; selected device ${id}` } };
  }
  return backend;
}

/** The back end of device `id` of the current target, without making it current. */
export function deviceBackend(id: number): Backend {
  const sel = selection();
  let backend = backends.get(id);
  if (!backend) {
    if (!Number.isInteger(id) || id < 0 || id >= sel.info.devices.length) throw new RangeError(`no device ${id} on the ${sel.info.target} target: it has ${sel.info.devices.length}`);
    backend = sel.info.target === "sim" ? realDeps.createSim(id) : realDeps.createCuda!(id);
    backends.set(id, backend);
  }
  return backend;
}

/**
 * `cuda.close()`: closes every device's back end made so far and forgets them, so that the next use
 * selects again and starts afresh. Closing all is tried; then the first failure is thrown.
 */
export function closeBackends(): void {
  const made = [...backends.values()];
  current = undefined;
  backends.clear();
  dropKernelErrors();
  let failure: unknown;
  for (const backend of made) {
    try {
      backend.close?.();
    } catch (e) {
      failure ??= e;
    }
  }
  if (failure !== undefined) throw failure;
}

/** Which target a program would get and why: the same choice as its first launch, without the stderr notice. */
export function programTarget(): TargetInfo {
  const { request, by } = requestedTarget();
  return selectTarget(request, by, { ...realDeps, warn: () => {} }).info;
}

/** Whether `info`'s target runs kernels on a GPU (Numba's `cuda.is_available()`). */
export const onGpu = (info: TargetInfo): boolean => info.target === "cuda";

/** The simulator's worker threads, in words, where `info`'s target is the simulator (for `numbats -s` and `cuda.detect()`). */
export function simulatorWorkers(info: TargetInfo): string | undefined {
  return info.target === "sim" ? describeSimWorkers() : undefined;
}

/** The GPU driver as `numbats -s` shows it: its library, version and the PTX ISA its JIT takes, and its devices; or why there is none. */
export function gpuDriver(): { ok: true; library: string; version: string; devices: readonly DeviceInfo[] } | { ok: false; reason: string } {
  const probe = probeCuda();
  if (!probe.ok) return { ok: false, reason: probe.reason };
  const version = `CUDA ${formatDriverVersion(probe.driverVersion)} (${probe.driverVersion}), JIT accepts PTX ISA ${ptxVersionForDriver(probe.driverVersion) ?? "none"}`;
  return { ok: true, library: probe.library, version, devices: probe.devices };
}

/** The compute capability of the simulated device (PTX printed without a GPU is for it). */
export const SIMULATED_COMPUTE_CAPABILITY = SIM_DEVICE.computeCapability;

/** PTX options for GPU 0 (its compute capability, the ISA its driver takes); undefined without a GPU. */
export function gpuPtxTarget(): PtxTargetOptions | undefined {
  const probe = probeCuda();
  return probe.ok ? { computeCapability: probe.devices[0]!.computeCapability, maxPtxVersion: ptxVersionForDriver(probe.driverVersion) } : undefined;
}
