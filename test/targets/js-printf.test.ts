// printf formatting of the device print intrinsic; expected strings are glibc printf's output.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { formatPrintf as f } from "../../src/abi/printf.js";
import { compileToIR } from "../../src/compiler/index.js";
import { arrayType } from "../../src/dtypes.js";
import { LaunchError, TypingError } from "../../src/errors.js";
import { PRINTF_ROWS } from "../fixtures/printf/table.js";

const GLIBC = JSON.parse(readFileSync(new URL("../fixtures/printf/glibc.json", import.meta.url), "utf8")) as string[];

test("every row of the glibc table: flags, widths, precisions (also *), lengths, %a, inf/nan, 64-bit", () => {
  PRINTF_ROWS.forEach(([fmt, ...args], row) => assert.equal(f(fmt, args.map((a) => a.v)), GLIBC[row], fmt));
});

test("a format that reads more arguments than given throws", () => {
  assert.throws(() => f("%d %d", [1]), /reads more than the 1 argument/);
});

test("integer conversions, flags, width, precision and length", () => {
  assert.equal(f("%d %i %u %x %X %o %c %%", [-5, 7, -1, 255, 255, 8, 65]), "-5 7 4294967295 ff FF 10 A %");
  assert.equal(f("%5d|%-5d|%05d|%+d|% d|%.3d|%#x|%#o", [42, 42, 42, 42, 42, 7, 255, 8]), "   42|42   |00042|+42| 42|007|0xff|010");
  assert.equal(f("%lld %llu %lu %hhd %hu", [-1n, -1n, -1n, 300, 70000]), "-1 18446744073709551615 18446744073709551615 44 4464");
});

test("float conversions round the exact binary value half-to-even", () => {
  assert.equal(f("%f %e %g %g %g %g", [3.14, 12345.678, 0.0001, 1e-5, 123456789, 100]), "3.140000 1.234568e+04 0.0001 1e-05 1.23457e+08 100");
  assert.equal(f("%.2f %.0f %.0f %10.4f %-10.2e|", [0.125, 2.5, 3.5, -3.14159, 12345]), "0.12 2 4    -3.1416 1.23e+04  |");
  assert.equal(f("%f %f %e %g %5.1f %05.1f", [NaN, -Infinity, 1e300, 1e300, Infinity, -2.25]), "nan -inf 1.000000e+300 1e+300   inf -02.2");
  assert.equal(f("%g %g %#g %g %G", [0, 1e-4, 1, 0.00001234, 1e-10]), "0 0.0001 1.00000 1.234e-05 1E-10");
  assert.equal(f("%f", [1e22]), "10000000000000000000000.000000");
});

test("a field of more than 2^20 characters: a TypingError when the format writes it, a LaunchError when a * argument gives it (-2^31 was a 2 GB line)", () => {
  assert.equal(f("%*d|%.*d", [2 ** 20, 5, 0, 1]).length, 2 ** 20 + 2);
  for (const [fmt, args, field] of [["%-*d|", [-(2 ** 31), 5], 2 ** 31], ["%*d", [2 ** 20 + 1, 5], 2 ** 20 + 1]] as const) {
    assert.throws(() => f(fmt, [...args]), (e: Error) => {
      assert.ok(e instanceof LaunchError, e.stack);
      assert.match(e.message, new RegExp(`^console\\.log: '%-?\\*d' was given a field of ${field} characters; a width or precision is at most 1048576$`));
      return true;
    });
  }
  for (const fmt of ["%2000000000d", "%.1048577f"]) {
    const kernel = new Function(`return (o) => { console.log("${fmt}", o[0]); }`)() as (o: Float32Array) => void;
    assert.throws(() => compileToIR(kernel, [arrayType("float32", 1, "C")]), (e: Error) =>
      e instanceof TypingError && e.message.includes(`console.log format: '${fmt}' asks for a field of`) && e.message.includes("a width or precision is at most 1048576"));
  }
});
