// C printf format strings (console.log in kernels). The front end parses a
// format to check and convert each argument; the simulator parses it to
// format as the GPU's vprintf does.

/** One `%…` conversion specification. */
export interface Conversion {
  readonly flags: string;
  /** "*": the width is read from an int argument before the value */
  readonly width?: number | "*";
  /** "*": read from an int argument; "." alone is 0 */
  readonly precision?: number | "*";
  /** "", hh, h, l, ll, j, z, t or L */
  readonly length: string;
  /** d i o u x X c s f F e E g G a A p n */
  readonly conversion: string;
  /** as written, e.g. "%-8.3lf" */
  readonly text: string;
}

/** Literal text (a `%%` already turned into `%`) or a conversion. */
export type FormatPiece = string | Conversion;

const SPEC = /%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|j|z|t|L)?([diouxXcsfFeEgGaApn])/y;

export class FormatError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

/**
 * The largest field width or precision (a `*` one is checked when the kernel prints): the simulator
 * builds each line in memory, where a GPU would print that many characters of padding or digits.
 */
export const MAX_FIELD = 1 << 20;

const number = (s: string | undefined): number | "*" | undefined => (s === undefined || s === "*" ? s : Number(s || "0"));

function conversionAt(fmt: string, at: number): Conversion | undefined {
  SPEC.lastIndex = at;
  const m = SPEC.exec(fmt);
  if (!m) return undefined;
  return { flags: m[1]!, width: number(m[2]), precision: number(m[3]), length: m[4] ?? "", conversion: m[5]!, text: m[0] };
}

/** The pieces of `fmt`; a `%` that starts no conversion (nor `%%`) is a FormatError. */
export function parseFormat(fmt: string): FormatPiece[] {
  const pieces: FormatPiece[] = [];
  let text = "";
  let i = 0;
  for (let pct = fmt.indexOf("%"); pct >= 0; pct = fmt.indexOf("%", i)) {
    text += fmt.slice(i, pct);
    if (fmt[pct + 1] === "%") {
      text += "%";
      i = pct + 2;
      continue;
    }
    const c = conversionAt(fmt, pct);
    if (!c) throw new FormatError(`'${fmt.slice(pct, pct + 2)}' starts no printf conversion (a literal % is written %%)`, pct);
    const field = [c.width, c.precision].find((k) => typeof k === "number" && k > MAX_FIELD);
    if (field !== undefined) throw new FormatError(`'${c.text}' asks for a field of ${field} characters; a width or precision is at most ${MAX_FIELD}`, pct);
    if (text) pieces.push(text);
    pieces.push(c);
    text = "";
    i = pct + c.text.length;
  }
  text += fmt.slice(i);
  if (text) pieces.push(text);
  return pieces;
}

/** Whether `fmt` has a conversion that reads an argument (`%%` does not). */
export function hasConversion(fmt: string): boolean {
  for (let pct = fmt.indexOf("%"); pct >= 0; pct = fmt.indexOf("%", pct + 1)) {
    if (fmt[pct + 1] === "%") pct++;
    else if (conversionAt(fmt, pct)) return true;
  }
  return false;
}

/** A conversion's text, as a format would spell it. */
export function conversionText(c: Omit<Conversion, "text">): string {
  const precision = c.precision === undefined ? "" : `.${c.precision}`;
  return `%${c.flags}${c.width ?? ""}${precision}${c.length}${c.conversion}`;
}
