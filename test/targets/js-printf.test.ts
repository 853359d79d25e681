// printf formatting of the device print intrinsic; expected strings are glibc printf's output.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { formatPrintf as f } from "../../src/targets/js/printf.js";
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
