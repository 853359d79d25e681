// The symbol table of an ELF64 little-endian file (a cubin is one): the .symtab section and the string
// table its sh_link names, read from the section headers. Enough to tell which functions a linked cubin
// defines, with no dependency and no toolkit.

/** One symbol of .symtab. */
export interface ElfSymbol {
  readonly name: string;
  readonly binding: "local" | "global" | "weak" | number;
  readonly type: "notype" | "object" | "func" | "section" | "file" | number;
  /** whether it is defined in this file (its section index is not SHN_UNDEF) */
  readonly defined: boolean;
  /** the name of the section it is defined in ("" where undefined or special) */
  readonly section: string;
  readonly size: number;
}

const BINDINGS = ["local", "global", "weak"] as const;
const TYPES = ["notype", "object", "func", "section", "file"] as const;
const SHT_SYMTAB = 2;
const SYMBOL_BYTES = 24;
const SHN_UNDEF = 0, SHN_LORESERVE = 0xff00;

interface SectionHeader { readonly name: number; readonly type: number; readonly offset: number; readonly size: number; readonly link: number }

/** The symbols of `file`'s .symtab; throws where `file` is not a little-endian ELF64 with one. */
export function elfSymbols(file: Uint8Array): ElfSymbol[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (view.getUint32(0) !== 0x7f454c46) throw new Error("not an ELF file (no \\x7fELF magic)");
  if (file[4] !== 2 || file[5] !== 1) throw new Error(`not a little-endian ELF64 file (class ${file[4]}, data ${file[5]})`);
  const shoff = Number(view.getBigUint64(0x28, true));
  const shentsize = view.getUint16(0x3a, true), shnum = view.getUint16(0x3c, true), shstrndx = view.getUint16(0x3e, true);
  const sections: SectionHeader[] = Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * shentsize;
    return {
      name: view.getUint32(at, true),
      type: view.getUint32(at + 4, true),
      offset: Number(view.getBigUint64(at + 24, true)),
      size: Number(view.getBigUint64(at + 32, true)),
      link: view.getUint32(at + 40, true),
    };
  });
  const text = (table: SectionHeader, at: number): string => {
    const start = table.offset + at;
    const end = file.indexOf(0, start);
    return new TextDecoder().decode(file.subarray(start, end < 0 ? table.offset + table.size : end));
  };
  const sectionName = (i: number): string => (i > SHN_UNDEF && i < SHN_LORESERVE && sections[i] ? text(sections[shstrndx]!, sections[i]!.name) : "");
  const symtab = sections.find((s) => s.type === SHT_SYMTAB);
  if (!symtab) throw new Error("the ELF file has no .symtab");
  const strtab = sections[symtab.link]!;
  return Array.from({ length: symtab.size / SYMBOL_BYTES }, (_, i) => {
    const at = symtab.offset + i * SYMBOL_BYTES;
    const info = view.getUint8(at + 4), shndx = view.getUint16(at + 6, true);
    return {
      name: text(strtab, view.getUint32(at, true)),
      binding: BINDINGS[info >> 4] ?? info >> 4,
      type: TYPES[info & 0xf] ?? info & 0xf,
      defined: shndx !== SHN_UNDEF,
      section: sectionName(shndx),
      size: Number(view.getBigUint64(at + 16, true)),
    };
  });
}
