// A kernel compiled to WGSL, loaded as a shader module on the device (wgsl/layout.ts is the contract
// between the target and this runtime): each launch checks the adapter's limits, packs the parameter
// block from the launch arguments, binds the arrays and its status buffer, and dispatches; the pipeline
// for a new block size (and dynamic shared size) is made, and waited for, at its first launch.
// Array arguments that view one buffer (a record array's fields, an array passed twice) are bound once:
// WebGPU refuses a written buffer bound twice to a dispatch. The target compiles the kernel for each
// launch's grouping of its arguments by buffer (wgsl/layout.ts: WgslLaunchShape), one module per
// grouping, kept; a kernel without shared buffers runs the module loaded when it was compiled.
// Each kernel has a status buffer (layout.ts): what its threads threw is read at the next synchronising
// call; a kernel that prints, or checks bounds (`debug`), has it read after each launch, its lines
// printed in the simulator's order and a failed check raised from the launch, as the simulator does.

import type { ArrayArg, BackendStream, CompiledKernel, DeviceInfo, KernelArg, LaunchDims } from "../../../abi/backend.js";
import type { KernelInfo } from "../../../abi/kernel-info.js";
import { noteThrowingLaunch } from "../../../abi/kernel-errors.js";
import { parseThrowSite } from "../../../abi/launch-abi.js";
import { DTYPE_INFO, type ScalarName } from "../../../dtypes.js";
import { CompileError, KernelError, LaunchError, sourcePosition } from "../../../errors.js";
import type { WgslMessage } from "../wgsl/diagnose.js";
import { decodeStatus, type StatusReport } from "../wgsl/status.js";
import type { ParamField, WgslKernel, WgslLaunchShape } from "../wgsl/layout.js";
import type { AdapterFacts } from "./adapter.js";
import type { DeviceChannel, Ticket } from "./channel.js";
import type { BindingLayout } from "./executor.js";

/** What a kernel needs of the back end that loads it. */
export interface KernelHost {
  readonly channel: DeviceChannel;
  readonly device: DeviceInfo;
  readonly facts: AdapterFacts;
  /** a new buffer id, its bytes allocated (zeroed) on the device */
  allocId(bytes: number): number;
  /** the device buffer id of an array argument (throws where it is not this back end's) */
  bufferId(arg: ArrayArg): number;
  /** the target in messages: "the webgpu target (llvmpipe: …)" */
  readonly where: string;
}

/** how each dtype's value goes into its 4-byte field (layout.ts: ParamField) */
const FIELD_WRITERS: Record<"int" | "uint" | "bool" | "float", (v: DataView, at: number, x: number) => void> = {
  int: (v, at, x) => v.setInt32(at, x, true),
  uint: (v, at, x) => v.setUint32(at, x, true),
  bool: (v, at, x) => v.setUint32(at, x ? 1 : 0, true),
  float: (v, at, x) => v.setFloat32(at, x, true),
};

/** shader module ids, unique in the process (the device outlives a closed back end) */
let moduleIds = 0;

/** the key of the grouping where no arguments share a buffer */
const NO_GROUPS = JSON.stringify([]);

/** the kernels launched since their status words were last read */
const unreadKernels = new Set<WebGpuKernel>();

/** modules being loaded where the thread cannot wait for them: each resolves to its kernel's error, if the compiler rejected it */
const loading = new Set<Promise<Error | undefined>>();

/**
 * Without blocking: throws the error of a kernel whose module the compiler rejected, and reads every
 * launched kernel's status words (the async twins do, before they raise kernel errors).
 */
export async function settleStatuses(): Promise<void> {
  const rejected = (await Promise.all(loading)).find((e) => e !== undefined);
  loading.clear();
  if (rejected) throw rejected;
  await Promise.all([...unreadKernels].map((k) => k.readStatusAsync()));
}

/** The kernel compiled for one grouping of its array arguments by buffer, loaded as a shader module. */
interface Variant {
  readonly wgsl: WgslKernel;
  readonly module: number;
  /** the override sets whose pipeline exists */
  readonly pipelines: Set<string>;
  /** the error of a module the WGSL compiler rejected, found without waiting */
  loadFailure?: Error;
}

