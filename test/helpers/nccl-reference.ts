// What a rank of the NCCL tests (test/fixtures/nccl/rank.ts) must report, from a host reference:
// shared by the stand-in's tests (test/runtime/nccl.test.ts) and the GPU suite's run of real NCCL.
import assert from "node:assert/strict";
import type { ScalarName } from "../../src/dtypes.js";
import type { ReduceOp } from "../../src/runtime/communicator.js";
import { inputOf, REDUCED_DTYPES, REDUCE_OPS, RANK_ELEMENTS as n } from "../fixtures/nccl/data.js";

type Typed = ReturnType<typeof inputOf>;

/** The elementwise reduction of `inputs` in rank order, wrapping as the dtype does. */
export function reduced(dtype: ScalarName, op: ReduceOp, inputs: readonly Typed[]): string[] {
  const out = new (inputs[0]!.constructor as new (n: number) => Typed)(inputs[0]!.length);
  const big = typeof inputs[0]![0] === "bigint";
  const f32 = dtype === "float32";
  for (let i = 0; i < out.length; i++) {
    const cell = (v: number | bigint) => { (out as unknown as (number | bigint)[])[i] = v; return out[i]!; };
    let acc = inputs[0]![i]!;
    for (const a of inputs.slice(1)) {
      const v = a[i]!;
      acc = cell(op === "prod" ? (acc as number) * (v as number) : op === "max" ? (v > acc ? v : acc) : op === "min" ? (v < acc ? v : acc) : (acc as number) + (v as number));
    }
    const n = inputs.length;
    if (op === "avg") acc = cell(big ? (acc as bigint) / BigInt(n) : dtype.startsWith("float") ? (f32 ? Math.fround((acc as number) / n) : (acc as number) / n) : Math.trunc((acc as number) / n));
    cell(acc);
  }
  return Array.from(out, String);
}

/** Asserts rank `rank`'s report (of `worldSize` ranks) against the host reference. */
export function checkRankResults(out: Record<string, string[]>, rank: number, worldSize: number): void {
  const ranks = Array.from({ length: worldSize }, (_, r) => r);
  const inputs = (dtype: ScalarName, size = n) => ranks.map((r) => inputOf(dtype, r, size));
  const strings = (a: Typed) => Array.from(a, String);
  for (const dtype of REDUCED_DTYPES) {
    for (const op of REDUCE_OPS) assert.deepEqual(out[`allReduce ${dtype} ${op}`], reduced(dtype, op, inputs(dtype)), `rank ${rank}: allReduce ${dtype} ${op}`);
  }
  assert.deepEqual(out.broadcast, strings(inputOf("float64", worldSize - 1, n)));
  if (rank === 0) assert.deepEqual(out.reduce, reduced("int32", "max", inputs("int32")));
  assert.deepEqual(out.allGather, ranks.flatMap((r) => strings(inputOf("float32", r, n))));
  assert.deepEqual(out.reduceScatter, reduced("int64", "sum", inputs("int64", n * worldSize).map((a) => a.slice(rank * n, (rank + 1) * n))));
  assert.deepEqual(out.ring, strings(inputOf("int16", (rank + worldSize - 1) % worldSize, n)));
  const refused = out.refused!;
  assert.match(refused[0]!, /^LaunchError: ncclAllReduce: recv has 7 elements; it must have as many elements as send \(6\)$/);
  assert.match(refused[1]!, /^LaunchError: ncclAllReduce: send holds float64, recv float32; both must hold one dtype$/);
  assert.match(refused[2]!, new RegExp(`^LaunchError: ncclAllGather: recv has ${n * worldSize + 1} elements; it must have ${worldSize} × ${n} elements \\(worldSize × send.s\\)$`));
  assert.match(refused[3]!, /^LaunchError: ncclAllReduce: NCCL cannot reduce int16 /);
  assert.match(refused[4]!, new RegExp(`^LaunchError: ncclBroadcast: root ${worldSize} is not a rank \\(0…${worldSize - 1}\\)$`));
  assert.match(refused[5]!, /^LaunchError: ncclSend: buffer must be C-contiguous/);
}
