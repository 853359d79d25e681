// link.mjs — fakecuda's stand-in for the driver's linker (cuLink*): PTX inputs merged into one PTX
// module that ptxsim runs, wrapped in a fakecuda-private "linked image" that cuModuleLoadData(Ex) takes.
//
// A real linker compiles each PTX input to relocatable SASS and resolves symbols between them; here
// the inputs' texts are concatenated under one header, and each `.extern .func` declaration that
// another input defines (`.visible`/`.weak .func`) becomes a declaration with the definition's
// linkage (a prototype before the call, as nvcc writes one; two linkages of one symbol are an error).
// Externs the JIT itself provides (vprintf, malloc, free, __assertfail) stay declared. Anything else
// left undefined fails as the real JIT does: "Unresolved extern function".

/** The first line of a linked image: a text header, so the image stays a C string (NUL-free). */
export const IMAGE_MAGIC = '\x7ffakecuda linked image 1\n';

/** Functions the driver's JIT resolves itself (system calls); ptxsim implements each. */
const SYSTEM_FUNCTIONS = new Set(['vprintf', 'malloc', 'free', '__assertfail']);

/** Wraps linked PTX as the image cuLinkComplete returns. */
export function wrapImage(ptx) { return IMAGE_MAGIC + ptx; }

/** The PTX inside a linked image, or undefined when `text` is not one. */
export function unwrapImage(text) { return text.startsWith(IMAGE_MAGIC) ? text.slice(IMAGE_MAGIC.length) : undefined; }

// `.extern .func (ret) name (params) ;` — parameters are `.param` declarations, never nested parentheses
const EXTERN_FUNC = /\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$]*)\s*(?:\([^)]*\))?\s*;/g;
const DEFINED_FUNC = /\.(visible|weak)\s+\.func\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$]*)/g;
const HEADER_LINE = /^\s*\.(version|target|address_size)\s+([^\n/]*?)\s*(?:\/\/.*)?$/gm;

/** `.version`, `.target`, `.address_size` of one module, and its text without them. */
function splitHeader(text) {
  const header = {};
  const body = text.replace(HEADER_LINE, (_, key, value) => { header[key] ??= value; return ''; });
  return { header, body };
}

const versionNumber = (v) => { const [major, minor] = String(v).split('.').map(Number); return major * 100 + (minor || 0); };
const smNumber = (t) => Number(/sm_(\d+)/.exec(t || '')?.[1] ?? 0);

/**
 * Links PTX inputs ([{ name, text }]) into one module: { ptx } or, when a function stays
 * undefined or is defined twice, { log } (the linker's error log).
 */
export function linkPtx(inputs) {
  const modules = inputs.map(({ name, text }) => ({ name, ...splitHeader(text) }));
  const definedIn = new Map();
  const errors = [];
  for (const m of modules) {
    // a set: nvcc declares a function before it defines it, both `.visible`
    for (const [fn, linkage] of new Map([...m.body.matchAll(DEFINED_FUNC)].map(d => [d[2], d[1]]))) {
      if (definedIn.has(fn)) errors.push(`error   : Multiple definition of '${fn}' in '${m.name}', first defined in '${definedIn.get(fn).module}'`);
      else definedIn.set(fn, { module: m.name, linkage });
    }
  }
  const unresolved = new Set();
  const bodies = modules.map((m) => m.body.replace(EXTERN_FUNC, (decl, fn) => {
    const def = definedIn.get(fn);
    if (def) return decl.replace(/^\.extern/, `.${def.linkage}`);
    if (!SYSTEM_FUNCTIONS.has(fn)) unresolved.add(fn);
    return decl;
  }));
  for (const fn of unresolved) errors.push(`ptxas fatal   : Unresolved extern function '${fn}'`);
  if (errors.length) return { log: errors.join('\n') };
  const version = modules.map(m => m.header.version).filter(Boolean).sort((a, b) => versionNumber(b) - versionNumber(a))[0] ?? '8.0';
  const target = modules.map(m => m.header.target).filter(Boolean).sort((a, b) => smNumber(b) - smNumber(a))[0] ?? 'sm_90';
  const parts = bodies.map((b, i) => `// ---- link input '${modules[i].name}'\n${b.trim()}\n`);
  return { ptx: `.version ${version}\n.target ${target}\n.address_size 64\n\n${parts.join('\n')}` };
}