/** How the back end compiles a kernel for the target, and explains the device's compiler's errors. */
export interface KernelCompiler {
  /** the kernel for the arguments of a launch, grouped by buffer (WgslLaunchShape) */
  compile(shape: WgslLaunchShape): WgslKernel;
  /** the CompileError in the kernel's terms for the WGSL compiler's errors on `wgsl`, where the target can tell one */
  explain(wgsl: WgslKernel, errors: readonly WgslMessage[]): CompileError | undefined;
}

export class WebGpuKernel implements CompiledKernel {
  readonly code: string;
  readonly staticSharedBytes: number;
  private readonly status: number;
  private readonly statusBytes: number;
  /** the kernel compiled for each grouping of its array arguments by buffer (JSON of the groups) */
  private readonly variants = new Map<string, Variant>();
  /** a launch since the status buffer was last read */
  private unread = false;
  /** a throw (or, read without waiting, a failed check) the status words held, until the next synchronising call */
  private failure: LaunchError | undefined;
  /** the status is read after each launch: the kernel prints or checks */
  private readonly readAfterLaunch: boolean;
  /**
   * the kernel may write its status words: it prints, throws or checks (a throw and a print name one
   * of the kernel's strings); the others' are never read
   */
  private readonly reports: boolean;

  /**
   * `wgsl`: the kernel compiled with no arguments sharing a buffer; its status words, prints and checks
   * are every grouping's. `tooManyArrays`: the error that compile raised where the kernel has more
   * arrays than the adapter binds (`wgsl` then compiled without the limit): only a launch whose
   * arguments share buffers can run it.
   */
  constructor(
    private readonly host: KernelHost,
    readonly info: KernelInfo,
    private readonly wgsl: WgslKernel,
    /** the kernel's source text, where a failed check points */
    private readonly source: string,
    private readonly compiler: KernelCompiler,
    private readonly tooManyArrays?: CompileError,
  ) {
    this.code = wgsl.code;
    this.staticSharedBytes = wgsl.staticSharedBytes;
    this.statusBytes = 4 * wgsl.statusWords;
    this.readAfterLaunch = wgsl.printWords > 0 || wgsl.accesses.length > 0;
    this.reports = this.readAfterLaunch || info.strings.length > 0;
    this.status = host.allocId(this.statusBytes);
    if (!tooManyArrays) this.load(NO_GROUPS, wgsl);
  }

  /**
   * Loads `wgsl` as the module of grouping `key`. Where the thread can wait, the WGSL compiler's
   * rejection is thrown here; where it cannot, the launches before the rejection is known do nothing,
   * the next async twin raises it, and later launches raise it themselves.
   */
  private load(key: string, wgsl: WgslKernel): Variant {
    this.checkStorageBuffers(wgsl);
    const variant: Variant = { wgsl, module: ++moduleIds, pipelines: new Set() };
    const layout: BindingLayout = [[0, "uniform"], [1, "storage"], ...wgsl.arrays.map((a) => [a.binding, a.readOnly ? "read-only-storage" : "storage"] as const)];
    const { channel } = this.host;
    const loaded = channel.request({ op: "module", id: variant.module, code: wgsl.code, layout });
    const failure = (errors: readonly WgslMessage[]) => (errors.length > 0 ? (this.compiler.explain(wgsl, errors) ?? this.rejected(wgsl, errors)) : undefined);
    if (channel.canBlock) {
      const error = failure(this.failing(() => loaded.wait(), `loading kernel '${this.info.name}'`) as readonly WgslMessage[]);
      if (error) throw error;
    } else {
      loading.add(loaded.promise().then((errors) => (variant.loadFailure = failure(errors as readonly WgslMessage[])), () => undefined));
    }
    this.variants.set(key, variant);
    return variant;
  }

