// C printf formatting for the device `print` intrinsic (console.log in kernels),
// as the GPU's vprintf prints: the CUDA driver formats on the host with the
// C library's printf, so the reference is glibc's.
//
// Conversions d i u x X o c s f F e E g G a A and %%, flags - + space 0 #,
// width and precision (also `*`; for %s they count UTF-8 bytes), length
// modifiers hh h l ll j z t. Integer arguments are reinterpreted at the
// length's width as C does (%u of -1 is 4294967295, %llu of -1n is
// 18446744073709551615). Floats are formatted exactly from their binary value
// with round-half-even, as glibc does.

import { MAX_FIELD, parseFormat, type Conversion, type FormatPiece } from "../compiler/format.js";
import { LaunchError } from "../errors.js";
import { decompose } from "../fp.js";

export type PrintArg = number | bigint | boolean | string;

const parsed = new Map<string, readonly FormatPiece[]>();

export function formatPrintf(fmt: string, args: readonly PrintArg[]): string {
  let pieces = parsed.get(fmt);
  if (!pieces) parsed.set(fmt, (pieces = parseFormat(fmt)));
  let next = 0;
  const take = (): PrintArg => {
    if (next >= args.length) throw new Error(`printf: '${fmt}' reads more than the ${args.length} argument(s) given`);
    return args[next++]!;
  };
  return pieces.map((p) => (typeof p === "string" ? p : formatOne(p, take))).join("");
}

interface Flags { left: boolean; plus: boolean; space: boolean; zero: boolean; alt: boolean }

function formatOne(c: Conversion, take: () => PrintArg): string {
  const f: Flags = { left: c.flags.includes("-"), plus: c.flags.includes("+"), space: c.flags.includes(" "), zero: c.flags.includes("0"), alt: c.flags.includes("#") };
  let width = c.width === "*" ? Number(take()) : c.width ?? 0;
  // a negative `*` width is the `-` flag; a negative `*` precision is none
  if (width < 0) { f.left = true; width = -width; }
  const prec = c.precision === "*" ? Number(take()) : c.precision;
  const precision = prec === undefined || prec < 0 ? undefined : prec;
  const field = Math.max(width, precision ?? 0);
  if (field > MAX_FIELD) throw new LaunchError(`console.log: '${c.text}' was given a field of ${field} characters; a width or precision is at most ${MAX_FIELD}`);
  const body = convert(c.conversion, take(), precision, c.length, f.alt);
  return pad(body, width, f, c.conversion, precision !== undefined);
}

const BITS: Record<string, number> = { hh: 8, h: 16, "": 32, l: 64, ll: 64, z: 64, j: 64, t: 64 };

