// sass-census.mjs — how many SASS instructions each kernel of an sm_90 cubin has, in all and in
// each loop, read from the cubin itself: it needs no disassembler (CUDA's compiler packages ship
// ptxas and nvcc without nvdisasm or cuobjdump), only the few encoding facts below.
//
//   node tools/sass-census.mjs kernel.cubin [...]     one line per kernel, one per loop
//   import { census } from "./tools/sass-census.mjs"  [{ kernel, instructions, loops: [{ start, end, instructions }] }]
//
// The facts, measured on ptxas 13.0 output for sm_90 (test/tools/sass-census.test.ts checks them on
// kernels whose loops are known):
// - a kernel's code is the ELF section `.text.<kernel>`, in 16-byte instructions;
// - the low 9 bits of an instruction name its operation whatever its operand form: NOP 0x118, BRA 0x147;
// - a BRA's target is the next instruction's offset plus a signed byte offset whose bits 2..9 are
//   the instruction's bits 16..23 and whose bits 10 and up are its bits 34..81 (sign at 81);
// - a kernel ends with EXIT, a branch to itself and NOPs up to the section's alignment.
// A loop is a backward branch; its body runs from the branch's target to the branch. NOPs (padding)
// and the closing branch to itself are not counted.

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const INSTRUCTION_BYTES = 16;
const OP_MASK = 0x1ffn, NOP = 0x118n, BRA = 0x147n;

/** The `.text.<kernel>` sections of an ELF64 little-endian file, as kernel name -> bytes. */
function textSections(file) {
  const d = readFileSync(file);
  if (d.readUInt32BE(0) !== 0x7f454c46 || d[4] !== 2 || d[5] !== 1) throw new Error(`${file}: not a 64-bit little-endian ELF file (a cubin)`);
  const shoff = Number(d.readBigUInt64LE(0x28)), shentsize = d.readUInt16LE(0x3a), shnum = d.readUInt16LE(0x3c), shstrndx = d.readUInt16LE(0x3e);
  const header = (i) => {
    const at = shoff + i * shentsize;
    return { name: d.readUInt32LE(at), offset: Number(d.readBigUInt64LE(at + 24)), size: Number(d.readBigUInt64LE(at + 32)) };
  };
  const names = header(shstrndx).offset;
  const sections = new Map();
  for (let i = 0; i < shnum; i++) {
    const h = header(i), start = names + h.name, name = d.toString('latin1', start, d.indexOf(0, start));
    if (name.startsWith('.text.')) sections.set(name.slice(6), d.subarray(h.offset, h.offset + h.size));
  }
  return sections;
}

/** The index of the instruction a BRA at index `i` (low and high 64 bits) goes to. */
function branchTarget(i, lo, hi) {
  const high = BigInt.asIntN(48, (lo >> 34n) | ((hi & 0x3ffffn) << 30n));
  const bytes = BigInt((i + 1) * INSTRUCTION_BYTES) + (high << 10n) + (((lo >> 16n) & 0xffn) << 2n);
  if (bytes % BigInt(INSTRUCTION_BYTES) !== 0n) throw new Error(`a branch at 0x${(i * INSTRUCTION_BYTES).toString(16)} reads as going to 0x${bytes.toString(16)}, not an instruction: not sm_90 code as ptxas 13 writes it`);
  return Number(bytes) / INSTRUCTION_BYTES;
}

/** One kernel's instructions (NOPs aside) and loops. */
function kernelCensus(kernel, code) {
  const ops = [], targets = [];
  for (let at = 0; at < code.length; at += INSTRUCTION_BYTES) {
    const lo = code.readBigUInt64LE(at), hi = code.readBigUInt64LE(at + 8), i = at / INSTRUCTION_BYTES;
    const op = lo & OP_MASK;
    ops.push(op);
    const target = op === BRA ? branchTarget(i, lo, hi) : undefined;
    if (target !== undefined && (target < 0 || target >= code.length / INSTRUCTION_BYTES)) throw new Error(`${kernel}: a branch at 0x${at.toString(16)} reads as leaving the kernel: not sm_90 code as ptxas 13 writes it`);
    targets.push(target);
  }
  const counted = (from, to) => ops.slice(from, to + 1).filter((op) => op !== NOP).length;
  const loops = [];
  targets.forEach((t, i) => { if (t !== undefined && t < i) loops.push({ start: t * INSTRUCTION_BYTES, end: i * INSTRUCTION_BYTES, instructions: counted(t, i) }); });
  const closing = targets.findLastIndex((t, i) => t === i);
  return { kernel, instructions: counted(0, ops.length - 1) - (closing >= 0 ? 1 : 0), loops };
}

/** Every kernel of an sm_90 cubin: its instructions and its loops' (backward branches'), in the order of the code. */
export function census(cubin) {
  return [...textSections(cubin)].map(([kernel, code]) => kernelCensus(kernel, code));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.length < 3) {
    console.error('usage: node tools/sass-census.mjs kernel.cubin [...]   (a cubin from ptxas -arch=sm_90 or nvcc -cubin -arch=sm_90)');
    process.exit(2);
  }
  for (const file of process.argv.slice(2)) {
    for (const k of census(file)) {
      console.log(`${k.kernel}: ${k.instructions} instructions`);
      for (const l of k.loops) console.log(`  loop 0x${l.start.toString(16)}..0x${l.end.toString(16)}: ${l.instructions} instructions`);
    }
  }
}