  /** the kernel for this launch's arguments: its array arguments that view one buffer bound once */
  private variantFor(args: readonly KernelArg[]): Variant {
    const groups = this.sharedBuffers(args);
    const key = JSON.stringify(groups);
    const known = this.variants.get(key);
    if (known) return known;
    if (groups.length === 0) throw this.tooManyArrays!;
    return this.load(key, this.compiler.compile({ sharedBuffers: groups }));
  }

  /** the array arguments that view one device buffer, as groups of launch argument indices */
  private sharedBuffers(args: readonly KernelArg[]): number[][] {
    const byBuffer = new Map<number, number[]>();
    for (const { arg } of this.wgsl.arrays) {
      const id = this.host.bufferId(args[arg] as ArrayArg);
      const group = byBuffer.get(id);
      if (group) group.push(arg);
      else byBuffer.set(id, [arg]);
    }
    return [...byBuffer.values()].filter((g) => g.length > 1);
  }

  /** the WGSL compiler's errors, as they are, beside the lines they name */
  private rejected(wgsl: WgslKernel, errors: readonly WgslMessage[]): LaunchError {
    const lines = wgsl.code.split("\n");
    const told = errors.map((m) => `${m.lineNum}:${m.linePos}: ${m.message}\n    ${lines[m.lineNum - 1] ?? ""}`);
    return new LaunchError(`${this.host.where}: the WGSL compiler rejected kernel '${this.info.name}':\n${told.join("\n")}`);
  }

  /** a failure of the device, as a LaunchError that says what was done */
  private deviceError(e: unknown, doing: string): LaunchError {
    return new LaunchError(`${this.host.where}: ${doing}: ${(e as Error).message}`);
  }

  /** runs `f`; a failure of the device becomes a LaunchError that says what was done */
  private failing<T>(f: () => T, doing: string): T {
    try {
      return f();
    } catch (e) {
      throw this.deviceError(e, doing);
    }
  }

  launch(dims: LaunchDims, args: readonly KernelArg[], _stream: BackendStream, cooperative: boolean): void {
    if (cooperative) throw new LaunchError(`${this.host.where} cannot launch kernel '${this.info.name}' cooperatively (grid-wide sync)`);
    const { wgsl, module, pipelines, loadFailure } = this.variantFor(args);
    if (loadFailure) throw loadFailure;
    this.checkLimits(dims);
    const bindings = this.bindings(wgsl, args);
    const overrides = this.overrides(dims);
    const key = JSON.stringify(overrides);
    const { channel } = this.host;
    if (!pipelines.has(key)) {
      const made = channel.request({ op: "pipeline", module, entryPoint: wgsl.entryPoint, overrides });
      if (channel.canBlock) this.failing(() => made.wait(), `creating the pipeline of kernel '${this.info.name}' for block (${dims.block.join(", ")})`);
      pipelines.add(key);
    }
    channel.post({ op: "dispatch", module, entryPoint: wgsl.entryPoint, overrides, params: this.params(wgsl, args), bindings, grid: dims.grid });
    if (!this.reports) return;
    this.unread = true;
    unreadKernels.add(this);
    noteThrowingLaunch(this.readThrow);
    if (!this.readAfterLaunch) return;
    if (!channel.canBlock) {
      // a thread that cannot wait prints when the words arrive; a failed check waits for the next synchronising call
      this.readStatusAsync().catch((e: unknown) => void (this.failure ??= e as LaunchError));
      return;
    }
    const fault = this.report(this.statusTicket().wait() as Uint8Array);
    if (fault) throw fault;
  }

  /**
   * Reads the status words (after the launches so far) and clears them for the next launches: both
   * queued at once, so that no later launch's words are lost.
   */
  private statusTicket(): Ticket {
    this.unread = false;
    unreadKernels.delete(this);
    const { channel } = this.host;
    const read = channel.request({ op: "read", id: this.status, offset: 0, bytes: this.statusBytes });
    channel.post({ op: "write", id: this.status, offset: 0, data: new Uint8Array(this.statusBytes) });
    const doing = `reading the status of kernel '${this.info.name}'`;
    return {
      settled: () => read.settled(),
      wait: () => this.failing(() => read.wait(), doing),
      promise: () => read.promise().catch((e: unknown) => Promise.reject(this.deviceError(e, doing))),
    };
  }

