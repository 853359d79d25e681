// numbats' public exports (SPEC §1).

export { cuda, type Cuda, type Dim3, type KernelArray1, type KernelArray2, type KernelArray3 } from "./cuda.js";
export { Kernel, type JitOptions, type Dim, type Launcher } from "./kernel.js";
export { NDArray, ndarray } from "./runtime/ndarray.js";
export { DeviceArray } from "./runtime/devicearray.js";
export { Stream, Event } from "./runtime/streams.js";
export {
  bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
  type DType, type ScalarName, type ArrayType, type Type,
} from "./dtypes.js";
export { CompileError, TypingError, LaunchError, CudaError } from "./errors.js";
