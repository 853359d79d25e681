// Which back end runs kernels (docs/runtime.md): NUMBATS_TARGET=cuda|sim|auto
// (default auto), NUMBATS_ENABLE_CUDASIM=1 as in Numba. auto takes the first
// back end in its order (the GPU) whose probe finds a device and which opens,
// among those that may be chosen automatically here (BackendDescriptor.inAuto);
// when that is not the first (the simulator, the last), it says why in one
// line on stderr. Selection is a policy over the list of back ends
// (src/backends/index.ts): it names none of them, and the host API asks here
// what differs between them.

import type { Backend, BackendDescriptor, DeviceInfo } from "../abi/backend.js";
import { BACKENDS, TARGET_NAMES, type TargetName } from "../backends/index.js";
import { dropKernelErrors } from "../abi/kernel-errors.js";

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

/** what `cuda.useTarget` asked for, in place of the environment's request */
let programRequest: { request: TargetRequest; by: string } | undefined;

/**
 * `cuda.useTarget(name)`: the program's own choice of target, in place of NUMBATS_TARGET, made before
 * its first launch (or after `cuda.close()`); asking again for the target in use changes nothing.
 */
export function useTarget(name: string): void {
  const raw = name.trim().toLowerCase();
  if (!isTargetRequest(raw)) throw new Error(`cuda.useTarget("${name}"): not a target: use ${TARGET_NAMES.join(", ")} or auto`);
  const by = `cuda.useTarget("${raw}")`;
  if (current && raw !== current.info.target) {
    throw new Error(`${by} after kernels ran on the ${current.info.target} target: call it before the first launch, or cuda.close() first`);
  }
  programRequest = { request: raw, by };
}

/** the target asked for: by the program (useTarget), else by the environment */
const request = () => programRequest ?? requestedTarget();

/** What selection needs from the outside world; tests substitute fakes. */
export interface SelectDeps {
  /** the back ends, in `auto`'s order */
  readonly backends: readonly BackendDescriptor<TargetName>[];
  warn(line: string): void;
}

type Fields = Omit<TargetInfo, "target" | "device" | "devices">;

/** `descriptor`'s device 0 made now (the others on selectDevice), with the devices its probe found. */
function made(descriptor: BackendDescriptor<TargetName>, devices: readonly DeviceInfo[], fields: (backend: Backend) => Fields): Selection {
  const backend = descriptor.create(0);
  const all = devices.map((d) => (d.id === backend.device.id ? backend.device : d));
  return { backend, info: { target: descriptor.name, ...fields(backend), device: backend.device, devices: all } };
}

/** the driver's version, where one was found (TargetInfo has the field only then) */
const driver = (driverVersion: number | undefined) => (driverVersion === undefined ? {} : { driverVersion });

const named = (deps: SelectDeps, name: TargetName) => deps.backends.find((d) => d.name === name)!;

/** Picks the back end for `request`. Pure apart from `deps`. */
export function selectTarget(request: TargetRequest, by: string, deps: SelectDeps): Selection {
  const base = { requested: request, requestedBy: by };
  if (request !== "auto") {
    const descriptor = named(deps, request);
    const probe = descriptor.probe();
    if (!probe.ok) throw descriptor.unavailable(by, probe);
    return made(descriptor, probe.devices, (backend) => ({ ...base, reason: descriptor.chosen(backend, probe.devices, by), ...driver(probe.driverVersion) }));
  }
  const candidates = deps.backends.filter(inAuto);
  const [first] = candidates;
  const fallback = candidates.at(-1)!;
  // why the back ends before the one chosen are not used (each one's reason, in order), and a driver one of them found
  let why: string | undefined, driverVersion: number | undefined;
  const notUsed = (reason: string) => (why = why === undefined ? reason : `${why}; ${reason}`);
  for (const descriptor of candidates) {
    const probe = descriptor.probe();
    if (!probe.ok) {
      notUsed(probe.reason);
      continue;
    }
    driverVersion ??= probe.driverVersion;
    let chosen: Selection;
    try {
      chosen = made(descriptor, probe.devices, (backend) => ({ ...base, reason: why ?? descriptor.chosen(backend, probe.devices, by), ...driver(driverVersion) }));
    } catch (e) {
      if (descriptor === fallback) throw e;
      notUsed(`the ${descriptor.device} could not be used: ${(e as Error).message}`);
      continue;
    }
    if (why !== undefined) {
      deps.warn(`numbats: running kernels on the ${descriptor.device}: ${oneLine(why)} (set NUMBATS_TARGET=${descriptor.name} to silence this, or NUMBATS_TARGET=${first!.name} to require a ${first!.device})`);
    }
    return chosen;
  }
  throw new Error(`no back end can run kernels here: ${why}`);
}