  /** reads the status words without blocking: what they hold is printed or kept for the next synchronising call */
  async readStatusAsync(): Promise<void> {
    if (!this.unread) return;
    const fault = this.report((await this.statusTicket().promise()) as Uint8Array);
    this.failure ??= fault;
  }

  /**
   * What the status words say: the lines printed, in the simulator's order; a throw, kept for the next
   * synchronising call; and the error of a failed `debug` check, returned.
   */
  private report(bytes: Uint8Array): LaunchError | undefined {
    const report = decodeStatus(this.wgsl, this.info.strings, new Uint32Array(bytes.slice().buffer));
    if (report.lines.length > 0) process.stdout.write(report.lines.map((line) => `${line}\n`).join(""));
    if (report.dropped > 0) process.stderr.write(`numbats: kernel '${this.info.name}' printed more than its print buffer holds: ${report.dropped} console.log records were dropped\n`);
    this.failure ??= this.kernelError(report);
    const fault = report.fault;
    if (!fault) return undefined;
    const access = fault.access === undefined ? undefined : this.wgsl.accesses[fault.access];
    if (!access) return new LaunchError(fault.message);
    const { where: at, quote } = sourcePosition(access.source ?? this.source, access.line, access.column);
    return new LaunchError(`${fault.message} of kernel '${this.info.name}' ${at}\n${quote}`);
  }

  private kernelError({ thrown }: StatusReport): KernelError | undefined {
    if (!thrown) return undefined;
    const { message, where } = parseThrowSite(this.info.strings[thrown.site] ?? "(an unknown throw site)");
    const [bx = 0, by = 0, bz = 0] = thrown.block, [tx = 0, ty = 0, tz = 0] = thrown.thread;
    return new KernelError(this.info.name, message, [tx, ty, tz], [bx, by, bz], where);
  }

  private overrides(dims: LaunchDims): Record<string, number> {
    const [x, y, z] = dims.block;
    const o: Record<string, number> = { BLOCK_X: x, BLOCK_Y: y, BLOCK_Z: z };
    if (this.wgsl.dynamicShared) o.DYNAMIC_SHARED_BYTES = dims.sharedMemBytes;
    return o;
  }

  /** the launch's shape and shared memory against the adapter's limits */
  private checkLimits(dims: LaunchDims): void {
    const { limits } = this.host.device;
    const name = `kernel '${this.info.name}'`;
    const threads = dims.block[0] * dims.block[1] * dims.block[2];
    const axes = ["x", "y", "z"] as const;
    if (threads > limits.maxThreadsPerBlock) {
      throw new LaunchError(`${name}: a block of ${threads} threads (${dims.block.join(" × ")}) is more than ${this.host.where} allows (maxComputeInvocationsPerWorkgroup ${limits.maxThreadsPerBlock})`);
    }
    for (let i = 0; i < 3; i++) {
      if (dims.block[i]! > limits.maxBlockDim[i]!) {
        throw new LaunchError(`${name}: block extent ${axes[i]} = ${dims.block[i]} is more than ${this.host.where} allows (maxComputeWorkgroupSize${axes[i]!.toUpperCase()} ${limits.maxBlockDim[i]})`);
      }
      if (dims.grid[i]! > limits.maxGridDim[i]!) {
        throw new LaunchError(`${name}: grid extent ${axes[i]} = ${dims.grid[i]} blocks is more than ${this.host.where} allows (maxComputeWorkgroupsPerDimension ${limits.maxGridDim[i]}): use fewer, larger blocks or a grid-stride loop`);
      }
    }
    const shared = this.staticSharedBytes + (this.wgsl.dynamicShared ? 4 * Math.ceil(dims.sharedMemBytes / 4) : 0);
    if (shared > limits.maxSharedPerBlock) {
      throw new LaunchError(`${name}: ${shared} bytes of shared memory (${this.staticSharedBytes} static, ${dims.sharedMemBytes} dynamic) are more than ${this.host.where} allows (maxComputeWorkgroupStorageSize ${limits.maxSharedPerBlock})`);
    }
  }

