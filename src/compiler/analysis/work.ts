// How much one thread of a kernel does, roughly: the simulator sizes its launches' chunks by it.

import type { Stmt } from "../ir.js";

/** an estimate of one thread's work: statements, those inside loops counted 16 times per level */
export function threadWork(body: readonly Stmt[]): number {
  let w = 0;
  for (const s of body) {
    w += 1;
    if (s.k === "if") w += threadWork(s.then) + threadWork(s.else);
    else if (s.k === "loop") w += 16 * (threadWork(s.body) + threadWork(s.update));
    else if (s.k === "block") w += threadWork(s.body);
  }
  return w;
}
