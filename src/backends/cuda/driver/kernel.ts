// A kernel loaded into the driver: module JIT (with its logs), launch with
// preallocated parameters, dynamic shared memory opt-in, occupancy.

import { koffi } from "./ffi.js";
import type { BackendStream, CompiledKernel, KernelArg, LaunchDims, ScalarSlots } from "../../../abi/backend.js";
import type { KernelInfo } from "../../../abi/kernel-info.js";
import { parseThrowSite } from "../../../abi/launch-abi.js";
import type { PtxModule } from "../ptx/module.js";
import { KernelError, LaunchError } from "../../../errors.js";
import { KERNEL_ERROR_SYMBOL, KERNEL_ERROR_WORDS } from "../ptx/module.js";
import { noteThrowingLaunch } from "../../../abi/kernel-errors.js";
import { CUDA_SUCCESS } from "./driver.js";
import { externalFunctions } from "../nvrtc/link-kernel-code.js";
import type { DeviceContext, DriverHandle } from "./context.js";
import { nativeMemory, ParamBlock, type PointerOf } from "./params.js";

/** CUjit_option values */
const JIT = { maxRegisters: 0, infoLog: 3, infoLogSize: 4, errorLog: 5, errorLogSize: 6 } as const;
const JIT_LOG_BYTES = 16384;
const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
const CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;

/**
 * A CUlaunchConfig (cuda.h) in native memory for cuLaunchKernelEx, reused by every launch of a
 * kernel: its words are rewritten only when the launch's shape or stream changes (a configured
 * launcher passes the same dims object each time).
 */
class LaunchConfig {
  /** sizeof(CUlaunchConfig): seven uint32 dims, CUstream at byte 32, attrs at 40, numAttrs at 48 */
  private static readonly BYTES = 56;
  readonly address: number;
  private readonly words: Uint32Array;
  private readonly stream: BigUint64Array;
  private lastDims: LaunchDims | undefined;
  private lastStream: DriverHandle | undefined;

  constructor() {
    const mem = nativeMemory(this, LaunchConfig.BYTES);
    const bytes = koffi().view(mem, LaunchConfig.BYTES);
    this.address = Number(koffi().address(mem));
    this.words = new Uint32Array(bytes, 0, 7);
    this.stream = new BigUint64Array(bytes, 32, 1);
  }

  /** The config's address, set for `dims` on stream `s`. */
  set(dims: LaunchDims, s: DriverHandle): number {
    if (dims !== this.lastDims) {
      const w = this.words;
      w[0] = dims.grid[0], w[1] = dims.grid[1], w[2] = dims.grid[2];
      w[3] = dims.block[0], w[4] = dims.block[1], w[5] = dims.block[2];
      w[6] = dims.sharedMemBytes;
      this.lastDims = dims;
    }
    if (s !== this.lastStream) {
      this.stream[0] = s.handle === null ? 0n : BigInt(koffi().address(s.handle));
      this.lastStream = s;
    }
    return this.address;
  }
}

export class CudaKernel implements CompiledKernel {
  readonly info: KernelInfo;
  readonly ptx: PtxModule;
  readonly code: string;
  readonly staticSharedBytes: number;
  readonly scalarSlots: ScalarSlots;
  /** the JIT's info log of the last load (register and spill counts when verbose) */
  infoLog = "";

  private readonly owner: DeviceContext;
  private readonly params: ParamBlock;
  private readonly pointerOf: PointerOf;
  private fn: unknown;
  /** the function handle's address, for cuLaunchKernelEx */
  private fnAddress = 0;
  /** undefined where the driver predates cuLaunchKernelEx (CUDA 12.0): launches then use cuLaunchKernel */
  private readonly config: LaunchConfig | undefined;
  private generation = -1;
  /** dynamic shared memory a launch may use without raising the function attribute */
  private dynamicSharedLimit = 0;
  /** the device address of the module's error record (kernels that may throw), else 0 */
  private errorRecord = 0n;