  /** the kernel's storage bindings (its arrays and the status words) against the adapter's limit */
  private checkStorageBuffers(wgsl: WgslKernel): void {
    const storage = wgsl.arrays.length + 1;
    const most = this.host.facts.limits.maxStorageBuffersPerShaderStage ?? 0;
    if (storage > most) {
      throw new LaunchError(`kernel '${this.info.name}' binds ${storage} storage buffers (${wgsl.arrays.length} arrays and its status words), more than ${this.host.where} allows (maxStorageBuffersPerShaderStage ${most}): pass fewer arrays`);
    }
  }

  /**
   * [binding, buffer id] of the status words and of each binding's array (the first of a group that
   * views one buffer), checked against the adapter's binding limit
   */
  private bindings(wgsl: WgslKernel, args: readonly KernelArg[]): [number, number][] {
    const { facts, where } = this.host;
    const maxBinding = facts.limits.maxStorageBufferBindingSize ?? Infinity;
    const out: [number, number][] = [[1, this.status]];
    for (const a of wgsl.arrays) {
      const arg = args[a.arg] as ArrayArg;
      if (arg.buffer.byteLength > maxBinding) {
        const param = this.info.params[a.arg]?.name ?? arg.name;
        throw new LaunchError(`kernel '${this.info.name}': array '${param}' lives in a buffer of ${arg.buffer.byteLength} bytes, more than ${where} binds (maxStorageBufferBindingSize ${maxBinding})`);
      }
      out.push([a.binding, this.host.bufferId(arg)]);
    }
    return out;
  }

  /** the parameter block: each field's 4 bytes from its launch argument */
  private params(wgsl: WgslKernel, args: readonly KernelArg[]): Uint8Array {
    const fields = wgsl.params;
    const bytes = new Uint8Array(4 * fields.length);
    const view = new DataView(bytes.buffer);
    fields.forEach((f, i) => fieldWriter(f, args[f.arg]!)(view, 4 * i));
    return bytes;
  }

  /**
   * What the launches since the status was last read threw (the first throw), cleared for the next
   * launches; a failed check found without waiting is thrown. Where the thread cannot wait, the async
   * twins read the words first (settleStatuses).
   */
  private readonly readThrow = (): KernelError | undefined => {
    if (this.unread && this.host.channel.canBlock) {
      const fault = this.report(this.statusTicket().wait() as Uint8Array);
      this.failure ??= fault;
    }
    const failure = this.failure;
    this.failure = undefined;
    if (failure === undefined || failure instanceof KernelError) return failure;
    throw failure;
  };

  suggestedBlockSize(): number {
    return Math.min(256, this.host.device.limits.maxThreadsPerBlock);
  }
}

/** writes field `f` of the parameter block from its argument */
function fieldWriter(f: ParamField, arg: KernelArg): (view: DataView, at: number) => void {
  if (f.what === "value") {
    if (arg.kind !== "scalar") throw new LaunchError(`parameter field ${f.arg} expects a scalar argument`);
    const write = FIELD_WRITERS[DTYPE_INFO[f.dtype].cls];
    // a tuple's item: its path in the argument's value
    const value = (f.item ?? []).reduce<unknown>((v, k) => (v as readonly unknown[])[k], arg.value);
    // a 64-bit integer's word: its two's complement bits, 32 at a time
    if (f.word !== undefined) return (view, at) => view.setUint32(at, Number(BigInt.asUintN(32, BigInt.asUintN(64, BigInt(value as bigint | number)) >> BigInt(32 * f.word!))), true);
    return (view, at) => write(view, at, Number(value));
  }
  if (arg.kind !== "array") throw new LaunchError(`parameter field ${f.arg} expects an array argument`);
  const value = f.what === "offset" ? arg.byteOffset / DTYPE_INFO[arg.dtype as ScalarName].size : f.what === "shape" ? arg.shape[f.dim]! : arg.strides[f.dim]!;
  return (view, at) => view.setInt32(at, value, true);
}
