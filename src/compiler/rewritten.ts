// Kernels whose text a build step rewrote so that numbats cannot be sure of what it means: a minifier
// renamed the names it uses (`cuda` became `ct`, a device function `Ae`), or a coverage tool put
// counters into it. Such a kernel is a CompileError that says so and names the build plugin that
// records the original text (numbats/plugin, numbats/babel): never a guess at what a renamed name was.
// What a minifier prints without renaming (commas between statements, `!0`, `c && f()`) is certain
// and compiles (statements.ts); only the messages of names nothing defines come from here.

import type { SourceProblem } from "../errors.js";
import type { ParsedFunction } from "./parse.js";
import { childNodes, type Node } from "./parse.js";

/** What a coverage tool writes into the functions it instruments, and its name for the message. */
const COVERAGE_COUNTERS: readonly { readonly pattern: RegExp; readonly what: string }[] = [
  // istanbul (babel-plugin-istanbul: jest --coverage, nyc, vitest's istanbul provider): `cov_2f8k9s().s[3]++`
  { pattern: /\bcov_\w+\(\)\s*\.\s*[sfb]\s*\[/, what: "istanbul's counters cov_…().s[…]++" },
  // istanbul before 2.0 and the tools built on it: `__cov_Xx8….s['1']++`
  { pattern: /\b__cov_\w+\s*\.\s*[sfb]\s*\[/, what: "istanbul's counters __cov_…" },
  { pattern: /\b__coverage__\b/, what: "a coverage tool's __coverage__ counters" },
];

/** The problem of a text that holds a coverage tool's counters, at the first, if it does. */
export function coverageProblem(source: string): SourceProblem | undefined {
  for (const c of COVERAGE_COUNTERS) {
    const m = c.pattern.exec(source);
    if (!m) continue;
    const before = source.slice(0, m.index).split("\n");
    return { message: rewrittenAdvice("instrumented", c.what), line: before.length, column: before[before.length - 1]!.length };
  }
  return undefined;
}

/** The build in which this program runs, as far as it can be told, for the one plugin to name. */
declare const __webpack_require__: unknown;
function currentBuild(): "vitest" | "jest" | "webpack" | undefined {
  const env = typeof process === "object" ? process.env : {};
  if (env.VITEST) return "vitest";
  if (env.JEST_WORKER_ID) return "jest";
  // webpack (and Rspack) replace this name in the modules they bundle: numbats is inside such a bundle
  if (typeof __webpack_require__ === "function") return "webpack";
  return undefined;
}

const PLUGIN_FOR: Readonly<Record<NonNullable<ReturnType<typeof currentBuild>>, string>> = {
  vitest: "add numbats' Vite plugin to vitest's config: plugins: [numbats.vite()], with `import numbats from \"numbats/plugin\"`",
  jest: "add \"numbats/babel\" to the plugins of the Babel config jest uses (babel.config.js: plugins: [\"numbats/babel\"])",
  webpack: "add numbats' plugin to the webpack (or Rspack) config: plugins: [numbats.webpack()] (numbats.rspack()), with `const numbats = require(\"numbats/plugin\")`",
};

const ANY_PLUGIN = "add numbats' build plugin, which records each kernel's original text: numbats.esbuild() / .vite() / .rollup() / .webpack() / .rspack() from \"numbats/plugin\", or \"numbats/babel\" for jest";

/**
 * The advice for a kernel whose text was rewritten: what was seen (`why`), and the plugin to add, for
 * the build this program runs in when that can be told (vitest, jest, a webpack bundle), else each.
 */
export function rewrittenAdvice(kind: "minified" | "instrumented", why: string): string {
  const build = currentBuild();
  const what = kind === "minified" ? "looks minified or renamed by a bundler" : "was instrumented by a coverage tool";
  const tail = kind === "instrumented" ? " (V8's coverage, c8 or vitest's v8 provider, leaves the text as it is)" : "";
  return `this kernel's source ${what} (${why}), so numbats cannot be sure of what it means: ${build ? PLUGIN_FOR[build] : ANY_PLUGIN}${tail}`;
}

/** The shape of minified text, computed once per parsed function. */
const minifiedShape = new WeakMap<ParsedFunction, boolean>();

/**
 * Whether a function's text has a minifier's shape: one line of 40 characters or more, with no space
 * after a `,` or `;`, or with every name it declares 1 or 2 characters long (where it declares two or
 * more). The shape only chooses the advice for a name nothing defines: the compile fails either way.
 */
export function looksMinified(parsed: ParsedFunction): boolean {
  let shape = minifiedShape.get(parsed);
  if (shape === undefined) {
    const text = parsed.source.trim();
    const names = declaredNames(parsed);
    shape = text.length >= 40 && !text.includes("\n") && (!/[,;] /.test(text) || (names.length >= 2 && names.every((n) => n.length <= 2)));
    minifiedShape.set(parsed, shape);
  }
  return shape;
}

/** The names a function declares: its parameters and its locals. */
function declaredNames(parsed: ParsedFunction): string[] {
  const names: string[] = [];
  const bind = (p: Node): void => {
    if (p.type === "Identifier") names.push(p.name);
    if (p.type === "ArrayPattern") for (const e of p.elements) if (e) bind(e);
  };
  const visit = (n: Node): void => {
    if (n.type === "VariableDeclarator") bind(n.id);
    for (const [, c] of childNodes(n)) visit(c);
  };
  parsed.params.forEach(bind);
  visit(parsed.body);
  return names;
}