/** whether `auto` may choose `descriptor` here */
const inAuto = (descriptor: BackendDescriptor): boolean => descriptor.inAuto?.() ?? true;

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, "; ");

const realDeps: SelectDeps = {
  backends: BACKENDS,
  warn: (line) => process.stderr.write(`${line}\n`),
};

let current: Selection | undefined;
/** each device's back end once made, so that its arrays, streams and compiled kernels stay valid across selectDevice */
const backends = new Map<number, Backend>();

function selection(): Selection {
  if (!current) {
    const { request: asked, by } = request();
    const forcing = BACKENDS.find((d) => d.forced?.by() !== undefined);
    current = forcing ? selectForced(forcing, forcing.forced!.by()!, realDeps) : selectTarget(asked, by, realDeps);
    backends.set(current.backend.device.id, current.backend);
  }
  return current;
}

/**
 * A setting (`by`, the sanitizer's) runs every launch on `descriptor`; each other back end that would
 * have run them is named once on stderr.
 */
export function selectForced(descriptor: BackendDescriptor<TargetName>, by: string, deps: SelectDeps): Selection {
  const reason = descriptor.forced!.reason(by);
  let driverVersion: number | undefined;
  for (const other of deps.backends) {
    if (other === descriptor || !inAuto(other)) continue;
    const probe = other.probe();
    if (!probe.ok) continue;
    driverVersion ??= probe.driverVersion;
    deps.warn(`numbats: ${reason}; the ${other.device} (${probe.devices[0]?.name ?? "found"}) is not used`);
  }
  const probe = descriptor.probe();
  if (!probe.ok) throw descriptor.unavailable(by, probe);
  return made(descriptor, probe.devices, () => ({ requested: descriptor.name, requestedBy: by, reason, ...driver(driverVersion) }));
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
    throw new RangeError(named(realDeps, sel.info.target).noDevice(id, n));
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
    backend = named(realDeps, sel.info.target).create(id);
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
  const { request: asked, by } = request();
  return selectTarget(asked, by, { ...realDeps, warn: () => {} }).info;
}

/** What runs `info`'s kernels, in words: "GPU", "CPU simulator". */
export const targetDevice = (info: TargetInfo): string => named(realDeps, info.target).device;

/** Whether `info`'s target runs kernels on a GPU (Numba's `cuda.is_available()`). */
export const onGpu = (info: TargetInfo): boolean => named(realDeps, info.target).onGpu;

/** The back end's worker threads, in words, where it has them (for `numbats -s` and `cuda.detect()`). */
export function simulatorWorkers(info: TargetInfo): string | undefined {
  return named(realDeps, info.target).workers?.();
}

/**
 * Starts the worker threads of every back end that has them, resolving once they run. The browser build
 * exports it: there a thread starts only when its creator yields, so a program awaits this before launching.
 */
export async function startSimulatorWorkers(): Promise<void> {
  await Promise.all(BACKENDS.map((b) => b.startWorkers?.()));
}

/**
 * Readies the back ends whose devices are found asynchronously (BackendDescriptor.prepare), so that
 * selection, which probes synchronously, sees them. The browser build's `ready()` awaits it before
 * the first launch.
 */
export async function prepareBackends(): Promise<void> {
  await Promise.all(BACKENDS.map((b) => b.prepare?.()));
}
