// Calls of device functions compiled elsewhere (cuda.declareDevice): typed by the declared signature, each
// argument converted to its parameter's type as an assignment converts; an array argument must hold the
// parameter's dtype (it passes as a pointer to its first element, which the function may write).

import { isArrayType, signatureToString, typeToString, type Type } from "../dtypes.js";
import type { LoweringContext, Typed } from "./context.js";
import type { ExternalCallExpr, ExternalFunction } from "./ir.js";
import { locOf, type Node } from "./parse.js";

const signatureOf = (fn: ExternalFunction) => `${fn.name}: ${signatureToString({ args: fn.params, ret: fn.returnType })}`;

/** `fn(args…)` from the call's argument nodes. */
export function lowerExternalCall(L: LoweringContext, fn: ExternalFunction, args: readonly Node[], n: Node): ExternalCallExpr {
  if (args.length !== fn.params.length) {
    L.unsupported(n, `'${fn.name}' takes ${fn.params.length} argument(s) (${signatureOf(fn)}, declared with cuda.declareDevice) but is called with ${args.length}`);
  }
  return externalCall(fn, args.map((a, i) => argument(L, fn, i, a.type === "SpreadElement" ? L.unsupported(a, `a spread argument in a call of '${fn.name}'`) : L.lowerExpr(a), a)), n);
}

/** `fn(args…)` from lowered arguments (a built-in calling a device function it was given). */
export function externalCallOf(L: LoweringContext, fn: ExternalFunction, args: readonly Typed[], n: Node): ExternalCallExpr {
  if (args.length !== fn.params.length) L.unsupported(n, `'${fn.name}' takes ${fn.params.length} argument(s) (${signatureOf(fn)}) but is given ${args.length}`);
  return externalCall(fn, args.map((a, i) => argument(L, fn, i, a, n)), n);
}

const externalCall = (fn: ExternalFunction, args: ExternalCallExpr["args"], n: Node): ExternalCallExpr =>
  ({ k: "external", type: fn.returnType, fn, args, loc: locOf(n) });

function argument(L: LoweringContext, fn: ExternalFunction, i: number, v: Typed, n: Node) {
  const want: Type = fn.params[i]!;
  if (!isArrayType(want)) {
    if (isArrayType(v.e.type)) L.fail(n, `argument ${i + 1} of '${fn.name}' is an array; its parameter is ${typeToString(want)} (${signatureOf(fn)})`);
    return L.convert(v, want, n);
  }
  const have = v.e.type;
  if (!isArrayType(have) || have.dtype !== want.dtype || have.complex) {
    L.fail(n, `argument ${i + 1} of '${fn.name}' must be an array of ${want.dtype} (passed as a pointer to its first element); got ${typeToString(have)} (${signatureOf(fn)})`);
  }
  L.markWritten(v.e); // the function may write through the pointer
  return v.e;
}
