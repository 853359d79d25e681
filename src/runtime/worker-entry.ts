// How numbats starts a worker thread on one of its own modules: the compiled .js beside the caller (under
// dist/), or, when the caller runs from src/ under tsx, the .ts module with tsx registered in the worker
// first (a worker does not inherit its parent's loader hooks).

/** `new Worker(spec, { eval })`'s arguments for the module `name` (no extension) beside `from` (the caller's import.meta.url). */
export function workerEntry(from: string, name: string): { spec: string | URL; eval: boolean } {
  if (!from.endsWith(".ts")) return { spec: new URL(`./${name}.js`, from), eval: false };
  const entry = new URL(`./${name}.ts`, from).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  return { spec: `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`, eval: true };
}
