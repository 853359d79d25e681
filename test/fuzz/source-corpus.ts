// The kernels the source-robustness fuzzer mutates: every kernel of the tests and examples.
//
//  - The end-to-end cases of test/cases, as they are: their source (as the process holds it), their
//    options (env, fma, …), grid, block and inputs.
//  - Every other kernel written in test/**/*.ts and examples/*.ts, found by reading the files with
//    TypeScript's parser: a function literal whose parameters are all typed arrays, numbers, bigints,
//    booleans or KernelArray1/2<number>, or one passed to `cuda.jit` with a literal signature. Its
//    text is stripped of types (esbuild, as tsx does); its env is what can be known without running
//    the file: the literal part of a `cuda.jit(…, { env })`, the file's top-level numeric constants
//    and the device functions the file makes with `cuda.jit(…, { device: true })`. Inputs are made
//    up from the types (arrays of 128 elements, 16×16 matrices, scalars of 100), 128 threads.
//
// A kernel goes into the corpus only if it compiles as it is (those that need what the file
// computes at run time do not), so the mutants start from working kernels.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { transformSync } from "esbuild";
import ts from "typescript";
import { DTYPE_INFO, parseSignature, type ScalarName, type Type } from "../../src/dtypes.js";
import * as numbats from "../../src/index.js";
import { API_CASES } from "../cases/api.js";
import { COMPLEX_CASES } from "../cases/complex.js";
import { envArrayCases } from "../cases/env-arrays.js";
import { HALF_CASES } from "../cases/half.js";
import { LANGUAGE_CASES } from "../cases/language.js";
import { RECORD_CASES } from "../cases/records.js";
import { rng, type HostArg, type KernelCase } from "../helpers/crosscheck.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** A kernel to mutate: a case, and the file it is written in (its device functions' module). */
export interface CorpusKernel {
  /** where it comes from: "FILE: case name" or "FILE:LINE" */
  readonly name: string;
  readonly file: string;
  readonly kernel: KernelCase;
}

/** The end-to-end cases, each with its file (the env-array cases make DeviceArrays: call after the target is chosen). */
function caseKernels(): CorpusKernel[] {
  const groups: [string, readonly KernelCase[]][] = [
    ["test/cases/language.ts", LANGUAGE_CASES], ["test/cases/api.ts", API_CASES], ["test/cases/records.ts", RECORD_CASES],
    ["test/cases/half.ts", HALF_CASES], ["test/cases/complex.ts", COMPLEX_CASES], ["test/cases/env-arrays.ts", envArrayCases()],
  ];
  return groups.flatMap(([file, cases]) => cases.map((kernel) => ({ name: `${file}: ${kernel.name}`, file: join(root, file), kernel })));
}

// ---------------------------------------------------------------------------
// kernels read from the test files and examples

const TYPED_ARRAYS: Record<string, ScalarName> = {
  Float32Array: "float32", Float64Array: "float64", Int8Array: "int8", Uint8Array: "uint8", Int16Array: "int16",
  Uint16Array: "uint16", Int32Array: "int32", Uint32Array: "uint32", BigInt64Array: "int64", BigUint64Array: "uint64",
};

/** A made-up argument for a parameter's type annotation, or undefined when the annotation is not one we make up. */
function argumentFor(annotation: string, seed: number): HostArg | undefined {
  const dtype = TYPED_ARRAYS[annotation] ?? (annotation === "KernelArray1<number>" ? "float32" : undefined);
  if (dtype) return filled(dtype, 128, seed);
  if (annotation === "KernelArray2<number>") return { data: filled("float32", 256, seed), shape: [16, 16], stride: [16, 1], offset: 0 };
  return ({ number: 100, bigint: 100n, boolean: true } as Record<string, HostArg>)[annotation];
}

