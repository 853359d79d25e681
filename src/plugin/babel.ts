// numbats/babel: numbats' build plugin for Babel (jest, whose babel-jest adds coverage instrumentation
// after the user's plugins). It records each function passed to numbats as numbats/plugin does, from
// the file's original text, before the other plugins change the tree.

import { RECORD_HELPER, findKernels } from "./record.js";

/** The parts of a Babel node the plugin reads. */
interface BabelNode {
  readonly type: string;
  readonly start?: number | null;
  readonly end?: number | null;
  shorthand?: boolean;
}

/** The parts of a Babel path the plugin uses. */
interface BabelPath {
  readonly node: BabelNode;
  readonly parent: BabelNode;
  readonly key: string | number | null;
  replaceWith(node: BabelNode): unknown;
  pushContainer(key: "body", node: BabelNode): unknown;
  traverse(visitor: { enter(path: BabelPath): void }): void;
}

/** The parts of Babel's plugin API the plugin uses. */
export interface BabelApi {
  readonly types: { callExpression(callee: BabelNode, args: BabelNode[]): BabelNode };
  readonly template: { expression: { ast(code: string): BabelNode }; statement: { ast(code: string): BabelNode } };
}

/** The parts of Babel's plugin state (its PluginPass) the plugin reads. */
interface BabelState {
  readonly filename?: string | undefined;
  readonly cwd: string;
  readonly file: { readonly code: string };
}

/** Options of `numbats/babel`. */
export interface NumbatsBabelOptions {
  /** the directory recorded file names are relative to; default: Babel's working directory */
  readonly root?: string;
}

/** The expressions a site may be: what a module passes to numbats is a function, or a name for one. */
const SITE_TYPES = new Set(["FunctionExpression", "ArrowFunctionExpression", "Identifier"]);

/**
 * The Babel plugin: `plugins: ["numbats/babel"]` in a Babel config (babel.config.js, or babel-jest's).
 * It works in Program's enter, before plugins that follow it (and babel-plugin-istanbul) rewrite kernels.
 */
export default function numbatsBabel(api: BabelApi, options: NumbatsBabelOptions = {}) {
  return {
    name: "numbats",
    visitor: {
      Program(path: BabelPath, state: BabelState): void {
        const file = state.filename;
        if (file === undefined || /[\\/]node_modules[\\/]/.test(file)) return;
        const { sites, appended, warnings } = findKernels(state.file.code, file, options.root ?? state.cwd);
        for (const w of warnings) console.warn(w);
        for (const statement of appended) path.pushContainer("body", api.template.statement.ast(statement));
        // the sites by their offsets in the file, which the nodes Babel parsed from it carry
        const pending = new Map(sites.map((s) => [`${s.start}:${s.end}`, s]));
        if (pending.size === 0) return;
        path.traverse({
          enter(p) {
            const site = pending.get(`${p.node.start}:${p.node.end}`);
            if (!site || !SITE_TYPES.has(p.node.type) || p.key === "key") return;
            pending.delete(`${p.node.start}:${p.node.end}`);
            if (site.shorthand) p.parent.shorthand = false;
            p.replaceWith(api.types.callExpression(api.template.expression.ast(RECORD_HELPER), [p.node, api.template.expression.ast(`(${site.record})`)]));
          },
        });
      },
    },
  };
}
