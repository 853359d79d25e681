// A kernel compiled to WGSL, loaded as a shader module on the device (wgsl/layout.ts is the contract
// between the target and this runtime): each launch checks the adapter's limits, packs the parameter
// block from the launch arguments, binds the arrays and its status buffer, and dispatches; the pipeline
// for a new block size (and dynamic shared size) is made, and waited for, at its first launch.
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
import type { ParamField, WgslKernel } from "../wgsl/layout.js";
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

export class WebGpuKernel implements CompiledKernel {
  readonly code: string;
  readonly staticSharedBytes: number;
  private readonly module: number;
  private readonly status: number;
  private readonly statusBytes: number;
  /** the bind group layout: the parameters, the status words, then each array */
  private readonly layout: BindingLayout;
  /** the override sets whose pipeline exists */
  private readonly pipelines = new Set<string>();
  /** a launch since the status buffer was last read */
  private unread = false;
  /** a throw (or, read without waiting, a failed check) the status words held, until the next synchronising call */
  private failure: LaunchError | undefined;
  /** the error of a module the WGSL compiler rejected, found without waiting */
  private loadFailure: Error | undefined;
  /** the status is read after each launch: the kernel prints or checks */
  private readonly readAfterLaunch: boolean;
  /**
   * the kernel may write its status words: it prints, throws or checks (a throw and a print name one
   * of the kernel's strings); the others' are never read
   */
  private readonly reports: boolean;

  constructor(
    private readonly host: KernelHost,
    readonly info: KernelInfo,
    private readonly wgsl: WgslKernel,
    /** the kernel's source text, where a failed check points */
    private readonly source: string,
    /** the CompileError in the kernel's terms for the WGSL compiler's errors, where the target can tell one */
    explain: (errors: readonly WgslMessage[]) => CompileError | undefined,
  ) {
    this.code = wgsl.code;
    this.staticSharedBytes = wgsl.staticSharedBytes;
    this.module = ++moduleIds;
    this.layout = [[0, "uniform"], [1, "storage"], ...wgsl.arrays.map((a) => [a.binding, a.readOnly ? "read-only-storage" : "storage"] as const)];
    this.checkStorageBuffers();
    this.statusBytes = 4 * wgsl.statusWords;
    this.readAfterLaunch = wgsl.printWords > 0 || wgsl.accesses.length > 0;
    this.reports = this.readAfterLaunch || info.strings.length > 0;
    this.status = host.allocId(this.statusBytes);
    const loaded = host.channel.request({ op: "module", id: this.module, code: wgsl.code, layout: this.layout });
    const failure = (errors: readonly WgslMessage[]) => (errors.length > 0 ? (explain(errors) ?? this.rejected(errors)) : undefined);
    if (host.channel.canBlock) {
      const error = failure(this.failing(() => loaded.wait(), `loading kernel '${info.name}'`) as readonly WgslMessage[]);
      if (error) throw error;
      return;
    }
    // a thread that cannot wait: the launches before the module is known to be rejected do nothing, and
    // the next async twin raises the rejection; later launches raise it themselves
    loading.add(loaded.promise().then((errors) => (this.loadFailure = failure(errors as readonly WgslMessage[])), () => undefined));
  }

  /** the WGSL compiler's errors, as they are, beside the lines they name */
  private rejected(errors: readonly WgslMessage[]): LaunchError {
    const lines = this.code.split("\n");
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
    if (this.loadFailure) throw this.loadFailure;
    if (cooperative) throw new LaunchError(`${this.host.where} cannot launch kernel '${this.info.name}' cooperatively (grid-wide sync)`);
    this.checkLimits(dims);
    const bindings = this.bindings(args);
    const overrides = this.overrides(dims);
    const key = JSON.stringify(overrides);
    const { channel } = this.host;
    if (!this.pipelines.has(key)) {
      const made = channel.request({ op: "pipeline", module: this.module, entryPoint: this.wgsl.entryPoint, overrides });
      if (channel.canBlock) this.failing(() => made.wait(), `creating the pipeline of kernel '${this.info.name}' for block (${dims.block.join(", ")})`);
      this.pipelines.add(key);
    }
    channel.post({ op: "dispatch", module: this.module, entryPoint: this.wgsl.entryPoint, overrides, params: this.params(args), bindings, grid: dims.grid });
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
    // a WGSL array has at least one element
    if (this.wgsl.dynamicShared) o.DYNAMIC_SHARED_WORDS = Math.max(1, Math.ceil(dims.sharedMemBytes / 4));
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
  private checkStorageBuffers(): void {
    const storage = this.wgsl.arrays.length + 1;
    const most = this.host.facts.limits.maxStorageBuffersPerShaderStage ?? 0;
    if (storage > most) {
      throw new LaunchError(`kernel '${this.info.name}' binds ${storage} storage buffers (${this.wgsl.arrays.length} arrays and its status words), more than ${this.host.where} allows (maxStorageBuffersPerShaderStage ${most}): pass fewer arrays`);
    }
  }

  /** [binding, buffer id] of the status words and of each array, checked against the adapter's binding limits */
  private bindings(args: readonly KernelArg[]): [number, number][] {
    const { facts, where } = this.host;
    const name = `kernel '${this.info.name}'`;
    const maxBinding = facts.limits.maxStorageBufferBindingSize ?? Infinity;
    const out: [number, number][] = [[1, this.status]];
    const bound = new Map<number, { param: string; written: boolean }>();
    for (const a of this.wgsl.arrays) {
      const arg = args[a.arg] as ArrayArg;
      const param = this.info.params[a.arg]?.name ?? arg.name;
      if (arg.buffer.byteLength > maxBinding) {
        throw new LaunchError(`${name}: array '${param}' lives in a buffer of ${arg.buffer.byteLength} bytes, more than ${where} binds (maxStorageBufferBindingSize ${maxBinding})`);
      }
      const id = this.host.bufferId(arg);
      const other = bound.get(id);
      if (other && (other.written || !a.readOnly)) {
        throw new LaunchError(`${name}: arrays '${other.param}' and '${param}' share one buffer, which the kernel writes: ${where} cannot bind a written buffer twice; pass a copy`);
      }
      bound.set(id, { param, written: !a.readOnly });
      out.push([a.binding, id]);
    }
    return out;
  }

  /** the parameter block: each field's 4 bytes from its launch argument */
  private params(args: readonly KernelArg[]): Uint8Array {
    const fields = this.wgsl.params;
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
    return (view, at) => write(view, at, Number(value));
  }
  if (arg.kind !== "array") throw new LaunchError(`parameter field ${f.arg} expects an array argument`);
  const value = f.what === "offset" ? arg.byteOffset / DTYPE_INFO[arg.dtype as ScalarName].size : f.what === "shape" ? arg.shape[f.dim]! : arg.strides[f.dim]!;
  return (view, at) => view.setInt32(at, value, true);
}
