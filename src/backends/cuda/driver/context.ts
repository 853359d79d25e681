// What kernels, streams and events need of the CUDA device they belong to. CudaDevice implements it;
// they see only this narrow view, so they need not import the device module that makes them.

import type { ArrayArg, BackendEvent, BackendStream, DeviceInfo } from "../../../abi/backend.js";
import type { CudaDriver } from "./driver.js";

/** A stream or an event as the driver knows it (CUstream, CUevent; null for the default stream). */
export interface DriverHandle {
  readonly handle: unknown;
}

/** A stream as the driver knows it, and what a stream capture on it collects. */
export interface StreamHandle extends DriverHandle {
  /** during a capture: the kernels it launched, which the graph holds (their modules stay loaded) */
  captured: Set<object> | undefined;
}

export interface DeviceContext {
  readonly device: DeviceInfo;
  readonly driver: CudaDriver;
  /** as cuDriverGetVersion reports it, e.g. 12080 */
  readonly driverVersion: number;
  /** highest PTX ISA the driver JIT accepts */
  readonly maxPtxVersion: string | undefined;
  /** the context's generation: bumped by a context reset, which invalidates what was made before */
  readonly generation: number;
  /** makes the device's context current */
  activate(): void;
  /** the device address of an array argument's first element */
  devicePointer(arg: ArrayArg): number;
  /** registers a module so that it is unloaded when `owner` is garbage-collected */
  trackModule(owner: object, module: unknown): void;
  /** the stream, checked to be this device's and of its current context (for `call`); activates the context */
  useStream(stream: BackendStream, call: string): StreamHandle;
  /** the event, checked as useStream checks a stream */
  useEvent(event: BackendEvent, call: string): DriverHandle;
}
