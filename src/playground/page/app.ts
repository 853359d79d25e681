// The playground page: the editor, the example gallery, Run/Stop, the result tabs and shareable links.
// Each run goes to a fresh module worker (runner.ts), which Stop ends. The URL carries the program
// (?code=<base64url of its UTF-8 text>), the target (&target=webgpu or sim, the default), the sanitizer
// (&sanitize=1) and, for tests and links that run at once, &run=1. When a run ends, body[data-state] is
// "done", #output holds what it printed, #error its error and #ran-on what ran its kernels.

import { EXAMPLES } from "./examples.js";
import type { FindingView, RunReply, Target } from "./run.js";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const code = $<HTMLTextAreaElement>("code");
const gutter = $("gutter");
const runButton = $<HTMLButtonElement>("run");
const stopButton = $<HTMLButtonElement>("stop");
const sanitize = $<HTMLInputElement>("sanitize");
const target = $<HTMLSelectElement>("target");
const status = $("status");

/** The targets a program runs on here (run.ts runs it; this page imports no numbats), as the menu names them. */
const TARGETS: Readonly<Record<Target, string>> = { sim: "CPU simulator", webgpu: "WebGPU" };

// --- links: ?code=<base64url> -------------------------------------------------------------------

export function encodeCode(text: string): string {
  let binary = "";
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCode(b64url: string): string {
  const binary = atob(b64url.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

function shareLink(): string {
  const url = new URL(location.href);
  url.search = "";
  url.searchParams.set("code", encodeCode(code.value));
  if (target.value !== "sim") url.searchParams.set("target", target.value);
  if (sanitize.checked) url.searchParams.set("sanitize", "1");
  return url.href;
}

// --- the editor ---------------------------------------------------------------------------------

function updateGutter(): void {
  const n = code.value.split("\n").length;
  gutter.textContent = Array.from({ length: n }, (_, i) => i + 1).join("\n");
  gutter.scrollTop = code.scrollTop;
}

code.addEventListener("input", updateGutter);
code.addEventListener("scroll", () => { gutter.scrollTop = code.scrollTop; });
code.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run();
  } else if (e.key === "Tab") {
    e.preventDefault();
    code.setRangeText("  ", code.selectionStart, code.selectionEnd, "end");
    updateGutter();
  }
});

function setCode(text: string): void {
  code.value = text;
  updateGutter();
}

const examples = $<HTMLSelectElement>("examples");
examples.append(new Option("—", ""), ...EXAMPLES.map((e) => new Option(e.title, e.name)));
examples.addEventListener("change", () => {
  const e = EXAMPLES.find((x) => x.name === examples.value);
  if (e) setCode(e.code);
});

// --- the result tabs ----------------------------------------------------------------------------

for (const b of document.querySelectorAll<HTMLButtonElement>("#tabs button")) {
  b.addEventListener("click", () => showTab(b.dataset.tab!));
}

function showTab(name: string): void {
  for (const b of document.querySelectorAll<HTMLElement>("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const p of document.querySelectorAll<HTMLElement>(".panel")) p.classList.toggle("active", p.dataset.panel === name);
}

function showFindings(findings: readonly FindingView[]): void {
  const box = $("findings");
  box.replaceChildren();
  if (findings.length === 0) {
    box.textContent = sanitize.checked ? "No findings." : "The sanitizer is off: tick “sanitizer” and run again.";
    return;
  }
  for (const f of findings) {
    const div = document.createElement("div");
    div.className = "finding";
    const head = document.createElement("div");
    head.innerHTML = `<span class="tool"></span> <span></span>`;
    head.children[0]!.textContent = f.tool;
    head.children[1]!.textContent = `${f.kind}${f.what ? ` on ${f.what}` : ""}`;
    const pre = document.createElement("pre");
    pre.textContent = f.places.map((p) => `${String(p.line).padStart(4)} | ${p.text}`).join("\n");
    div.append(head, pre);
    box.append(div);
  }
}

function show(r: RunReply): void {
  $("output").textContent = r.output;
  $("error").textContent = r.error;
  $("ran-on").textContent = r.ranOn && `kernels ran on ${r.ranOn}`;
  const views = (key: "ir" | "ptx" | "wgsl") => r.kernels.map((k) => `// kernel ${k.name}\n${k[key]}`).join("\n\n") || "(no kernel compiled)";
  $("ir").textContent = views("ir");
  $("ptx").textContent = views("ptx");
  $("wgsl").textContent = views("wgsl");
  showFindings(r.findings);
  if (r.findings.length > 0) showTab("sanitizer");
  else showTab("output");
  status.textContent = `${r.error ? "failed" : "done"} in ${r.ms.toFixed(0)} ms`;
}

// --- running ------------------------------------------------------------------------------------

let worker: Worker | undefined;

function finish(reply: RunReply): void {
  worker?.terminate();
  worker = undefined;
  runButton.disabled = false;
  stopButton.disabled = true;
  show(reply);
  document.body.dataset.state = "done";
}

const failed = (error: string): RunReply => ({ ranOn: "", output: "", error, kernels: [], findings: [], ms: 0 });

const isTarget = (t: string): t is Target => Object.hasOwn(TARGETS, t);

function run(): void {
  worker?.terminate();
  document.body.dataset.state = "running";
  status.textContent = "running…";
  runButton.disabled = true;
  stopButton.disabled = false;
  if (!isTarget(target.value)) {
    finish(failed(`target '${target.value}' is not available here: use ${Object.keys(TARGETS).join(", ")}`));
    return;
  }
  worker = new Worker(new URL("./runner.js", import.meta.url), { type: "module" });
  worker.onmessage = (e: MessageEvent<RunReply>) => finish(e.data);
  worker.onerror = (e) => finish(failed(`the runner failed: ${e.message}`));
  worker.postMessage({ code: code.value, sanitize: sanitize.checked, target: target.value });
}

runButton.addEventListener("click", () => run());
stopButton.addEventListener("click", () => finish(failed("stopped")));
$("share").addEventListener("click", async () => {
  const link = shareLink();
  history.replaceState(null, "", link);
  try {
    await navigator.clipboard.writeText(link);
    status.textContent = "link copied";
  } catch {
    status.textContent = "link in the address bar";
  }
});

// --- start --------------------------------------------------------------------------------------

const params = new URLSearchParams(location.search);
sanitize.checked = params.get("sanitize") === "1";
// an unknown target stays selectable, so that running it says which ones there are
const asked = params.get("target") ?? "sim";
target.append(...Object.entries(TARGETS).map(([t, label]) => new Option(label, t)));
if (!isTarget(asked)) target.append(new Option(asked, asked));
target.value = asked;
const linked = params.get("code");
const example = EXAMPLES.find((e) => e.name === params.get("example")) ?? EXAMPLES[0]!;
try {
  setCode(linked === null ? example.code : decodeCode(linked));
  if (linked === null) examples.value = example.name;
} catch {
  setCode(example.code);
  $("error").textContent = "The link's program could not be read (?code= must be base64url of UTF-8 text).";
}
if (params.get("run") === "1") run();
