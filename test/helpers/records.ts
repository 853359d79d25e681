// Record and tuple arguments as the compiled kernel's parameters take them (one per field, one per
// scalar), for running a case's IR directly on the simulator and on ptxsim.

import { RecordArray, isObjectArray, plainObject, viewDType } from "../../src/records.js";
import { DeviceRecordArray, FieldArgument } from "../../src/runtime/records.js";
import { isNDArrayLike } from "../../src/ndarray.js";
import type { HostArg } from "./crosscheck.js";

/**
 * The arguments with each RecordArray replaced by its fields (strided views of its bytes, in field
 * order), each DeviceRecordArray by its FieldArguments, each record (a plain object) by its
 * field values, and each tuple (a plain array of numbers) by its scalars, depth first, as the
 * kernel's parameters list them.
 */
export function recordFields(args: readonly unknown[]): HostArg[] {
  return args.flatMap((a): HostArg[] => {
    if (a instanceof RecordArray) return a.dtype.fields.map((f) => a.field(f.name));
    if (a instanceof DeviceRecordArray) return a.dtype.fields.map((f) => new FieldArgument(a.storage, a.dtype, f, a.shape));
    if (isRecord(a)) return Object.values(a) as HostArg[];
    if (Array.isArray(a) && !isObjectArray(a)) return recordFields(a);
    return [a as HostArg];
  });
}

/** A record argument: a plain object that is no ndarray-style array, or a RecordArray's element view. */
const isRecord = (a: unknown): a is object => (plainObject(a) && !isNDArrayLike(a)) || (typeof a === "object" && a !== null && viewDType(a) !== undefined);
