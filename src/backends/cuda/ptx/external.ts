// Calls of device functions compiled elsewhere (cuda.declareDevice): the module declares the symbol
// `.extern .func` and the kernel calls it with the ABI nvcc gives an `extern "C" __device__` function
// (nvcc -rdc), so the driver's linker resolves it against code nvcc or NVRTC compiled:
//   .extern .func (.param .b32 func_retval0) twice(.param .b32 twice_param_0);
//   { .param .b32 param0; st.param.f32 [param0], %f1; .param .b32 retval0;
//     call.uni (retval0), twice, (param0); ld.param.f32 %f2, [retval0]; }
// Integers narrower than 32 bits and bool pass as 32-bit words, as C promotes them; a pointer (an array's
// first element) as a 64-bit generic address.

import { isArrayType, isScalarType, type ArrayType, type ScalarName, type Type } from "../../../dtypes.js";
import type { ExternalCallExpr, ExternalFunction } from "../../../compiler/ir.js";
import { InternalCompilerError } from "../../../errors.js";
import type { EmitContext } from "./context.js";
import { imm, type Reg, type RegClass } from "./insts.js";
import { convert } from "./scalar.js";
import { PTX_SCALAR } from "./types.js";
import { SPACES_32BIT, type ArrayVal, type PtxValue } from "./values.js";

/** How a value of one type crosses the call: the `.param` width, the register class and the st/ld.param type. */
interface Passing { readonly param: "b32" | "b64"; readonly reg: RegClass; readonly ty: string }

const WORD: Passing = { param: "b32", reg: "b32", ty: "b32" };
const PASSING: Readonly<Partial<Record<ScalarName, Passing>>> = {
  bool: WORD, int8: WORD, int16: WORD, int32: WORD, uint8: WORD, uint16: WORD, uint32: WORD,
  int64: { param: "b64", reg: "b64", ty: "b64" }, uint64: { param: "b64", reg: "b64", ty: "b64" },
  float32: { param: "b32", reg: "f32", ty: "f32" }, float64: { param: "b64", reg: "f64", ty: "f64" },
};
const POINTER: Passing = { param: "b64", reg: "b64", ty: "b64" };

function passing(t: Type): Passing {
  if (isArrayType(t)) return POINTER;
  const p = isScalarType(t) ? PASSING[t] : undefined;
  if (!p) throw new InternalCompilerError(`PTX target: no calling convention for a value of type ${JSON.stringify(t)}`);
  return p;
}

/** `.extern .func (.param .b32 func_retval0) name(.param .b32 name_param_0, …);` */
function declaration(fn: ExternalFunction): string {
  const ret = fn.returnType === "void" ? "" : `(.param .${passing(fn.returnType).param} func_retval0) `;
  const params = fn.params.map((t, i) => `.param .${passing(t).param} ${fn.name}_param_${i}`);
  return `.extern .func ${ret}${fn.name}(${params.join(", ")});`;
}

/** An array argument: the generic address of its first element. */
function pointer(cx: EmitContext, a: ArrayVal): Reg {
  const t: ArrayType = a.type;
  if (SPACES_32BIT.has(t.space)) return cx.out("b64", `cvta.${t.space}.u64`, cx.out("b64", "cvt.u64.u32", a.base));
  return cx.out("b64", `cvta.${t.space === "const" ? "const" : "global"}.u64`, a.base);
}

/** A scalar argument in the register its `.param` is stored from. */
function word(cx: EmitContext, t: ScalarName, e: ExternalCallExpr["args"][number]): Reg {
  const v = cx.scalar(e);
  if (t === "bool") return cx.out("b32", "selp.u32", imm(1), imm(0), cx.toReg(v, "pred"));
  return cx.toReg(v, PASSING[t]!.reg);
}

/** The call; its result as the IR holds a value of the declared type. */
export function externalCall(cx: EmitContext, e: ExternalCallExpr): PtxValue {
  const { fn } = e;
  const decl = declaration(fn);
  if (!cx.moduleDecls.includes(decl)) cx.moduleDecls.push(decl);
  const uses = e.args.map((a) => (isArrayType(a.type) ? pointer(cx, cx.array(a)) : word(cx, a.type as ScalarName, a)));
  const lines = ["\t{", ...e.args.flatMap((a, i) => {
    const p = passing(a.type);
    return [`\t.param .${p.param} param${i};`, `\tst.param.${p.ty} [param${i}], {${i}};`];
  })];
  const args = `(${e.args.map((_, i) => `param${i}`).join(", ")})`;
  if (fn.returnType === "void") {
    cx.cur.push({ k: "raw", uses, text: [...lines, `\tcall.uni ${fn.name}, ${args};`, "\t}"].join("\n") });
    return null;
  }
  const t = fn.returnType as ScalarName, p = passing(t);
  const result = cx.reg(p.reg);
  lines.push(`\t.param .${p.param} retval0;`, `\tcall.uni (retval0), ${fn.name}, ${args};`, `\tld.param.${p.ty} {=0}, [retval0];`, "\t}");
  cx.cur.push({ k: "raw", uses, defs: [result], text: lines.join("\n") });
  // a narrow integer or a bool comes back in a word whose upper bits the callee need not have set
  if (t === "bool") return cx.out("pred", "setp.ne.u32", cx.out("b32", "and.b32", result, imm(255)), imm(0));
  if (PTX_SCALAR[t].width < 32 && p.reg === "b32") return cx.toReg(convert(cx, PTX_SCALAR[t].signed ? "int32" : "uint32", t, result), "b32");
  return result;
}
