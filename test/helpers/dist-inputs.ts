// The inputs of the collectives tests: each rank's buffer for a dtype, as values (float16 as numbers),
// chosen to wrap integers and to round floats, so a wrong order or arithmetic shows.
import { DTYPE_INFO, type TypedArray } from "../../src/dtypes.js";
import { float16Bits, float16Round } from "../../src/half.js";
import type { NcclDType } from "../../src/distributed/reduce-ops.js";

export type Value = number | bigint;

export function inputOf(dtype: NcclDType, rank: number, n: number): Value[] {
  return Array.from({ length: n }, (_, i): Value => {
    const k = (rank + 1) * 7 + i * 13;
    switch (dtype) {
      case "int8": return ((k * 29) % 256) - 128;
      case "uint8": return (k * 29) % 256;
      case "int32": return (k % 2 ? -1 : 1) * (2 ** 30 + k * 1_000_003);
      case "uint32": return 2 ** 31 + k * 1_000_003;
      case "int64": return BigInt(k % 2 ? -1 : 1) * (2n ** 62n + BigInt(k) * 1_000_000_007n);
      case "uint64": return 2n ** 63n + BigInt(k) * 1_000_000_007n;
      case "float16": return float16Round((k % 5) - 2 + k / 7);
      case "float32": return Math.fround((k % 5) - 2 + k / 3);
      case "float64": return (k % 5) - 2 + k / 3;
    }
  });
}

/** Values → the TypedArray that stores them (float16: its bits). */
export function hostArrayOf(dtype: NcclDType, values: readonly Value[]): TypedArray {
  const a = new DTYPE_INFO[dtype].array(values.length);
  values.forEach((v, i) => { (a as unknown as Value[])[i] = dtype === "float16" ? float16Bits(v as number) : v; });
  return a;
}
