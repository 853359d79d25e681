// The GPU back end: the system's CUDA driver, one device, kernels the PTX target compiled.

import { CudaError } from "../../../errors.js";
import { CudaDevice } from "./device.js";
import { cudaDriver } from "./driver.js";

export { CudaDevice } from "./device.js";
export { CudaKernel } from "./kernel.js";
export { CudaEvent, CudaStream } from "./stream.js";

/**
 * A Backend on GPU `deviceId` (default 0) through its primary context.
 * Throws a CudaError saying why when there is no usable driver or device.
 */
export function createCudaBackend(deviceId = 0): CudaDevice {
  const load = cudaDriver();
  if (!load.ok) throw new CudaError(load.failed.call, load.failed.code, load.failed.errorName, load.reason);
  return new CudaDevice(load.driver, deviceId);
}
