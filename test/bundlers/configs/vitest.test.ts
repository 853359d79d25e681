// The program under vitest: each result line is appended to the file MATRIX_OUT names.
import { appendFileSync } from "node:fs";
import { test } from "vitest";
import { results } from "./program.js";

test("the program's results", () => {
  results((line) => appendFileSync(process.env.MATRIX_OUT!, `${line}\n`));
});
