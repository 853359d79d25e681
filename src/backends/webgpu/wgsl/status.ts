// What a launch left in the status buffer (layout.ts), read back on the host: the first throw or
// `debug` fault, and console.log's records formatted with C printf and put in the order the simulator
// prints them (blocks in order; in a block, the code between two barriers of every thread in turn;
// a thread's own lines in the order it printed them).

import { formatPrintf, type PrintArg } from "../../../abi/printf.js";
import { FAULT_ASSERT, FAULT_BOUNDS, PRINT_HEADER, printArgWords, STATUS_TAIL, STATUS_WORDS, type WgslKernel } from "./layout.js";

export interface StatusReport {
  /** a `throw`: its site (the index of its string in the kernel's strings) and the thrower */
  readonly thrown?: { readonly site: number; readonly block: readonly number[]; readonly thread: readonly number[] };
  /** a failed `debug` check (bounds or assertion): the message of its LaunchError, without the kernel's source position */
  readonly fault?: { readonly message: string; readonly access?: number; readonly block: readonly number[]; readonly thread: readonly number[] };
  /** the printed lines, in the simulator's order (split at newlines, as stdout shows them) */
  readonly lines: string[];
  /** print records dropped for want of room */
  readonly dropped: number;
}

interface Record_ {
  readonly key: readonly number[];
  readonly text: string;
  /** an assertion's message (PrintSite.assertion), not printed */
  readonly assertion: boolean;
}

/** the words of the record at `at` (from the buffer's start), formatted */
function formatRecord(kernel: WgslKernel, strings: readonly string[], words: Uint32Array, at: number): Record_ {
  const site = kernel.prints[words[at]!]!;
  const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer), i32 = new Int32Array(f32.buffer);
  let next = at + PRINT_HEADER;
  const args = site.args.map((kind): PrintArg => {
    if (typeof kind === "object") return "string" in kind ? strings[kind.string]! : kind.value;
    if (kind === "i64" || kind === "u64") {
      const bits = BigInt(words[next]!) | (BigInt(words[next + 1]!) << 32n);
      next += 2;
      return kind === "i64" ? BigInt.asIntN(64, bits) : bits;
    }
    u32[0] = words[next++]!;
    return kind === "f32" ? f32[0]! : kind === "i32" ? i32[0]! : u32[0]!;
  });
  return { key: [words[at + 1]!, words[at + 2]!, words[at + 3]!, words[at + 4]!], text: formatPrintf(strings[site.format]!, args), assertion: site.assertion === true };
}

/** the length in words of the record at `at` */
const recordWords = (kernel: WgslKernel, words: Uint32Array, at: number) =>
  PRINT_HEADER + kernel.prints[words[at]!]!.args.reduce((n, a) => n + printArgWords(a), 0);

export function decodeStatus(kernel: WgslKernel, strings: readonly string[], words: Uint32Array): StatusReport {
  const end = STATUS_WORDS.printStart + kernel.printWords;
  const used = Math.min(words[STATUS_WORDS.printCursor]!, kernel.printWords);
  const records: Record_[] = [];
  for (let at = STATUS_WORDS.printStart; at < STATUS_WORDS.printStart + used;) {
    if (words[at]! >= kernel.prints.length) break; // a reservation past the end, never written
    const len = recordWords(kernel, words, at);
    if (at + len > end) break;
    records.push(formatRecord(kernel, strings, words, at));
    at += len;
  }
  records.sort((a, b) => compareKeys(a.key, b.key));
  const block = [...words.subarray(STATUS_WORDS.block, STATUS_WORDS.block + 3)];
  const thread = [...words.subarray(STATUS_WORDS.thread, STATUS_WORDS.thread + 3)];
  const code = words[STATUS_WORDS.thrown]!;
  // the lines as stdout shows them: a record without a newline continues the line
  const lines = records.filter((r) => !r.assertion).map((r) => r.text).join("").split("\n");
  if (lines.at(-1) === "") lines.pop();
  const report = { lines, dropped: words[end + STATUS_TAIL.dropped] ?? 0 };
  if (code === 0) return report;
  if (code & FAULT_BOUNDS) {
    const access = (code & ~FAULT_BOUNDS) >>> 0;
    const a = kernel.accesses[access];
    const i32 = new Int32Array(words.buffer, words.byteOffset, words.length);
    const ndim = Math.min(3, a?.ndim ?? 3);
    const index = [...i32.subarray(end + STATUS_TAIL.index, end + STATUS_TAIL.index + ndim)];
    const shape = [...i32.subarray(end + STATUS_TAIL.shape, end + STATUS_TAIL.shape + ndim)];
    const message = `index out of bounds: ${a?.array ?? "an array"}[${index.join(", ")}] with shape [${shape.join(", ")}] in thread (${thread.join(", ")}) of block (${block.join(", ")})`;
    return { ...report, fault: { message, access, block, thread } };
  }
  if (code & FAULT_ASSERT) {
    const at = (code & ~FAULT_ASSERT) >>> 0;
    const message = at === 0x3fffffff ? "assertion failed (its message did not fit in the print buffer)" : formatRecord(kernel, strings, words, STATUS_WORDS.printStart + at).text.replace(/\n$/, "");
    return { ...report, fault: { message, block, thread } };
  }
  return { ...report, thrown: { site: code - 1, block, thread } };
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k]! - b[k]!;
  return 0;
}