  /** `image`: the module as the driver's linker made it from `ptx` (a cubin, loaded without the JIT), where there is one */
  constructor(owner: DeviceContext, info: KernelInfo, ptx: PtxModule, private readonly image?: Uint8Array) {
    this.owner = owner;
    this.info = info;
    this.ptx = ptx;
    this.code = ptx.text;
    this.staticSharedBytes = ptx.staticSharedBytes;
    this.params = new ParamBlock(ptx.params);
    this.scalarSlots = this.params.scalarSlots;
    this.pointerOf = (arg) => owner.devicePointer(arg);
    this.config = owner.driver.missing.includes("cuLaunchKernelEx") ? undefined : new LaunchConfig();
    this.load();
  }

  /** JIT-compiles the module into the current context (again after a context reset). */
  private load(): void {
    const { driver } = this.owner;
    const ffi = koffi();
    const errorLog = ffi.alloc("char", JIT_LOG_BYTES);
    const infoLog = ffi.alloc("char", JIT_LOG_BYTES);
    try {
      const options: number[] = [JIT.errorLog, JIT.errorLogSize, JIT.infoLog, JIT.infoLogSize];
      const values = [ffi.address(errorLog), BigInt(JIT_LOG_BYTES), ffi.address(infoLog), BigInt(JIT_LOG_BYTES)];
      const maxRegisters = this.info.maxRegisters;
      if (maxRegisters !== undefined) options.push(JIT.maxRegisters), values.push(BigInt(maxRegisters));
      const module: unknown[] = [null];
      let rc = driver.api.cuModuleLoadDataEx(module, this.image ?? this.ptx.text, options.length, new Int32Array(options), new BigUint64Array(values));
      // a cubin another toolkit made, which this driver or device cannot load: its PTX is JIT-compiled
      // instead, where it is whole (a kernel calling code linked in is not: its loader links it again)
      if (rc !== CUDA_SUCCESS && this.image && externalFunctions(this.ptx.text).length === 0) rc = driver.api.cuModuleLoadDataEx(module, this.ptx.text, options.length, new Int32Array(options), new BigUint64Array(values));
      this.infoLog = String(ffi.decode(infoLog, "char", -1));
      if (rc !== CUDA_SUCCESS) throw driver.error("cuModuleLoadDataEx", rc, this.loadFailure(rc, String(ffi.decode(errorLog, "char", -1))));
      const fn: unknown[] = [null];
      try {
        driver.check("cuModuleGetFunction", driver.api.cuModuleGetFunction(fn, module[0], this.ptx.entry), `entry '${this.ptx.entry}'`);
        this.errorRecord = this.ptx.throws ? this.globalAddress(module[0], KERNEL_ERROR_SYMBOL) : 0n;
      } catch (e) {
        driver.api.cuModuleUnload(module[0]); // a module the kernel cannot use is not kept
        throw e;
      }
      this.owner.trackModule(this, module[0]);
      this.fn = fn[0];
      this.fnAddress = Number(ffi.address(fn[0]));
      this.generation = this.owner.generation;
      this.dynamicSharedLimit = this.owner.device.limits.maxSharedPerBlock - this.staticSharedBytes;
    } finally {
      ffi.free(errorLog);
      ffi.free(infoLog);
    }
  }

  /** The device address of a module's `.global` variable. */
  private globalAddress(module: unknown, name: string): bigint {
    const { driver } = this.owner;
    const address: (number | bigint)[] = [0], bytes = [0];
    driver.check("cuModuleGetGlobal_v2", driver.api.cuModuleGetGlobal_v2(address, bytes, module, name), `global '${name}' of kernel '${this.info.name}'`);
    return BigInt(address[0]!);
  }

  /**
   * What the launches since the last read threw: the error record the first throwing thread wrote
   * (see the PTX target's throwError), cleared for the next launches. Reading it waits for them.
   */
  private readonly readThrow = (): KernelError | undefined => {
    const { driver } = this.owner;
    // a reset context took the launches and the record with it
    if (this.generation !== this.owner.generation) return undefined;
    this.owner.activate();
    const record = new Uint32Array(KERNEL_ERROR_WORDS);
    driver.check("cuMemcpyDtoH_v2", driver.api.cuMemcpyDtoH_v2(record, this.errorRecord, record.byteLength), `reading the error record of kernel '${this.info.name}'`);
    if (record[0] === 0) return undefined;
    driver.check("cuMemcpyHtoD_v2", driver.api.cuMemcpyHtoD_v2(this.errorRecord, new Uint32Array(KERNEL_ERROR_WORDS), record.byteLength), `clearing the error record of kernel '${this.info.name}'`);
    const { message, where } = parseThrowSite(this.info.strings[record[0]! - 1] ?? "(an unknown throw site)");
    return new KernelError(this.info.name, message, [record[1]!, record[2]!, record[3]!], [record[4]!, record[5]!, record[6]!], where);
  };

