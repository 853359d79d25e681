// Runs one kernel case on the webgpu target (NUMBATS_TARGET=webgpu, in a process the test:webgpu
// runner started on one CPU adapter) and compares it with the simulator:
//  1. through the public API, checked against the case's host reference;
//  2. the same inputs on the simulator directly: integers and bytes must be equal, floats within the
//     bounds WGSL allows (FLOAT_BOUND_ULPS), NaN equal to NaN, and a subnormal flushed to zero accepted;
//     printed lines equal, in the same order.
// A case outside the webgpu target's subset must fail to compile with a CompileError naming the target.

import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import type { LaunchDims } from "../../src/abi/backend.js";
import { getBackend } from "../../src/runtime/select.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { createSimBackend } from "../../src/backends/sim/runtime/sim-backend.js";
import { cuda, CompileError, type KernelArgument } from "../../src/index.js";
import { RecordArray } from "../../src/records.js";
import { isNDArrayLike } from "../../src/ndarray.js";
import { argumentTypes, capture, dims3, envArrayContents, envArrayCopies, kernelArgs, type HostArg, type KernelCase } from "./crosscheck.js";

/**
 * How far a float32 result may be from the simulator's, in units in the last place: WGSL lets `/` err
 * by 2.5 ulp and `fma` be unfused, and the math library's functions are built from those operations.
 */
export const FLOAT_BOUND_ULPS = 8;

/** What running a case found: it ran (and how far its floats were from the simulator's), or it is outside the subset. */
export type WebGpuCaseResult = { readonly ran: true; readonly maxUlps: number } | { readonly ran: false; readonly why: string };

const f32Bits = new Uint32Array(1);
const f32View = new Float32Array(f32Bits.buffer);
/** the float32 with these bits' ordinal position (ulps apart = ordinal distance) */
function ordinal(x: number): number {
  f32View[0] = x;
  const b = f32Bits[0]!;
  return b & 0x80000000 ? -(b & 0x7fffffff) : b;
}

/** ulps between two float32 values (0 for two NaNs or a flushed subnormal; a zero of the wrong sign is Infinity). */
export function ulpDistance(got: number, want: number): number {
  if (Number.isNaN(got) || Number.isNaN(want)) return Number.isNaN(got) && Number.isNaN(want) ? 0 : Infinity;
  if (got === 0 && want === 0) return Object.is(got, want) ? 0 : Infinity; // the sign of zero counts
  // a subnormal flushed to zero (WGSL allows it), by the adapter or by the simulator's run
  if (got === 0 && Math.abs(want) < 2 ** -126) return 0;
  if (Math.abs(got) < 2 ** -126 && want === 0) return 0;
  return Math.abs(ordinal(got) - ordinal(want));
}

const viewOf = (a: HostArg): ArrayBufferView | undefined =>
  ArrayBuffer.isView(a) ? a : isNDArrayLike(a) ? a.data : a instanceof RecordArray ? a.bytes : undefined;

/** Compares one array's contents; returns the largest float distance in ulps. */
function compareArray(name: string, got: ArrayBufferView, want: ArrayBufferView): number {
  if (got instanceof Float32Array && want instanceof Float32Array) {
    let worst = 0;
    for (let i = 0; i < got.length; i++) {
      const d = ulpDistance(got[i]!, want[i]!);
      if (d > FLOAT_BOUND_ULPS) assert.fail(`${name}[${i}]: webgpu ${got[i]} and simulator ${want[i]} are ${d} ulps apart (bound ${FLOAT_BOUND_ULPS})`);
      worst = Math.max(worst, d);
    }
    return worst;
  }
  const bytes = (v: ArrayBufferView) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  assert.deepEqual(bytes(got), bytes(want), `${name}: webgpu and simulator differ`);
  return 0;
}

/** Whether `e` is the webgpu target's refusal of a construct outside its subset. */
export function isSubsetError(e: unknown): e is CompileError {
  return e instanceof CompileError && /webgpu/i.test(e.message);
}

export async function runWebGpuCase(c: KernelCase): Promise<WebGpuCaseResult> {
  const args = c.args();
  const envBefore = envArrayContents(c.options?.env);
  const k = cuda.jit(c.kernel, c.options);
  let printed: string[];
  try {
    printed = capture(() => {
      k.configure(c.grid, c.block, undefined, c.sharedMemBytes ?? 0)(...(args as KernelArgument[]));
      cuda.synchronize();
    });
  } catch (e) {
    if (isSubsetError(e)) return { ran: false, why: e.message.split("\n")[0]! };
    throw e;
  }
  c.check(args, printed);
  if (c.approximate) return { ran: true, maxUlps: 0 };

  // the same inputs on the simulator
  const ir = compileToIR(c.kernel, argumentTypes(c, args), { ...c.options, name: c.name, resolveDeviceFunction });
  const dims: LaunchDims = { grid: dims3(c.grid), block: dims3(c.block), sharedMemBytes: c.sharedMemBytes ?? 0 };
  const simArgs = c.args();
  const simEnv = envArrayCopies(ir, envBefore);
  const sim = createSimBackend();
  const simPrinted = capture(() => compileSim(ir).launch(dims, kernelArgs(simArgs, ir, simEnv), sim.defaultStream(), ir.features.gridSync));
  let maxUlps = 0;
  args.forEach((a, i) => {
    const got = viewOf(a);
    if (!got || c.scheduleDependent?.includes(i)) return;
    maxUlps = Math.max(maxUlps, compareArray(`${c.name}: argument ${i}`, got, viewOf(simArgs[i]!)!));
  });
  assert.deepEqual(printed, simPrinted, `${c.name}: printed output differs between webgpu and the simulator`);
  assert.equal(getBackend().name, "webgpu", "the case ran on the webgpu target");
  return { ran: true, maxUlps };
}
