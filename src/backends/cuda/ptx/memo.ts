// The emitter's memo: pure expressions (and address computations) are emitted once per structured scope
// and reused while no variable they read is assigned (a scoped CSE at emission time; cse.ts merges what
// is left across scopes after emission).

import type { Expr } from "../../../compiler/ir.js";
import { exprChildren } from "../../../compiler/walk.js";

/** memoised values of one structured scope, and which of their keys read each variable */
interface MemoScope { readonly values: Map<string, unknown>; readonly readers: Map<string, Set<string>> }
const memoScope = (): MemoScope => ({ values: new Map(), readers: new Map() });

export class ValueMemo {
  private readonly scopes: MemoScope[] = [memoScope()];
  private readonly keys = new WeakMap<Expr, string | null>();
  /** variables assigned in each enclosing loop, outermost first */
  readonly loopVars: Set<string>[] = [];

  pushScope(): void { this.scopes.push(memoScope()); }

  popScope(): void { this.scopes.pop(); }

  memoized<T>(key: string | null, deps: () => ReadonlySet<string>, compute: () => T): T {
    if (key === null) return compute();
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const values = this.scopes[i]!.values;
      if (values.has(key)) return values.get(key) as T;
    }
    const value = compute();
    const scope = this.scopes[this.scopes.length - 1]!;
    scope.values.set(key, value);
    for (const d of deps()) {
      let keys = scope.readers.get(d);
      if (!keys) scope.readers.set(d, (keys = new Set()));
      keys.add(key);
    }
    return value;
  }

  /** forgets what was memoised about `names` (a key left in another variable's readers only costs a recompute) */
  invalidate(names: Iterable<string>): void {
    for (const name of names) {
      for (const scope of this.scopes) {
        const keys = scope.readers.get(name);
        if (!keys) continue;
        for (const k of keys) scope.values.delete(k);
        scope.readers.delete(name);
      }
    }
  }

  /** structural key of a pure expression, null if it reads memory or has effects */
  key(e: Expr): string | null {
    const cached = this.keys.get(e);
    if (cached !== undefined) return cached;
    const kids = (xs: readonly Expr[]) => {
      const ks = xs.map((x) => this.key(x));
      return ks.some((k) => k === null) ? null : ks.join(",");
    };
    const wrap = (head: string, xs: readonly Expr[]) => { const k = kids(xs); return k === null ? null : `${head}(${k})`; };
    let k: string | null;
    switch (e.k) {
      case "const": k = `c:${e.type}:${String(e.value)}`; break;
      case "var": k = `v:${e.name}`; break;
      case "special": k = `s:${e.reg}`; break;
      case "unary": k = wrap(`u:${e.op}:${e.type}`, [e.x]); break;
      case "binary": k = wrap(`b:${e.op}:${e.type}`, [e.a, e.b]); break;
      case "fma": k = wrap(`fma:${e.type}`, [e.a, e.b, e.c]); break;
      case "compare": k = wrap(`cmp:${e.op}`, [e.a, e.b]); break;
      case "cast": k = wrap(`cast:${e.type}`, [e.x]); break;
      case "bitcast": k = wrap(`bitcast:${e.type}`, [e.x]); break;
      case "words": k = wrap(`w:${e.op}`, e.args); break;
      case "arrayAttr": k = wrap(`attr:${e.attr}:${e.dim}`, [e.array]); break;
      case "tupleGet": k = wrap(`tg:${e.index}`, [e.tuple]); break;
      case "tuple": k = wrap("tuple", e.items); break;
      default: k = null;
    }
    this.keys.set(e, k);
    return k;
  }

  /** the variables `es` read */
  deps(es: readonly Expr[]): Set<string> {
    const out = new Set<string>();
    const visit = (e: Expr): void => {
      if (e.k === "var") out.add(e.name);
      else for (const c of exprChildren(e)) visit(c);
    };
    es.forEach(visit);
    return out;
  }

  /** how deep in the loop nest the value of `es` changes (0: invariant in every enclosing loop) */
  rank(es: readonly Expr[]): number {
    if (es.some((e) => this.key(e) === null)) return this.loopVars.length + 1;
    const d = this.deps(es);
    for (let i = this.loopVars.length - 1; i >= 0; i--) if ([...d].some((v) => this.loopVars[i]!.has(v))) return i + 1;
    return 0;
  }
}
