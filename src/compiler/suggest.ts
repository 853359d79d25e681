// "Did you mean …" for unknown names and members in kernels: Numba's spellings
// (snake_case, a few renames) and plain misspellings of a known name.

/** Numba spellings whose numbats name is not their camelCase form. */
const RENAMES: Readonly<Record<string, string>> = {
  "cuda.atomic.compare_and_swap": "cuda.atomic.cas",
  "cuda.const.array": "cuda.const.arrayLike",
  "Math.fabs": "Math.abs",
  "Math.isnan": "Number.isNaN",
  "Math.isfinite": "Number.isFinite",
  "Math.inf": "Infinity",
  "Math.nan": "NaN",
};

/** Host API of the `cuda` namespace: a kernel cannot call it, but a Numba user may try. */
const HOST_API = new Set([
  "cuda.toDevice", "cuda.deviceArray", "cuda.deviceArrayLike", "cuda.pinnedArray", "cuda.mappedArray",
  "cuda.stream", "cuda.defaultStream", "cuda.event", "cuda.eventElapsedTime", "cuda.synchronize",
  "cuda.selectDevice", "cuda.getCurrentDevice", "cuda.detect", "cuda.close", "cuda.isAvailable",
  "cuda.deferCleanup", "cuda.gpus", "cuda.getMemoryInfo", "cuda.jit", "cuda.reduce", "cuda.vectorize",
  "cuda.guvectorize", "cuda.random.createXoroshiro128pStates",
]);

/** `shfl_down_sync` → `shflDownSync`. */
export const camelCase = (s: string) => s.replace(/_+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Optimal string alignment distance (a swap of neighbours counts as one edit). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name closest to `name`: same letters in another case, else a few edits away (none if two tie). */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  const limit = name.length <= 4 ? 1 : 2;
  let best: string | undefined, bestCost = Infinity, tie = false;
  for (const k of new Set(known)) {
    if (k === name) continue;
    // a difference of case only is the best match there is
    const cost = k.toLowerCase() === lower ? 0.5 : editDistance(lower, k.toLowerCase());
    if (cost > limit || cost > bestCost) continue;
    tie = cost === bestCost;
    if (cost < bestCost) { best = k; bestCost = cost; }
  }
  return tie ? undefined : best;
}

/** Our name for a Numba (or Python `math`) spelling: `cuda.shfl_down_sync` → `cuda.shflDownSync`. */
function numbatsSpelling(ns: string, prop: string, members: readonly string[]): string | undefined {
  const full = `${ns}.${prop}`;
  if (RENAMES[full]) return RENAMES[full];
  const camel = `${ns}.${camelCase(prop)}`;
  return camel !== full && (members.includes(camelCase(prop)) || HOST_API.has(camel)) ? camel : undefined;
}

/** The error for `ns.prop` where `ns` has no member `prop`. */
export function unknownMemberMessage(ns: string, prop: string, members: readonly string[]): string {
  const full = `${ns}.${prop}`;
  const ours = HOST_API.has(full) ? full : numbatsSpelling(ns, prop, members);
  if (ours && HOST_API.has(ours)) {
    return `'${full}' is host API${ours === full ? "" : ` (numbats spells it ${ours})`}: kernels cannot call it; call it before the launch and pass the result as an argument`;
  }
  if (ours) return `'${full}' is not supported in kernels; numbats spells it ${ours}`;
  const close = closestName(prop, members);
  return `'${full}' is not supported in kernels${close ? `; did you mean ${ns}.${close}?` : ""}`;
}

/** Python built-ins a Numba kernel calls, and what a numbats kernel writes instead, from the call's arguments' texts. */
const PYTHON_CALLS: Readonly<Record<string, (args: readonly string[]) => string>> = {
  len: ([a = "a"]) => `${a}.length in a kernel (${a}.shape[k] for dimension k of an N-d array)`,
  range: (args) => {
    const [start, stop, step] = args.length >= 2 ? args : ["0", args[0] ?? "n"];
    return `a counted loop in a kernel: for (let i = ${start}; i < ${stop}; ${step ? `i += ${step}` : "i++"})`;
  },
  abs: (args) => `Math.abs(${args.join(", ")}) in a kernel`,
  min: (args) => `Math.min(${args.join(", ")}) in a kernel`,
  max: (args) => `Math.max(${args.join(", ")}) in a kernel`,
  pow: ([x = "x", y = "y"]) => `${x} ** ${y} in a kernel`,
  int: ([a = "x"]) => `Math.trunc(${a}) in a kernel, or int32(${a}) for an int32`,
  float: ([a = "x"]) => `float64(${a}) in a kernel`,
  print: (args) => `console.log(${args.join(", ")}) in a kernel`,
  enumerate: ([a = "a"]) => `for (const [i, v] of ${a}.entries()) in a kernel`,
};

/** For a call of `name` (a name nothing defines) with arguments of these texts: what to write if it is a Python built-in. */
export function pythonCallMessage(name: string, args: readonly string[]): string | undefined {
  const ours = Object.prototype.hasOwnProperty.call(PYTHON_CALLS, name) ? PYTHON_CALLS[name]! : undefined;
  return ours && `unknown name '${name}': Python's ${name}(${args.join(", ")}) is ${ours(args)}`;
}

/** " (did you mean 'x'?)" for an unknown identifier, or "". */
export function didYouMean(name: string, known: Iterable<string>): string {
  const camel = camelCase(name);
  const names = [...known];
  const pick = camel !== name && names.includes(camel) ? camel : closestName(name, names);
  return pick ? ` (did you mean '${pick}'?)` : "";
}
