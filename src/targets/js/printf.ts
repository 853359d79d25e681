// C printf formatting for the device `print` intrinsic (console.log in kernels).
//
// Conversions d i u x X o c s f F e E g G %, flags - + space 0 #, width,
// precision and length modifiers hh h l ll (z j t L accepted). Integer
// arguments are reinterpreted at the length's width as C does (%u of -1 is
// 4294967295, %llu of -1n is 18446744073709551615). Floats are formatted
// exactly from their binary value with round-half-even, as glibc does.

import { decompose } from "./fp.js";

export type PrintArg = number | bigint | boolean;

const SPEC = /%([-+ 0#]*)(\d+)?(?:\.(\d*))?(hh|h|ll|l|z|j|t|L)?([diuxXocsfFeEgG%])/g;

export function formatPrintf(fmt: string, args: readonly PrintArg[]): string {
  let next = 0;
  return fmt.replace(SPEC, (_m, flags: string, width?: string, prec?: string, len?: string, conv?: string) => {
    if (conv === "%") return "%";
    const arg = args[next++] ?? 0;
    const f = { left: flags.includes("-"), plus: flags.includes("+"), space: flags.includes(" "), zero: flags.includes("0"), alt: flags.includes("#") };
    const precision = prec === undefined ? undefined : Number(prec || "0");
    const body = convert(conv!, arg, precision, len ?? "", f.alt);
    return pad(body, Number(width ?? 0), f, conv!, precision !== undefined);
  });
}

interface Flags { left: boolean; plus: boolean; space: boolean; zero: boolean; alt: boolean }

const BITS: Record<string, number> = { hh: 8, h: 16, "": 32, l: 64, ll: 64, z: 64, j: 64, t: 64, L: 64 };

function toInt(arg: PrintArg, bits: number, signed: boolean): bigint {
  const v = typeof arg === "bigint" ? arg : BigInt(Math.trunc(Number(arg)) || 0);
  return signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

function convert(conv: string, arg: PrintArg, prec: number | undefined, len: string, alt: boolean): string {
  const bits = BITS[len]!;
  switch (conv) {
    case "d": case "i": return intDigits(toInt(arg, bits, true), 10, prec);
    case "u": return intDigits(toInt(arg, bits, false), 10, prec);
    case "x": case "X": {
      const v = toInt(arg, bits, false);
      const s = (alt && v !== 0n ? "0x" : "") + intDigits(v, 16, prec);
      return conv === "X" ? s.toUpperCase() : s;
    }
    case "o": return (alt ? "0" : "") + intDigits(toInt(arg, bits, false), 8, prec);
    case "c": return String.fromCharCode(Number(toInt(arg, 8, false)));
    case "s": return prec === undefined ? String(arg) : String(arg).slice(0, prec);
    default: return floatText(conv, Number(arg), prec ?? 6, alt);
  }
}

function intDigits(v: bigint, radix: number, prec: number | undefined): string {
  const neg = v < 0n;
  let s = (neg ? -v : v).toString(radix);
  if (prec !== undefined) s = prec === 0 && v === 0n ? "" : s.padStart(prec, "0");
  return neg ? "-" + s : s;
}

function floatText(conv: string, x: number, prec: number, alt: boolean): string {
  const upper = conv === "F" || conv === "E" || conv === "G";
  const neg = x < 0 || Object.is(x, -0);
  let s: string;
  if (Number.isNaN(x)) s = "nan";
  else if (!Number.isFinite(x)) s = (neg ? "-" : "") + "inf";
  else {
    const a = Math.abs(x);
    const c = conv.toLowerCase();
    s = c === "f" ? fixed(a, prec) : c === "e" ? expo(a, prec) : general(a, prec, alt);
    if (alt && prec === 0 && c !== "g" && !s.includes(".")) s = s.replace(/^(\d+)/, "$1.");
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
  return alt ? s : stripZeros(s);
}

/** %g drops trailing zeros of the fraction (and a bare point) */
function stripZeros(s: string): string {
  const [m, e] = s.split("e") as [string, string | undefined];
  const t = m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m;
  return e === undefined ? t : `${t}e${e}`;
}

function pad(body: string, width: number, f: Flags, conv: string, hasPrec: boolean): string {
  const numeric = !"sc".includes(conv);
  let sign = "";
  if (numeric && !body.startsWith("-") && "dieEfFgG".includes(conv)) sign = f.plus ? "+" : f.space ? " " : "";
  let text = sign + body;
  if (text.length >= width) return text;
  if (f.left) return text.padEnd(width);
  const intConv = "diuxXo".includes(conv);
  if (f.zero && numeric && !(intConv && hasPrec) && !/inf|nan/.test(body)) {
    const head = /^[-+ ]?(0[xX])?/.exec(text)![0];
    text = head + text.slice(head.length).padStart(width - head.length, "0");
    return text;
  }
  return text.padStart(width);
}
