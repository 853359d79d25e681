// numbats' public exports.

export {
  cuda, type Cuda, type Dim3, type KernelArray1, type KernelArray2, type KernelArray3, type Jit, type GridFn, type AtomicFn,
  type AtomicCas, type ArrayMaker, type GridGroup, type StateArray, type RandomDraw, type MemoryInfo, type AtomicArray,
  type AtomicBigIntArray, type ArrayIndex, type ArrayOfShape, type ElementOfDTypeLike,
} from "./cuda.js";
export {
  Kernel, type JitOptions, type Dim, type Launcher, type LaunchArgument, type LaunchArguments, type KernelArgument,
  type ArrayArgument, type HostRecord, type RecordElement, type RecordsArgument, type AnyKernelFunction, type TypedLaunchArgument, type InnermostElement,
  type HostTuple, type TupleArgument, type ArrayOfAnyLength,
  type NumberList,
} from "./kernel.js";
export { declareDevice, type DeclareDeviceOptions } from "./declare-device.js";
export { NDArray, ndarray, type NDArrayLike, type ElementOf, type Nested } from "./ndarray.js";
export {
  DeviceArray, type HostArray, type HostArrayOf, type HostCopyOf, type DeviceArrayLike, type DTypeOfHost, type RankOf,
  type RankOfHost, type Shape, type SliceSpec, type StreamLike, type ToDeviceOptions,
} from "./runtime/devicearray.js";
export type { Complex, ComplexOperand, CMath } from "./complex.js";
export { Stream, Event, Graph } from "./runtime/streams.js";
export {
  RecordDType, RecordArray, type RecordField, type RecordObject, type RecordValue, type RecordOf, type RecordOfFields,
} from "./records.js";
export { DeviceRecordArray } from "./runtime/records.js";
export type { DeviceInfo, DeviceLimits } from "./abi/backend.js";
export type { Reducer, ReduceElement, ReduceInput, ReduceOptions } from "./reduce.js";
export type { Ufunc, Gufunc, UfuncOptions, GufuncOptions, UfuncReduce, UfuncReduceOptions, UfuncResult, ArrayOperand, ScalarOperand } from "./vectorize.js";
export {
  bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64, complex64, complex128,
  type ComplexDType, type ComplexDTypeLike, type ComplexValue, type DType, type HalfDType, type ScalarName, type ArrayType, type TupleType, type RecordLayout, type Type, type Layout, type MemorySpace, type TypedArray,
  type DTypeLike, type DTypeString, type DTypeNameOf, type DTypeOfTypedArray, type DTypesStoredIn, type DTypesWithElement, type DTypesWithHostElement,
  type TypedScalar, type StorageArrays, type StorageOf, type HostStorageOf, type HostElementOf, type KernelElementOf,
} from "./dtypes.js";
export {
  CompileError, TypingError, InternalCompilerError, LaunchError, KernelError, CudaError, NcclError, SanitizerError, type SourceProblem, type SanitizerFinding, type SanitizerTool,
} from "./errors.js";
export { nccl, NcclComm, type InitOptions, type ReduceOp } from "./distributed/nccl.js";
export { ready } from "./ready.js";