/** An argument of a signature's type: the same sizes as argumentFor. */
function argumentOfType(t: Type, seed: number): HostArg | undefined {
  if (typeof t === "string") return t === "bool" ? true : DTYPE_INFO[t as ScalarName]?.cls === "float" ? 0.75 : DTYPE_INFO[t as ScalarName]?.size === 8 ? 100n : 100;
  if (t.kind !== "array" || t.complex || !(t.dtype in DTYPE_INFO)) return undefined;
  if (t.ndim === 1) return filled(t.dtype, 128, seed);
  if (t.ndim === 2) return { data: filled(t.dtype, 256, seed), shape: [16, 16], stride: [16, 1], offset: 0 };
  return undefined;
}

/** Small values of `dtype` (so indices from them stay in range more often than not). */
function filled(dtype: ScalarName, n: number, seed: number): ArrayBufferView {
  const r = rng(seed);
  const info = DTYPE_INFO[dtype];
  const values = Array.from({ length: n }, () => (info.cls === "float" ? Math.round((r() - 0.5) * 64) / 8 : Math.floor(r() * (info.cls === "int" ? 72 : 64)) - (info.cls === "int" ? 8 : 0)));
  const C = info.array as unknown as new (n: number) => { [k: number]: number | bigint } & ArrayBufferView;
  const a = new C(n);
  values.forEach((v, j) => { a[j] = info.size === 8 && info.cls !== "float" ? BigInt(v) : v; });
  return a;
}

/** The JavaScript text of a TypeScript function's text, as tsx would run it. */
function stripTypes(text: string): string {
  const js = transformSync(`(${text})`, { loader: "ts", format: "esm", target: "es2022" }).code.trim();
  return js.replace(/^\(/, "").replace(/\);?$/, "");
}

const DTYPES: Record<string, unknown> = Object.fromEntries(Object.entries(numbats).filter(([k]) => k in DTYPE_INFO));

/** A literal's value for env (numbers, bigints, booleans, dtype names), else undefined. */
function literalValue(e: ts.Expression, constants: Readonly<Record<string, unknown>>): unknown {
  if (ts.isNumericLiteral(e)) return Number(e.text);
  if (ts.isBigIntLiteral(e)) return BigInt(e.text.slice(0, -1));
  if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (e.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken) {
    const v = literalValue(e.operand, constants);
    return typeof v === "number" || typeof v === "bigint" ? -v : undefined;
  }
  if (ts.isIdentifier(e)) return constants[e.text] ?? DTYPES[e.text];
  return undefined;
}

const isJitCall = (n: ts.Node): n is ts.CallExpression =>
  ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === "jit"
  && ts.isIdentifier(n.expression.expression) && n.expression.expression.text === "cuda";

const isFunctionLiteral = (n: ts.Node): n is ts.ArrowFunction | ts.FunctionExpression | ts.FunctionDeclaration =>
  ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isFunctionDeclaration(n);

function optionsOf(call: ts.CallExpression | undefined): Map<string, ts.Expression> {
  const o = call?.arguments[1];
  const props = new Map<string, ts.Expression>();
  if (o && ts.isObjectLiteralExpression(o)) {
    for (const p of o.properties) {
      if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name)) props.set(p.name.text, p.initializer);
      if (ts.isShorthandPropertyAssignment(p)) props.set(p.name.text, p.name);
    }
  }
  return props;
}

/** The file's top-level numeric constants and device functions (`cuda.jit(fn, { device: true })`), by name. */
function fileEnv(file: ts.SourceFile): Record<string, unknown> {
  const env: Record<string, unknown> = {};
  for (const s of file.statements) {
    if (!ts.isVariableStatement(s)) continue;
    for (const d of s.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || !d.initializer) continue;
      const v = literalValue(d.initializer, {});
      if (typeof v === "number" || typeof v === "bigint") env[d.name.text] = v;
      const fn = d.initializer;
      if (isJitCall(fn) && fn.arguments[0] && isFunctionLiteral(fn.arguments[0]) && optionsOf(fn).get("device")?.kind === ts.SyntaxKind.TrueKeyword) {
        const device = new Function(`return (${stripTypes(fn.arguments[0].getText(file))}\n);`)() as Function;
        const own = (fn.arguments[0] as ts.FunctionExpression).name?.text;
        env[d.name.text] = device;
        if (own) env[own] = device;
      }
    }
  }
  return env;
}

