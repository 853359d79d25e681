// The ```ts blocks of a markdown file, grouped into the programs the docs test type-checks: a block
// right after a line `<!-- continued -->` belongs to the program of the ts block before it.

/** A piece of a checked unit: where its first line sits in the markdown file. */
export interface Segment { readonly doc: string; readonly line: number; readonly code: string }

/** One program to type-check: a ts block and the `<!-- continued -->` blocks after it. */
export type Unit = Segment[];

export const CONTINUED = "<!-- continued -->";

/** The ```ts blocks of one markdown text, grouped into units. */
export function extractUnits(doc: string, markdown: string): Unit[] {
  const lines = markdown.split("\n");
  const units: Unit[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${doc}:${i + 1}: a code block that is never closed`);
    if (open[1] === "ts" || open[1] === "typescript") {
      const segment: Segment = { doc, line: i + 2, code: lines.slice(i + 1, end).join("\n") };
      const previous = lines.slice(0, i).reverse().find((l) => l.trim() !== "");
      if (previous?.trim() === CONTINUED) {
        if (units.length === 0) throw new Error(`${doc}:${i + 1}: ${CONTINUED} before the file's first ts block`);
        units[units.length - 1]!.push(segment);
      } else {
        units.push([segment]);
      }
    }
    i = end;
  }
  return units;
}
