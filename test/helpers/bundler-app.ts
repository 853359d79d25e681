// The program of test/bundlers/app as the bundler matrix (test/product/bundlers.test.ts) and the browser
// test (test/product/browser.test.ts) build it: the build tools of test/bundlers, linked into a fresh
// app, and the host's reference for what the program prints.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { BLOCKS, LARGE, SCALE, TPB, counts, ramp, wave } from "../bundlers/app/inputs.js";
import { ROOT } from "./packed.js";

/** The build tools' shared install (npm ci --prefix test/bundlers). */
export const TOOLS = join(ROOT, "test", "bundlers", "node_modules");

/** Links every package of test/bundlers/node_modules into `modules` that is not there yet (scopes merged). */
export function linkTools(modules: string): void {
  for (const name of readdirSync(TOOLS)) {
    if (name.startsWith(".")) continue;
    if (!name.startsWith("@")) {
      if (!existsSync(join(modules, name))) symlinkSync(join(TOOLS, name), join(modules, name));
      continue;
    }
    mkdirSync(join(modules, name), { recursive: true });
    for (const member of readdirSync(join(TOOLS, name))) {
      if (!existsSync(join(modules, name, member))) symlinkSync(join(TOOLS, name, member), join(modules, name, member));
    }
  }
}

const f32 = Math.fround;

/** What the program must print, computed on the host (Math.exp in float64 for the device's float32 exp: a tolerance there). */
export function checkAgainstHost(lines: readonly string[]): void {
  const got = Object.assign({}, ...lines.map((l) => JSON.parse(l) as object)) as Record<string, unknown>;
  const a = ramp();
  const sums = Array.from({ length: BLOCKS + 1 }, (_, b) => a.subarray(b * TPB, (b + 1) * TPB).reduce((s, x) => s + x, 0));
  assert.deepEqual(got.blockSums, sums);
  const squash = got.squash as { sum: number; head: number[] };
  const logistic = Array.from(wave(), (x) => 1 / (1 + Math.exp(-f32(x * SCALE))));
  assert.ok(Math.abs(squash.sum - logistic.reduce((s, y) => s + y, 0)) < 1e-6 * LARGE, `squash sum ${squash.sum}`);
  squash.head.forEach((y, i) => assert.ok(Math.abs(y - logistic[i]!) <= 2e-7 * logistic[i]!, `squash[${i}] = ${y}, host ${logistic[i]}`));
  assert.deepEqual(got.lastDigits, Array.from(counts().subarray(0, 12), (v) => Math.sign(v) * (Math.abs(v) % 10) || 0));
  assert.equal(got.total, a.reduce((s, x) => s + x, 0));
  assert.equal(got.largest, Math.max(...counts()));
  assert.deepEqual(got.axpy, [f32(1 * 0.5 + 10), f32(2 * 0.25 + 20), f32(3 * 0.125 + 30)]);
}