/** The kernels written in one file. */
function fileKernels(path: string): CorpusKernel[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const shared = fileEnv(file);
  const found: CorpusKernel[] = [];
  const visit = (n: ts.Node): void => {
    if (isFunctionLiteral(n) && n.body) {
      const kernel = kernelOf(n, file, shared, found.length);
      if (kernel) found.push(kernel);
    }
    ts.forEachChild(n, visit);
  };
  visit(file);
  return found;
}

function kernelOf(fn: ts.ArrowFunction | ts.FunctionExpression | ts.FunctionDeclaration, file: ts.SourceFile, shared: Record<string, unknown>, index: number): CorpusKernel | undefined {
  const call = fn.parent && isJitCall(fn.parent) && fn.parent.arguments[0] === fn ? fn.parent : undefined;
  const options = optionsOf(call);
  if (options.get("device")?.kind === ts.SyntaxKind.TrueKeyword || fn.parameters.length === 0 || fn.asteriskToken
    || fn.modifiers?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword) || !/\bcuda\./.test(fn.body!.getText(file))) return undefined;
  const signature = options.get("signature");
  const sigText = signature && ts.isStringLiteral(signature) ? signature.text
    : signature && ts.isArrayLiteralExpression(signature) && signature.elements[0] && ts.isStringLiteral(signature.elements[0]) ? signature.elements[0].text : undefined;
  let args: (HostArg | undefined)[];
  if (sigText) {
    args = parseSignature(sigText).args.map((t, j) => argumentOfType(t, index * 16 + j));
  } else {
    args = fn.parameters.map((p, j) => (p.type ? argumentFor(p.type.getText(file).replace(/\s+/g, ""), index * 16 + j) : undefined));
  }
  if (args.some((a) => a === undefined)) return undefined;
  const env: Record<string, unknown> = { ...shared };
  const envOption = options.get("env");
  if (envOption && ts.isObjectLiteralExpression(envOption)) {
    for (const p of envOption.properties) {
      const [name, value] = ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) ? [p.name.text, p.initializer] : ts.isShorthandPropertyAssignment(p) ? [p.name.text, p.name] : [];
      const v = value && literalValue(value, shared);
      if (name && v !== undefined) env[name] = v;
    }
  }
  // a declaration's text without `export`: the function alone
  const source = stripTypes(file.text.slice(fn.modifiers?.end ?? fn.getStart(file), fn.end).trim());
  const compiled = new Function(`return (${source}\n);`)() as (...a: never[]) => void;
  const line = file.getLineAndCharacterOfPosition(fn.getStart(file)).line + 1;
  const twoD = args.some((a) => typeof a === "object" && a !== null && "shape" in a);
  const made = args as HostArg[];
  const copy = (a: HostArg): HostArg => (ArrayBuffer.isView(a) ? (a as unknown as { slice(): HostArg }).slice()
    : typeof a === "object" && "data" in a ? { ...a, data: (a.data as unknown as { slice(): HostArg }).slice() } : a);
  const kernel: KernelCase = {
    name: `${relative(root, file.fileName)}:${line}`,
    kernel: compiled,
    options: { env, ...(sigText ? { signature: sigText } : {}) },
    grid: twoD ? [2, 2] : 2, block: twoD ? [8, 8] : 64,
    args: () => made.map(copy),
    check: () => {},
  };
  return { name: kernel.name, file: file.fileName, kernel };
}

/** The .ts files of a folder and its subfolders (not node_modules, not the case files, which come with their inputs). */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" || path === join(root, "test", "cases") ? [] : tsFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Every kernel of the tests and examples, before the check that each compiles (duplicate texts once). */
export function harvestKernels(): CorpusKernel[] {
  const written = [...tsFiles(join(root, "test")), ...tsFiles(join(root, "examples"))].sort().flatMap(fileKernels);
  const seen = new Set<string>();
  return [...caseKernels(), ...written].filter((k) => {
    const text = k.kernel.kernel.toString();
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
}
