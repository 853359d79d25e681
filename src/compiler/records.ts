// Records in kernels. A record value is a tuple of its fields (TupleType with `record`), so locals,
// device-function arguments and results need nothing new; an array of records is a tuple of one
// strided array per field, so `a[i].x` is an ordinary load of field array x and `a[i].x = v` a store
// (see src/records.ts for why the fields are ordinary arrays). A kernel's record parameter becomes one
// parameter per field; the host passes them in that order.

import { sameType, tupleType, typeToString, type ArrayType, type TupleType } from "../dtypes.js";
import { recordArrayType, recordOf, isRecordArrayType, isRecordType, recordColumn, type RecordArray, type RecordDType } from "../records.js";
import type { Expr, LoadExpr, Param, Stmt } from "./ir.js";
import type { LoweringContext, Typed, Value } from "./context.js";
import type { Node } from "./parse.js";
import { locOf, memberName } from "./parse.js";
import type { Identifier, MemberExpression } from "acorn";

/** Field `k` of a record or record-array expression (the item itself when `e` is a tuple literal). */
export function fieldOf(e: Expr, k: number): Expr {
  const t = e.type as TupleType;
  if (e.k === "tuple") return e.items[k]!;
  return { k: "tupleGet", type: t.items[k]!, tuple: e, index: k, loc: e.loc };
}

/** The index of field `name` of `rec`, or a TypingError naming the fields. */
function fieldIndex(L: LoweringContext, rec: RecordDType, name: string, n: Node): number {
  const k = rec.fields.findIndex((f) => f.name === name);
  if (k < 0) L.fail(n, `the record has no field '${name}'; its fields are ${rec.fields.map((f) => f.name).join(", ")}`);
  return k;
}

/**
 * A kernel's record parameter `name` as one parameter per field (`name_x`, `name_y`, …), bound by
 * `bind` to the record (array) they make up.
 */
export function recordParams(L: LoweringContext, name: string, type: TupleType, bind: (value: Expr, fields: readonly Param[]) => void): Param[] {
  const rec = recordOf(type)!;
  const params = rec.fields.map((f, k) => ({ name: L.freshName(`${name}_${f.name}`), type: type.items[k]! }));
  bind({ k: "tuple", type, items: params.map((p) => ({ k: "var", type: p.type, name: p.name })) }, params);
  return params;
}

/** `x.prop` of a record (a field) or of an array of records (length, shape, size, ndim, strides: its first field's, in records). */
export function recordMember(L: LoweringContext, e: Expr, prop: string, n: MemberExpression): Value {
  if (isRecordArrayType(e.type) && (prop === "subarray" || prop === "view")) {
    return L.unsupported(n.property, `${prop} of an array of records is not supported: index its records instead (a[begin + k])`);
  }
  if (isRecordArrayType(e.type)) return L.arrayProperty(fieldOf(e, 0), (e.type as TupleType).items[0] as ArrayType, prop, n);
  return { v: "expr", e: fieldOf(e, fieldIndex(L, recordOf(e.type)!, prop, n.property)) };
}

/** The record `a[i…]` of an array of records: a tuple of the fields' loads, the indices evaluated once. */
export function recordElement(L: LoweringContext, e: Expr, index: readonly Expr[], n: Node): Expr {
  const t = e.type as TupleType;
  const once = index.map((ix) => (ix.k === "var" || ix.k === "const" ? ix : L.temporary("index", ix, n)));
  const loads: LoadExpr[] = recordOf(t)!.fields.map((f, k) => ({ k: "load", type: f.dtype, array: fieldOf(e, k), index: once, loc: locOf(n) }));
  return { k: "tuple", type: { ...tupleType(loads.map((l) => l.type)), record: t.record }, items: loads };
}

/**
 * Stores into a record field `a[i].x = v` (`target` is the member expression): `compute` gets the
 * field's current value. A record held in a local is a value, not a reference into the array: its
 * fields are read-only.
 */
export function assignField(L: LoweringContext, target: Node, compute: (current: Typed) => Typed): boolean {
  if (target.type !== "MemberExpression" || target.computed) return false;
  const obj = L.lowerValue(target.object);
  if (obj.v !== "expr" || !isRecordType(obj.e.type)) return false;
  const field = memberName(target);
  const k = fieldIndex(L, recordOf(obj.e.type)!, field, target.property);
  const item = fieldOf(obj.e, k);
  if (item.k !== "load") {
    L.fail(target, `a record in a local is a copy (records are values): write the array's element instead, a[i].${field} = …`);
  }
  storeField(L, item, compute({ e: item }), target);
  return true;
}

function storeField(L: LoweringContext, field: LoadExpr, v: Typed, n: Node): void {
  const at = field.array.type as ArrayType;
  if (at.space === "const") L.fail(n, "constant arrays are read-only");
  L.markWritten(field.array);
  L.emit({ k: "store", array: field.array, index: field.index, value: L.convert(v, at.dtype, n), loc: locOf(n) });
}

/** `a[i] = r`: copies record `r` (of the array's record dtype) into element i, field by field. */
export function assignRecord(L: LoweringContext, element: Expr, compute: (current: Typed) => Typed, n: Node): void {
  const v = compute({ e: element }).e;
  if (!sameType(v.type, element.type)) L.fail(n, `cannot store ${typeToString(v.type)} into an element of type ${typeToString(element.type)}`);
  const value = v.k === "tuple" || v.k === "var" ? v : L.temporary("record", v, n);
  (element as Extract<Expr, { k: "tuple" }>).items.forEach((field, k) => storeField(L, field as LoadExpr, { e: fieldOf(value, k) }, n));
}

/** `p = r` for a record local `p` (whose current value is `cur`): `r` must be a record of the same dtype. */
export function assignRecordLocal(L: LoweringContext, name: string, cur: Expr, compute: (current: Typed) => Typed, n: Identifier): Stmt {
  const v = compute({ e: cur }).e;
  if (!sameType(v.type, cur.type)) L.fail(n, `cannot assign ${typeToString(v.type)} to '${n.name}', a ${typeToString(cur.type)}`);
  return { k: "assign", name, value: v, loc: locOf(n) };
}

/** A local or shared array of records: one array per field (`name_x`, …), as a record array. */
export function allocateRecords(L: LoweringContext, space: "shared" | "local", rec: RecordDType, shape: number[], name: string, n: Node): Expr {
  // dynamic shared arrays all start at offset 0: the fields would overlap
  if (shape.includes(0)) L.fail(n, "a shared array of records needs a fixed size (dynamic shared memory holds scalars)");
  const items = rec.fields.map((f) => {
    const v = L.allocate(space, f.dtype, shape, `${name}_${f.name}`, n);
    return (v as Extract<Value, { v: "expr" }>).e;
  });
  return { k: "tuple", type: { ...tupleType(items.map((e) => e.type)), record: rec }, items };
}

/** A host record array from `env` in constant memory: one constant array per field, as a record array. */
export function constRecords(L: LoweringContext, name: string, records: RecordArray): Expr {
  const items = records.dtype.fields.map((f) => {
    const data = recordColumn(records, f.name);
    return L.constArray(`${name}_${f.name}`, data, { data, dtype: f.dtype, shape: [records.length] });
  });
  const type: TupleType = { ...recordArrayType(records.dtype, 1, "C", "const"), items: items.map((e) => e.type) };
  return { k: "tuple", type, items };
}
