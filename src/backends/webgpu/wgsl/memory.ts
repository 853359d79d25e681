// Arrays in WGSL: where each of a kernel's arrays lives (a root: a storage binding, a workgroup or
// function array, a module constant) and how an element of it is read, written and updated atomically.
//
// How an element sits in its root's words (`form`):
//  - value:  one element of the register type per array element (atomic<T> when the kernel updates it
//            atomically): 32-bit storage arrays, float16 with shader-f16, shared and local arrays;
//  - bits:   one u32 word per element (two for int64/uint64: low, high), its bits (float32 arrays with atomics: WGSL has no atomic<f32>;
//            bool in shared and local memory; dynamic shared memory, one word array for every dtype);
//  - packed: 8- and 16-bit elements packed in u32 words, as the host lays them out (storage arrays and
//            dynamic shared memory); stores clear and set their bits with atomicAnd/atomicOr, so that
//            neighbours written by other threads are never lost.

import { DTYPE_INFO, type ScalarName } from "../../../dtypes.js";
import { bitsOf, WGSL_SCALAR } from "./scalar.js";

export type RootForm = "value" | "bits" | "packed";

export interface Root {
  /** the kernel's name for it, for messages */
  readonly name: string;
  /** the WGSL variable */
  readonly id: string;
  readonly dtype: ScalarName;
  readonly space: "global" | "shared" | "local" | "const";
  readonly form: RootForm;
  /** its words are atomic<…> (all accesses atomicLoad/atomicStore) */
  readonly atomic: boolean;
}

/**
 * An array value: the roots it may be a view of (`sel`, an i32 local, picks one where there are several:
 * WGSL cannot choose a buffer at run time, so each access tests it) and the view's element offset,
 * extents and strides (WGSL i32 expressions).
 */
export interface ArrayView {
  readonly roots: readonly Root[];
  readonly sel?: string;
  readonly off: string;
  readonly n: readonly string[];
  readonly s: readonly string[];
}

/** How elements of dtype t sit in a root in `space` (see the top of this file). */
export function formOf(t: ScalarName, space: Root["space"], atomic: boolean, words: boolean): RootForm {
  // float16 storage arrays are array<f16> (shader-f16); other 8/16-bit elements of host memory are packed;
  // `words`: the root is u32 words that other arrays view too (dynamic shared memory, a shared buffer)
  const narrow = bitsOf(t) < 32 && !(t === "float16" && space === "global" && !words);
  if (words) return narrow ? "packed" : "bits";
  if (space === "global" && narrow) return "packed";
  return t === "bool" || (atomic && DTYPE_INFO[t].cls === "float") ? "bits" : "value";
}

/** The element type of a root's WGSL array. */
export function wordType(r: Pick<Root, "dtype" | "form" | "atomic">): string {
  const t = r.form === "value" ? WGSL_SCALAR[r.dtype]! : "u32";
  return r.atomic ? `atomic<${t}>` : t;
}

/** bytes per element of a packed dtype (1 or 2) */
const packedBytes = (t: ScalarName) => bitsOf(t) / 8;

/** word `w` (a u32 or i32 index expression) of the root, as a place */
const place = (r: Root, w: string) => `${r.id}[${w}]`;
const loadWord = (r: Root, w: string) => (r.atomic ? `atomicLoad(&${place(r, w)})` : place(r, w));

/** the word index and bit shift of element `i` (a u32 expression) of a packed root */
function packedAt(r: Root, i: string): { word: string; shift: string } {
  return packedBytes(r.dtype) === 1
    ? { word: `(${i} >> 2u)`, shift: `((${i} & 3u) * 8u)` }
    : { word: `(${i} >> 1u)`, shift: `((${i} & 1u) * 16u)` };
}

/** a u32 word's bits as a register value of dtype t */
export function fromBits(t: ScalarName, w: string): string {
  switch (WGSL_SCALAR[t]) {
    case "bool": return `(${w} != 0u)`;
    case "i32": return `bitcast<i32>(${w})`;
    case "f32": return `bitcast<f32>(${w})`;
    default: return w;
  }
}

/** a register value of dtype t as a u32 word's bits */
export function toBits(t: ScalarName, v: string): string {
  switch (WGSL_SCALAR[t]) {
    case "bool": return `select(0u, 1u, ${v})`;
    case "i32": case "f32": return `bitcast<u32>(${v})`;
    default: return v;
  }
}

/** element `i` (an i32 flat index, a plain expression: it may be repeated) of the root, read */
export function readElement(r: Root, i: string): string {
  if (r.form === "value") return loadWord(r, i);
  if (r.form === "bits" && bitsOf(r.dtype) === 64) return `vec2<u32>(${loadWord(r, `2i * (${i})`)}, ${loadWord(r, `2i * (${i}) + 1i`)})`;
  if (r.form === "bits") return fromBits(r.dtype, loadWord(r, i));
  const { word, shift } = packedAt(r, `u32(${i})`);
  const w = loadWord(r, word);
  const n = `${bitsOf(r.dtype)}u`;
  if (r.dtype === "bool") return `(extractBits(${w}, ${shift}, ${n}) != 0u)`;
  if (r.dtype === "float16") return `bitcast<vec2<f16>>(extractBits(${w}, ${shift}, ${n})).x`;
  return WGSL_SCALAR[r.dtype] === "i32" ? `extractBits(bitcast<i32>(${w}), ${shift}, ${n})` : `extractBits(${w}, ${shift}, ${n})`;
}

/** statements writing value `v` (a plain expression) to element `i` (a plain i32 expression) */
export function writeElement(r: Root, i: string, v: string): string[] {
  if (r.form === "value") return [r.atomic ? `atomicStore(&${place(r, i)}, ${v});` : `${place(r, i)} = ${v};`];
  if (r.form === "bits" && bitsOf(r.dtype) === 64) {
    const words: [string, string][] = [[`2i * (${i})`, `${v}.x`], [`2i * (${i}) + 1i`, `${v}.y`]];
    return words.map(([w, x]) => (r.atomic ? `atomicStore(&${place(r, w)}, ${x});` : `${place(r, w)} = ${x};`));
  }
  if (r.form === "bits") {
    const w = toBits(r.dtype, v);
    return [r.atomic ? `atomicStore(&${place(r, i)}, ${w});` : `${place(r, i)} = ${w};`];
  }
  const { word, shift } = packedAt(r, `u32(${i})`);
  const mask = `${2 ** bitsOf(r.dtype) - 1}u`;
  const bits = r.dtype === "bool" ? `select(0u, 1u, ${v})`
    : r.dtype === "float16" ? `(bitcast<u32>(vec2<f16>(${v}, 0.0h)) & ${mask})`
    : `(${WGSL_SCALAR[r.dtype] === "i32" ? `bitcast<u32>(${v})` : v} & ${mask})`;
  return [
    `atomicAnd(&${place(r, word)}, ~(${mask} << ${shift}));`,
    `atomicOr(&${place(r, word)}, ${bits} << ${shift});`,
  ];
}

/** the place of element `i` for an atomic update (value and bits forms) */
export const atomicPlace = (r: Root, i: string): string => `&${place(r, i)}`;