  private loadFailure(rc: number, log: string): string {
    const lines = [`while JIT-compiling kernel '${this.info.name}' (entry ${this.ptx.entry})`, log ? `JIT log:\n${log}` : "the JIT gave no log"];
    if (rc === CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
      lines.push(`the driver (CUDA ${this.owner.driverVersion}) accepts PTX ISA up to ${this.owner.maxPtxVersion ?? "?"}; update the NVIDIA driver`);
    }
    return lines.join("\n");
  }

  /** The function handle in the current context. */
  private current(): unknown {
    this.owner.activate();
    if (this.generation !== this.owner.generation) this.load();
    return this.fn;
  }

  launch(dims: LaunchDims, args: readonly KernelArg[], stream: BackendStream, cooperative: boolean, scalarsStored = false): void {
    const { driver } = this.owner;
    const fn = this.current();
    const s = this.owner.useStream(stream, "cuLaunchKernel");
    this.params.write(args, this.pointerOf, scalarsStored);
    const smem = dims.sharedMemBytes;
    if (smem > this.dynamicSharedLimit) this.raiseDynamicShared(fn, smem);
    const [gx, gy, gz] = dims.grid;
    const [bx, by, bz] = dims.block;
    if (this.errorRecord) noteThrowingLaunch(this.readThrow);
    s.captured?.add(this);
    if (cooperative || this.ptx.cooperative) {
      const rc = driver.api.cuLaunchCooperativeKernel(fn, gx, gy, gz, bx, by, bz, smem, s.handle, this.params.kernelParams);
      if (rc !== CUDA_SUCCESS) throw driver.error("cuLaunchCooperativeKernel", rc, this.describeLaunch(dims));
    } else if (this.config) {
      const rc = driver.api.cuLaunchKernelEx(this.config.set(dims, s), this.fnAddress, this.params.kernelParamsAddress, 0);
      if (rc !== CUDA_SUCCESS) throw driver.error("cuLaunchKernelEx", rc, this.describeLaunch(dims));
    } else {
      const rc = driver.api.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, smem, s.handle, this.params.kernelParams, null);
      if (rc !== CUDA_SUCCESS) throw driver.error("cuLaunchKernel", rc, this.describeLaunch(dims));
    }
  }

  /** Opts in to more than the default 48 KB of shared memory, up to the device's limit. */
  private raiseDynamicShared(fn: unknown, bytes: number): void {
    const { limits } = this.owner.device;
    const most = limits.maxSharedPerBlockOptin - this.staticSharedBytes;
    if (bytes > most) {
      throw new LaunchError(
        `kernel '${this.info.name}' asks for ${bytes} bytes of dynamic shared memory; with its ${this.staticSharedBytes} static bytes ` +
          `the device allows at most ${most} (${limits.maxSharedPerBlockOptin} per block)`,
      );
    }
    const { driver } = this.owner;
    driver.check("cuFuncSetAttribute", driver.api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes), `dynamic shared memory ${bytes} bytes`);
    this.dynamicSharedLimit = bytes;
  }

  private describeLaunch(d: LaunchDims): string {
    return `launching kernel '${this.info.name}' with grid (${d.grid.join(", ")}), block (${d.block.join(", ")}), ${d.sharedMemBytes} bytes dynamic shared memory`;
  }

  suggestedBlockSize(dynamicSharedBytes: number): number {
    const fn = this.current();
    const minGrid = [0], block = [0];
    const { driver } = this.owner;
    driver.check("cuOccupancyMaxPotentialBlockSize", driver.api.cuOccupancyMaxPotentialBlockSize(minGrid, block, fn, null, dynamicSharedBytes, 0));
    return block[0]!;
  }
}
