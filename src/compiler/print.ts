// Typed IR → readable text, for `kernel.inspectTypes()`: every value is
// shown with its type, statements keep the source's shape.

import { typeToString, type Type } from "../dtypes.js";
import type { Expr, FunctionIR, Stmt } from "./ir.js";

const BINARY_SYMBOL: Record<string, string> = {
  add: "+", sub: "-", mul: "*", div: "/", rem: "%", and: "&", or: "|", xor: "^", shl: "<<", shr: ">>",
  lt: "<", le: "<=", gt: ">", ge: ">=", eq: "==", ne: "!=",
};

const t = (type: Type) => typeToString(type);

export function printExpr(e: Expr): string {
  switch (e.k) {
    case "const": return `${typeof e.value === "bigint" ? `${e.value}n` : String(e.value)}:${e.type}`;
    case "var": return `${e.name}:${t(e.type)}`;
    case "special": return `%${e.reg}`;
    case "unary": return `${e.op}(${printExpr(e.x)}):${e.type}`;
    case "binary": {
      const sym = BINARY_SYMBOL[e.op];
      return sym ? `(${printExpr(e.a)} ${sym} ${printExpr(e.b)}):${e.type}` : `${e.op}(${printExpr(e.a)}, ${printExpr(e.b)}):${e.type}`;
    }
    case "compare": return `(${printExpr(e.a)} ${BINARY_SYMBOL[e.op]} ${printExpr(e.b)})`;
    case "logical": return `(${printExpr(e.a)} ${e.op === "and" ? "&&" : "||"} ${printExpr(e.b)})`;
    case "fma": return `fma(${printExpr(e.a)}, ${printExpr(e.b)}, ${printExpr(e.c)}):${e.type}`;
    case "select": return `(${printExpr(e.cond)} ? ${printExpr(e.a)} : ${printExpr(e.b)}):${t(e.type)}`;
    case "cast": return `${e.type}(${printExpr(e.x)})`;
    case "bitcast": return `bitcast<${e.type}>(${printExpr(e.x)})`;
    case "words": return `f64${e.op}(${e.args.map(printExpr).join(", ")}):${e.type}`;
    case "load": return `${printExpr(e.array)}[${e.index.map(printExpr).join(", ")}]:${e.type}`;
    case "arrayAttr": return `${printExpr(e.array)}.${e.attr}${e.attr === "size" ? "" : `[${e.dim}]`}:int32`;
    case "tuple": return `[${e.items.map(printExpr).join(", ")}]:${t(e.type)}`;
    case "tupleGet": return `${printExpr(e.tuple)}[${e.index}]:${t(e.type)}`;
    case "atomic": {
      const args = [printExpr(e.array), `[${e.index.map(printExpr).join(", ")}]`, ...(e.compare ? [printExpr(e.compare)] : []), printExpr(e.value)];
      return `atomic.${e.op}(${args.join(", ")}):${e.type}`;
    }
    case "intrinsic": return `${e.name}(${e.args.map(printExpr).join(", ")}):${t(e.type)}`;
    case "call": return `${e.fn.name}(${e.args.map(printExpr).join(", ")}):${t(e.type)}`;
    case "external": return `extern ${e.fn.name}(${e.args.map(printExpr).join(", ")}):${t(e.type)}`;
  }
}

function printStmts(body: readonly Stmt[], indent: string, out: string[]): void {
  for (const s of body) {
    switch (s.k) {
      case "let": out.push(`${indent}let ${s.name}: ${t(s.type)}${s.init ? ` = ${printExpr(s.init)}` : ""}`); break;
      case "assign": out.push(`${indent}${s.name} = ${printExpr(s.value)}`); break;
      case "store": out.push(`${indent}${printExpr(s.array)}[${s.index.map(printExpr).join(", ")}] = ${printExpr(s.value)}`); break;
      case "expr": out.push(`${indent}${printExpr(s.expr)}`); break;
      case "alloc": out.push(`${indent}let ${s.name}: ${t(s.type)} = ${s.type.space}.array([${s.shape.join(", ")}])`); break;
      case "break": case "continue": out.push(`${indent}${s.k} ${s.label}`); break;
      case "return": out.push(`${indent}return${s.value ? ` ${printExpr(s.value)}` : ""}`); break;
      case "if":
        out.push(`${indent}if ${printExpr(s.cond)} {`);
        printStmts(s.then, indent + "  ", out);
        if (s.else.length) { out.push(`${indent}} else {`); printStmts(s.else, indent + "  ", out); }
        out.push(`${indent}}`);
        break;
      case "loop": {
        const head = s.cond ? printExpr(s.cond) : "true";
        out.push(`${indent}${s.label}: ${s.testFirst ? `while ${head}` : "do"} {`);
        printStmts(s.body, indent + "  ", out);
        if (s.update.length) { out.push(`${indent}  // update`); printStmts(s.update, indent + "  ", out); }
        out.push(`${indent}}${s.testFirst ? "" : ` while ${head}`}`);
        break;
      }
      case "block":
        out.push(`${indent}${s.label}: {`);
        printStmts(s.body, indent + "  ", out);
        out.push(`${indent}}`);
        break;
    }
  }
}

export function printFunction(fn: FunctionIR): string {
  const out = [`${fn.kind} ${fn.name}(${fn.params.map((p) => `${p.name}: ${t(p.type)}`).join(", ")}): ${t(fn.returnType)} {`];
  for (const c of fn.constArrays) out.push(`  const ${c.name}: ${t(c.type)} = [${c.shape.join("×")} values]`);
  printStmts(fn.body, "  ", out);
  out.push("}");
  return out.join("\n");
}
