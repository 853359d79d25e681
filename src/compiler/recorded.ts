// A function's source as a build step recorded it, before minifiers and instrumenters rewrote the text
// that `fn.toString()` returns: numbats' build plugin (numbats/plugin, numbats/babel) attaches it to
// each function passed to cuda.jit / cuda.reduce / cuda.vectorize / cuda.guvectorize, and numbats' own
// build to its math library. The compiler reads the recorded text when there is one, else the
// function's own text.

/** The property (a registered symbol, the same in every copy of numbats) that holds a function's record. */
export const RECORDED_SOURCE = Symbol.for("numbats.source");

/** What a build step records of a function. */
export interface RecordedSource {
  /**
   * The function's text as the compiler parses it: JavaScript, with a TypeScript file's types
   * replaced by spaces so that every line and column is where it is in `file`.
   */
  readonly source: string;
  /** The name the function has in its file (its own, or the name it is bound to), if any. */
  readonly name?: string;
  /** The original file, relative to the directory the build ran in (or absolute outside it). */
  readonly file: string;
  /** 1-based line and 0-based column in `file` of the text's first character. */
  readonly line: number;
  readonly column: number;
  /**
   * What the function's free names denote, read when the function compiles (a module's bindings may
   * not be initialised when cuda.jit is called): the module-level bindings and imports it uses, by
   * the names the source spells. Renaming by a minifier renames the values here too.
   */
  readonly names?: () => Readonly<Record<string, unknown>>;
}

/** A function's record, when a build step made one (a malformed record is ignored: the function's own text is used). */
export function recordedSource(fn: Function): RecordedSource | undefined {
  const r = (fn as unknown as { [RECORDED_SOURCE]?: unknown })[RECORDED_SOURCE];
  if (typeof r !== "object" || r === null) return undefined;
  const { source, file, line, column } = r as Partial<RecordedSource>;
  return typeof source === "string" && typeof file === "string" && Number.isInteger(line) && Number.isInteger(column) ? (r as RecordedSource) : undefined;
}

/** The text the compiler parses for `fn`: its recorded source, else `fn.toString()`. */
export const functionText = (fn: Function): string => recordedSource(fn)?.source ?? fn.toString();

/** The name of `fn` in its source: the recorded name, else `fn.name` (which a minifier may have changed). */
export const functionName = (fn: Function): string => recordedSource(fn)?.name ?? fn.name;

/** Each recorded function's free names, read once they could all be read. */
const namesRead = new WeakMap<Function, Readonly<Record<string, unknown>>>();

/**
 * What the free names of `fn` denote, by the names its recorded source spells (empty when nothing was
 * recorded). A binding the module has not initialised yet (a kernel compiled eagerly above the device
 * function it calls) makes the whole read fail: nothing is known then, and the next compile reads again.
 */
export function recordedNames(fn: Function): Readonly<Record<string, unknown>> {
  let names = namesRead.get(fn);
  if (names) return names;
  const read = recordedSource(fn)?.names;
  if (typeof read !== "function") return {};
  try {
    names = read();
  } catch {
    return {};
  }
  if (typeof names !== "object" || names === null) return {};
  namesRead.set(fn, names);
  return names;
}

/** Marks numbats' `cuda` namespace object, so that a recorded name bound to it (under any spelling) is the built-in `cuda`. */
export const BUILTIN_NAMESPACE = Symbol.for("numbats.builtinNamespace");
