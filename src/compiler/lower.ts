// AST → typed IR for one function specialised to argument types: the compile session (work kept
// across functions and compiles) and the driver that lowers a function round by round.
//
// Typing happens while lowering (docs/language.md): every expression gets its dtype,
// implicit conversions become `cast` nodes, locals get one type each. A
// `let`'s type is the join of every value assigned to it: when an assignment
// needs a wider type than the local has, the lowering records the join and
// runs again. The lowering itself is in lowerer.ts (state), statements.ts, expressions.ts and
// operators.ts; host values in host-values.ts.

import { typeToString, type Type } from "../dtypes.js";
import { CompileError, TypingError, type SourceProblem } from "../errors.js";
import { checkSyntax } from "./check.js";
import type { DeviceFunctionLike, DeviceResolver, LoweringSession } from "./context.js";
import { moduleOf } from "./host-values.js";
import type { CompileOptions, FunctionIR } from "./ir.js";
import { Lowerer } from "./lowerer.js";
import { noWidening } from "./lowering.js";
import { parseFunction, type ParsedFunction } from "./parse.js";
import { coverageProblem } from "./rewritten.js";

export { DEVICE_FUNCTION, asDeviceFunction, moduleOf } from "./host-values.js";
export type { DeviceFunctionLike, DeviceLookup, DeviceResolver } from "./context.js";

const noDeviceFunctions: DeviceResolver = () => undefined;

// Work that does not depend on the kernel being compiled is kept across compiles: parsed
// functions, and device functions that come with their own env (the math library, the random
// generators, env-passed helpers), lowered per argument types and options.
const parsedFunctions = new WeakMap<Function, ParsedFunction>();
const loweredWithEnv = new WeakMap<Function, Map<string, FunctionIR>>();
const envIds = new WeakMap<object, number>();
let nextId = 0;
const envId = (env: object) => {
  let id = envIds.get(env);
  if (id === undefined) { id = nextId++; envIds.set(env, id); }
  return id;
};

/** Shared by every function lowered for one kernel compile. */
export class CompileSession implements LoweringSession {
  private readonly specialisations = new Map<Function, Map<string, FunctionIR>>();
  private readonly active: Function[] = [];
  private readonly optionsKey: string;
  constructor(
    readonly options: CompileOptions,
    /** device functions visible by name (after locals and env, before built-ins: docs/language.md) */
    readonly resolveDevice: DeviceResolver = noDeviceFunctions,
  ) {
    this.optionsKey = JSON.stringify(options);
  }

  /** A number unique in the process (names of constant arrays, which cached functions share). */
  uniqueId(): number { return nextId++; }

  parse(fn: Function, name: string): ParsedFunction {
    let p = parsedFunctions.get(fn);
    if (!p) { p = parseFunction(fn, name); parsedFunctions.set(fn, p); }
    return p;
  }

  /** Lowers a device function for the given argument types, once per signature. */
  specialise(dev: DeviceFunctionLike, argTypes: readonly Type[], callLoc: () => never): FunctionIR {
    const types = argTypes.map(typeToString).join(",");
    // functions that bring their own env lower the same in every kernel; others may name
    // device functions that are registered later, so they are kept for this compile only
    const cache = dev.env ? loweredWithEnv : undefined;
    const key = dev.env ? `${envId(dev.env)}|${this.optionsKey}|${types}` : types;
    let byFn = (cache ?? this.specialisations).get(dev.fn);
    if (!byFn) { byFn = new Map(); (cache ?? this.specialisations).set(dev.fn, byFn); }
    const hit = byFn.get(key);
    if (hit) return hit;
    if (this.active.includes(dev.fn)) callLoc();
    this.active.push(dev.fn);
    try {
      const ir = lowerFunction(this, this.parse(dev.fn, dev.name), argTypes, dev.env ?? {}, "device", dev.module ?? moduleOf(dev.fn));
      byFn.set(key, ir);
      return ir;
    } finally {
      this.active.pop();
    }
  }
}

/** Parses, checks and lowers a function; throws CompileError / TypingError with every problem found. */
export function lowerFunction(
  session: CompileSession, parsed: ParsedFunction, argTypes: readonly Type[],
  env: Readonly<Record<string, unknown>>, kind: "kernel" | "device", module: string | undefined,
): FunctionIR {
  const instrumented = coverageProblem(parsed.source);
  if (instrumented) throw new CompileError(parsed.name, parsed.source, [instrumented], parsed.origin);
  const syntax = checkSyntax(parsed.params, parsed.body);
  if (syntax.length) {
    const problems = [...syntax, ...unknownNames(session, parsed, argTypes, env, kind, module, syntax)];
    throw new CompileError(parsed.name, parsed.source, problems.sort((p, q) => p.line - q.line || p.column - q.column), parsed.origin);
  }
  if (argTypes.length !== parsed.params.length) {
    throw new TypingError(parsed.name, parsed.source, [{
      message: `'${parsed.name}' takes ${parsed.params.length} argument(s) but was given ${argTypes.length}`, line: 1, column: 0,
    }], parsed.origin);
  }
  const widening = noWidening();
  for (let round = 0; round < 16; round++) {
    const lowerer = new Lowerer(session, parsed, argTypes, env, kind, module, widening);
    const ir = lowerer.run();
    if (!lowerer.widened) {
      // every problem, in source order; the first one decides the error's class
      const problems = [...lowerer.problems].sort((p, q) => p.line - q.line || p.column - q.column);
      if (problems[0]) throw new (problems[0].kind === "compile" ? CompileError : TypingError)(parsed.name, parsed.source, problems, parsed.origin);
      return ir;
    }
  }
  throw new TypingError(parsed.name, parsed.source, [{ message: "local variable types did not settle", line: 1, column: 0 }], parsed.origin);
}

/**
 * With syntax problems, the unknown names a lowering finds too (so one compile reports both); its
 * other complaints are left out, as they may be about the unsupported constructs themselves.
 */
function unknownNames(
  session: CompileSession, parsed: ParsedFunction, argTypes: readonly Type[],
  env: Readonly<Record<string, unknown>>, kind: "kernel" | "device", module: string | undefined, syntax: readonly SourceProblem[],
): SourceProblem[] {
  if (argTypes.length !== parsed.params.length) return [];
  const lowerer = new Lowerer(session, parsed, argTypes, env, kind, module, noWidening());
  try {
    lowerer.run();
  } catch {
    return []; // lowering code that assumes well-formed syntax
  }
  const reported = new Set(syntax.map((p) => `${p.line}:${p.column}`));
  return lowerer.problems.filter((p) => p.message.startsWith("unknown name") && !reported.has(`${p.line}:${p.column}`))
    .map(({ message, line, column }) => ({ message, line, column }));
}