function toInt(arg: PrintArg, bits: number, signed: boolean): bigint {
  const v = typeof arg === "bigint" ? arg : BigInt(Math.trunc(Number(arg)) || 0);
  return signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

function convert(conv: string, arg: PrintArg, prec: number | undefined, len: string, alt: boolean): string {
  const bits = BITS[len] ?? 64;
  switch (conv) {
    case "d": case "i": return intDigits(toInt(arg, bits, true), 10, prec);
    case "u": return intDigits(toInt(arg, bits, false), 10, prec);
    case "x": case "X": {
      const v = toInt(arg, bits, false);
      const s = (alt && v !== 0n ? "0x" : "") + intDigits(v, 16, prec);
      return conv === "X" ? s.toUpperCase() : s;
    }
    case "o": {
      const s = intDigits(toInt(arg, bits, false), 8, prec);
      return alt && !s.startsWith("0") ? "0" + s : s;
    }
    case "c": return String.fromCharCode(Number(toInt(arg, 8, false)));
    case "s": return prec === undefined ? String(arg) : Buffer.from(String(arg)).subarray(0, prec).toString();
    case "p": case "n": throw new Error(`printf: %${conv} is not supported`);
    default: return floatText(conv, Number(arg), prec, alt);
  }
}

function intDigits(v: bigint, radix: number, prec: number | undefined): string {
  const neg = v < 0n;
  let s = (neg ? -v : v).toString(radix);
  if (prec !== undefined) s = prec === 0 && v === 0n ? "" : s.padStart(prec, "0");
  return neg ? "-" + s : s;
}

function floatText(conv: string, x: number, prec: number | undefined, alt: boolean): string {
  const upper = conv === conv.toUpperCase();
  const neg = x < 0 || Object.is(x, -0);
  let s: string;
  if (Number.isNaN(x)) s = "nan";
  else if (!Number.isFinite(x)) s = (neg ? "-" : "") + "inf";
  else {
    const a = Math.abs(x);
    const c = conv.toLowerCase();
    if (c === "a") s = hexFloat(a, prec, alt);
    else {
      const p = prec ?? 6;
      s = c === "f" ? fixed(a, p) : c === "e" ? expo(a, p) : general(a, p, alt);
      if (alt && p === 0 && c !== "g") s = s.replace(/^(\d+)/, "$1.");
    }
    if (neg) s = "-" + s;
  }
  return upper ? s.toUpperCase() : s;
}

/** round(a * 10^k) to an integer, exactly, ties to even */
function scaledRound(a: number, k: number): bigint {
  const { m, e } = decompose(a);
  let num = m, den = 1n;
  if (e >= 0) num <<= BigInt(e); else den <<= BigInt(-e);
  if (k >= 0) num *= 10n ** BigInt(k); else den *= 10n ** BigInt(-k);
  return divideHalfEven(num, den);
}

function divideHalfEven(num: bigint, den: bigint): bigint {
  const q = num / den, r2 = (num % den) * 2n;
  return r2 > den || (r2 === den && (q & 1n) === 1n) ? q + 1n : q;
}

function fixed(a: number, prec: number): string {
  const digits = scaledRound(a, prec).toString().padStart(prec + 1, "0");
  return prec === 0 ? digits : `${digits.slice(0, -prec)}.${digits.slice(-prec)}`;
}

/** [digit string of prec+1 digits, decimal exponent] */
function mantissaDigits(a: number, prec: number): [string, number] {
  if (a === 0) return ["0".repeat(prec + 1), 0];
  let e = Math.floor(Math.log10(a));
  let n = scaledRound(a, prec - e);
  const limit = 10n ** BigInt(prec + 1);
  if (n >= limit) { e += 1; n = scaledRound(a, prec - e); }
  else if (n < limit / 10n) { e -= 1; n = scaledRound(a, prec - e); }
  return [n.toString(), e];
}

function expo(a: number, prec: number): string {
  const [d, e] = mantissaDigits(a, prec);
  const mant = prec === 0 ? d : `${d[0]}.${d.slice(1)}`;
  return `${mant}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

function general(a: number, prec: number, alt: boolean): string {
  const p = prec === 0 ? 1 : prec;
  const [, x] = mantissaDigits(a, p - 1);
  const s = p > x && x >= -4 ? fixed(a, p - 1 - x) : expo(a, p - 1);
  if (alt) return s.includes(".") ? s : s.replace(/^(\d+)/, "$1.");
  return stripZeros(s);
}

/** %g drops trailing zeros of the fraction (and a bare point) */
function stripZeros(s: string): string {
  const [m, e] = s.split("e") as [string, string | undefined];
  const t = m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m;
  return e === undefined ? t : `${t}e${e}`;
}

const FRACTION_BITS = 52n;
const FRACTION_DIGITS = 13;

/**
 * %a as glibc writes it: `0x1.8p+1`; subnormals keep a leading 0 with exponent
 * -1022; with a precision the hex digits round half to even and a carry
 * makes the leading digit 2 (`%.0a` of 1.5 is `0x2p+0`).
 */
function hexFloat(a: number, prec: number | undefined, alt: boolean): string {
  const { m, e } = decompose(a);
  const exp = a === 0 ? 0 : m >> FRACTION_BITS ? e + 52 : -1022;
  let lead = m >> FRACTION_BITS;
  let frac = (m & ((1n << FRACTION_BITS) - 1n)).toString(16).padStart(FRACTION_DIGITS, "0");
  if (prec === undefined) frac = frac.replace(/0+$/, "");
  else if (prec >= FRACTION_DIGITS) frac = frac.padEnd(prec, "0");
  else {
    const q = divideHalfEven(m, 16n ** BigInt(FRACTION_DIGITS - prec));
    lead = q >> BigInt(4 * prec);
    frac = prec ? (q & ((1n << BigInt(4 * prec)) - 1n)).toString(16).padStart(prec, "0") : "";
  }
  return `0x${lead.toString(16)}${frac || alt ? "." : ""}${frac}p${exp < 0 ? "-" : "+"}${Math.abs(exp)}`;
}

function pad(body: string, width: number, f: Flags, conv: string, hasPrec: boolean): string {
  const numeric = !"sc".includes(conv);
  let sign = "";
  if (numeric && !body.startsWith("-") && "dieEfFgGaA".includes(conv)) sign = f.plus ? "+" : f.space ? " " : "";
  let text = sign + body;
  // C counts bytes: a string's UTF-8 bytes
  const extra = conv === "s" ? Buffer.byteLength(text) - text.length : 0;
  if (text.length + extra >= width) return text;
  if (f.left) return text.padEnd(width - extra);
  const intConv = "diuxXo".includes(conv);
  if (f.zero && numeric && !(intConv && hasPrec) && !/inf|nan/i.test(body)) {
    const head = /^[-+ ]?(0[xX])?/.exec(text)![0];
    text = head + text.slice(head.length).padStart(width - head.length, "0");
    return text;
  }
  return text.padStart(width - extra);
}
