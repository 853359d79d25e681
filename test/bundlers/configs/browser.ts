// The program's results in a page (browser.html): #output gets the JSON lines, #error what it threw,
// #detect what cuda.detect() printed; then body[data-state=done].
import { cuda } from "numbats";
import { results } from "./program.js";

const text = (id: string, s: string) => { document.getElementById(id)!.textContent = s; };
const lines: string[] = [];
try {
  results((line) => lines.push(line));
} catch (e) {
  text("error", e instanceof Error ? `${e.name}: ${e.message}` : String(e));
}
text("output", lines.join("\n"));
const report: string[] = [];
const log = console.log;
console.log = (...args: unknown[]) => report.push(args.join(" "));
try {
  cuda.detect();
} finally {
  console.log = log;
}
text("detect", `${report.join("\n")}\ncrossOriginIsolated: ${crossOriginIsolated}`);
document.body.dataset.state = "done";
