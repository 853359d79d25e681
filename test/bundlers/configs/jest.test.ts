// The program under jest: each result line is appended to the file MATRIX_OUT names.
import { appendFileSync } from "node:fs";
import { test } from "@jest/globals";
import { results } from "./program.js";

test("the program's results", () => {
  results((line) => appendFileSync(process.env.MATRIX_OUT!, `${line}\n`));
});
