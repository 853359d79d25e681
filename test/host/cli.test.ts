// The `numbats` command, spawned as a user runs it: `-s` against
// this process's own view of the driver (and against the mock libcuda), `ptx`
// on test/fixtures/cli-kernels.ts, and usage errors.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { buildMockCuda } from "../cuda-mock.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURE = "test/fixtures/cli-kernels.ts";
const TARGET_VARS = ["NUMBATS_TARGET", "NUMBATS_ENABLE_CUDASIM", "NUMBATS_CUDA_LIBRARY"];

/** `node` with the environment minus the target variables, plus `env`. */
function node(nodeArgs: readonly string[], env: Record<string, string> = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !TARGET_VARS.includes(k)));
  const r = spawnSync(process.execPath, nodeArgs, {
    cwd: ROOT, encoding: "utf8", env: { ...base, ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const cli = (args: readonly string[], env: Record<string, string> = {}) => node(["--import", "tsx", "src/cli.ts", ...args], env);

/** koffi failing to load, as where its native binary does not fit the platform */
const NO_KOFFI = ["--require", "./test/helpers/no-koffi.cjs"];
const KOFFI_ERROR = "Cannot find the native Koffi module; did you bundle it correctly?";

/** The value of a `key : value` row of the -s report (first line only). */
function row(report: string, key: string): string {
  const m = new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s+: (.*)$`, "m").exec(report);
  assert.ok(m, `no '${key}' row in:\n${report}`);
  return m[1]!;
}

/** PTX blocks of `numbats ptx` output, by the `// kernel NAME: SIG` line that heads each. */
function ptxBlocks(stdout: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const part of stdout.split(/^(?=\/\/ kernel )/m).filter((p) => p.trim())) {
    const head = /^\/\/ kernel (\S+): (.*)$/m.exec(part);
    assert.ok(head, `block without a kernel header:\n${part}`);
    blocks.set(`${head[1]}: ${head[2]}`, part);
  }
  return blocks;
}

test("-s reports Node, platform, version, and the driver and target this process sees", () => {
  const r = cli(["-s"]);
  assert.equal(r.status, 0, r.stderr);
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { version: string };
  assert.equal(row(r.stdout, "numbats"), pkg.version);
  assert.match(row(r.stdout, "Node.js"), new RegExp(`^${process.version.replace(/\./g, "\\.")} `));
  assert.match(row(r.stdout, "Platform"), new RegExp(`^${process.platform} ${process.arch},`));
  assert.equal(row(r.stdout, "Requested"), "auto, by default (NUMBATS_TARGET unset)");
  assert.equal(r.stderr, "", "the report says why itself; no notice on stderr");
  const probe = probeCuda();
  if (probe.ok) {
    assert.equal(row(r.stdout, "Target"), "cuda (the GPU)");
    assert.equal(row(r.stdout, "Devices"), String(probe.devices.length));
    for (const d of probe.devices) assert.ok(r.stdout.includes(`${d.name}: compute capability ${d.computeCapability.join(".")}`));
  } else {
    const firstLine = probe.reason.split("\n")[0]!;
    assert.equal(row(r.stdout, "Driver"), `not usable: ${firstLine}`);
    assert.equal(row(r.stdout, "Target"), "sim (the CPU simulator)");
    assert.equal(row(r.stdout, "Why"), firstLine);
  }
});

test("-s reports NVRTC and nvJitLink: each one's version and path, or why it is not usable with every place tried", () => {
  const r = cli(["-s"], { NUMBATS_NVRTC_LIBRARY: "/nonexistent/libnvrtc.so.13" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(row(r.stdout, "NVRTC"), /^not usable \(needed only to link CUDA C\+\+ or LTO-IR: pip install nvidia-cuda-nvrtc\): NVRTC was not found; looked in:/);
  assert.ok(r.stdout.includes("NUMBATS_NVRTC_LIBRARY: /nonexistent/libnvrtc.so.13:"), r.stdout);
  assert.match(row(r.stdout, "nvJitLink"), /^(\d+\.\d+: \/.*libnvJitLink|not usable \(needed only to link CUDA C\+\+ or LTO-IR: pip install nvidia-nvjitlink\): nvJitLink was not found; looked in:)/);
});

test("-s honours NUMBATS_TARGET=sim and NUMBATS_ENABLE_CUDASIM=1", () => {
  for (const [name, value] of [["NUMBATS_TARGET", "sim"], ["NUMBATS_ENABLE_CUDASIM", "1"]] as const) {
    const r = cli(["-s"], { [name]: value });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(row(r.stdout, "Requested"), `sim, by ${name}=${value}`);
    assert.equal(row(r.stdout, "Target"), "sim (the CPU simulator)");
    assert.equal(row(r.stdout, "Why"), `${name}=${value} asks for the simulator`);
    assert.match(row(r.stdout, "Environment"), new RegExp(`${name}=${value}`));
  }
});

test("-s with a driver library that does not exist: not usable, simulator, and what NUMBATS_TARGET=cuda would do", () => {
  const lib = "/nonexistent/libcuda.so.1";
  const auto = cli(["-s"], { NUMBATS_CUDA_LIBRARY: lib });
  assert.equal(auto.status, 0, auto.stderr);
  assert.match(row(auto.stdout, "Driver"), /^not usable: the CUDA driver library was not found \(tried \/nonexistent\/libcuda\.so\.1\)/);
  assert.equal(row(auto.stdout, "Target"), "sim (the CPU simulator)");

  const cuda = cli(["-s"], { NUMBATS_CUDA_LIBRARY: lib, NUMBATS_TARGET: "cuda" });
  assert.equal(cuda.status, 0, cuda.stderr);
  assert.match(row(cuda.stdout, "Target"), /^none: a program would fail with: NUMBATS_TARGET=cuda but no usable GPU: the CUDA driver library was not found/);

  const bad = cli(["-s"], { NUMBATS_TARGET: "gpu" });
  assert.equal(bad.status, 0, bad.stderr);
  assert.match(row(bad.stdout, "Target"), /NUMBATS_TARGET=gpu is not a target: use cuda, webgpu, sim or auto/);
});

test("-s through the mock libcuda lists its device and picks the GPU", (t) => {
  const mock = buildMockCuda();
  if (!mock) return t.skip("gcc not found: the mock libcuda cannot be built");
  const r = cli(["-s"], { NUMBATS_CUDA_LIBRARY: mock.path });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(row(r.stdout, "Driver"), `found: ${mock.path}`);
  assert.match(row(r.stdout, "Driver version"), /^CUDA 13\.0 \(13000\), JIT accepts PTX ISA 9\.0$/);
  assert.equal(row(r.stdout, "Devices"), "1");
  // the mock's attributes: cc 9.0, 132 SMs, 80 GiB
  assert.equal(row(r.stdout, "  device 0"), "Mock GPU 0: compute capability 9.0, 132 SMs, 80.0 GiB");
  assert.equal(row(r.stdout, "Target"), "cuda (the GPU)");
  assert.equal(row(r.stdout, "Why"), "found 1 CUDA device, using Mock GPU 0");
});

test("where koffi cannot load: -s says why, and a program imports numbats and runs on the simulator", (t) => {
  // a machine where the loader could find a driver library (a placeholder in LD_LIBRARY_PATH): numbats
  // loads koffi to open it (with no driver library anywhere it would not load koffi at all)
  const dir = mkdtempSync(join(tmpdir(), "numbats-driver-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "libcuda.so.1"), "");
  const driverDir = { LD_LIBRARY_PATH: dir };
  const report = node([...NO_KOFFI, "--import", "tsx", "src/cli.ts", "-s"], driverDir);
  assert.equal(report.status, 0, report.stderr);
  const why = row(report.stdout, "Driver");
  assert.ok(why.startsWith("not usable: koffi, the native library numbats calls the CUDA driver through, could not be loaded"), why);
  assert.ok(why.includes(KOFFI_ERROR), why);
  assert.equal(row(report.stdout, "Target"), "sim (the CPU simulator)");
  const required = node([...NO_KOFFI, "--import", "tsx", "src/cli.ts", "-s"], { ...driverDir, NUMBATS_TARGET: "cuda" });
  assert.match(row(required.stdout, "Target"), /^none: a program would fail with: NUMBATS_TARGET=cuda but no usable GPU: koffi, .* could not be loaded/);

  const program = `
    import { cuda } from "./src/index.ts";
    const double = cuda.jit((a) => { const i = cuda.grid(1); if (i < a.length) a[i] = a[i] * 2; });
    const a = new Float32Array([1, 2.5, -3]);
    double.configure(1, 32)(a);
    console.log(Array.from(a).join(" "));`;
  const run = node([...NO_KOFFI, "--import", "tsx", "--input-type=module", "--eval", program], driverDir);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, "2 5 -6\n");
  const lines = run.stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, /^numbats: running kernels on the CPU simulator: koffi, .* could not be loaded \(Cannot find the native Koffi module/);
});

test("importing numbats and running on the simulator does not load koffi", () => {
  const program = `
    import { createRequire } from "node:module";
    import { cuda } from "./src/index.ts";
    const a = new Float32Array(4);
    cuda.jit((a) => { a[cuda.grid(1)] = 1; }).configure(1, 4)(a);
    console.log(a.join(" "), Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes("/koffi/")));`;
  const r = node(["--import", "tsx", "--input-type=module", "--eval", program], { NUMBATS_TARGET: "sim" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "1 1 1 1 false\n");
});

test("-v and --version print the package's version", () => {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { version: string };
  for (const flag of ["-v", "--version"]) {
    const r = cli([flag]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `numbats ${pkg.version}\n`);
  }
});

test("--help prints usage and succeeds; bad command lines print usage and exit 2", () => {
  for (const flag of ["--help", "-h"]) {
    const r = cli([flag]);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^usage: numbats -s/);
  }
  const bad: [string[], RegExp][] = [
    [[], /no command given/],
    [["--bogus"], /Unknown option '--bogus'/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    [["ptx"], /ptx takes one FILE; got 0/],
    [["ptx", "a.js", "b.js"], /ptx takes one FILE; got 2/],
    [["-s", "--sig", "void(int32)"], /-s takes no other arguments/],
    [["ptx", FIXTURE, "--sig"], /argument missing/],
    [["ptx", FIXTURE, "--arch", "90"], /--arch 90 is not a compute capability: use sm_XX/],
    [["ptx", FIXTURE, "--arch", "sm_35"], /--arch sm_35 is not a compute capability/],
    [["-s", "--arch", "sm_80"], /-s takes no other arguments/],
    [["playground", "--port", "x"], /--port x is not a port: use a whole number from 0 to 65535/],
    [["playground", "--port", "70000"], /--port 70000 is not a port/],
    [["playground", "now"], /playground takes --port only/],
    [["ptx", FIXTURE, "--port", "1"], /--port goes with playground/],
  ];
  for (const [args, why] of bad) {
    const r = cli(args);
    assert.equal(r.status, 2, `numbats ${args.join(" ")}`);
    assert.match(r.stderr, why);
    assert.match(r.stderr, /usage: numbats -s/);
    assert.equal(r.stdout, "");
  }
});

test("playground run from the sources (no package build) says the build makes its page", () => {
  const r = cli(["playground", "--port", "0"]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /the playground's page is made by the package build \(npm run build writes dist\/playground\)/);
});

test("ptx FILE prints each exported kernel with a signature, and says which need --sig (suggested from its annotations)", () => {
  const r = cli(["ptx", FIXTURE], { NUMBATS_TARGET: "sim" });
  assert.equal(r.status, 1, "a kernel was left out");
  const blocks = ptxBlocks(r.stdout);
  // axpy has an eager signature; doubleAll is lazy; scale, twice and limit are not kernels
  assert.deepEqual([...blocks.keys()], ["axpy: void(float32, array(float32, 1d, C), array(float32, 1d, C))"]);
  const ptx = [...blocks.values()][0]!;
  const probe = probeCuda();
  const defaultArch = probe.ok ? `sm_${probe.devices[0]!.computeCapability.join("")}` : "sm_80";
  assert.match(ptx, new RegExp(`^\\.target ${defaultArch}$`, "m"));
  assert.equal(ptx.match(/\.entry /g)?.length, 1);
  assert.match(ptx, /\.param \.f32 \w+/);
  assert.match(r.stderr, /kernel 'doubleAll' has no signature to compile for: pass --kernel doubleAll --sig "void\(float64\[::1\]\)" \(from its parameter annotations\)/);
  assert.doesNotMatch(r.stderr, /'scale'|'twice'|'limit'/);
  if (hasPtxas()) ptxasCheck(ptx, "sm_90");
});

test("ptx --kernel NAME --sig SIG compiles a lazy kernel (device function inlined)", () => {
  const r = cli(["ptx", FIXTURE, "--kernel", "doubleAll", "--sig", "void(float64[::1])"], { NUMBATS_TARGET: "sim" });
  assert.equal(r.status, 0, r.stderr);
  const blocks = ptxBlocks(r.stdout);
  assert.deepEqual([...blocks.keys()], ["doubleAll: void(array(float64, 1d, C))"]);
  const ptx = [...blocks.values()][0]!;
  assert.match(ptx, /\.entry /);
  assert.match(ptx, /ld\.global(\.nc)?\.f64/);
  assert.match(ptx, /st\.global\.f64/);
  assert.doesNotMatch(ptx, /\bcall\b/, "twice() is inlined");
  if (hasPtxas()) ptxasCheck(ptx, "sm_90");

  const eager = cli(["ptx", FIXTURE, "--kernel", "axpy"], { NUMBATS_TARGET: "sim" });
  assert.equal(eager.status, 0, eager.stderr);
  assert.deepEqual([...ptxBlocks(eager.stdout).keys()], ["axpy: void(float32, array(float32, 1d, C), array(float32, 1d, C))"]);
});

test("the simulator is one compute capability everywhere: its device (cuda.gpus, -s), inspectAsm, and ptx without a GPU", () => {
  const s = cli(["-s"], { NUMBATS_TARGET: "sim" });
  assert.equal(s.status, 0, s.stderr);
  assert.match(row(s.stdout, "Device"), /^numbats simulator: compute capability 8\.0, /);
  const program = `import { cuda } from "./src/index.ts";
    const k = cuda.jit((a) => { a[0] = 1; }, { signature: "void(float32[::1])" });
    console.log(cuda.gpus[0].computeCapability.join("."), /^\\.target (\\S+)$/m.exec(k.inspectAsm())[1]);`;
  const r = node(["--import", "tsx", "--input-type=module", "-e", program], { NUMBATS_TARGET: "sim" });
  assert.equal(r.stdout, "8.0 sm_80\n", r.stderr);
  if (probeCuda().ok) return; // ptx compiles for device 0 then
  const ptx = cli(["ptx", FIXTURE, "--kernel", "axpy"], { NUMBATS_TARGET: "sim" });
  assert.match(ptx.stdout, /^\.target sm_80$/m);
});

test("ptx --arch compiles for that compute capability", () => {
  for (const arch of ["sm_75", "sm_90"] as const) {
    const r = cli(["ptx", FIXTURE, "--kernel", "axpy", "--arch", arch], { NUMBATS_TARGET: "sim" });
    assert.equal(r.status, 0, r.stderr);
    const ptx = [...ptxBlocks(r.stdout).values()][0]!;
    assert.match(ptx, new RegExp(`^\\.target ${arch}$`, "m"));
    if (hasPtxas()) ptxasCheck(ptx, arch);
  }
});

test("ptx without an annotated signature to suggest gives an example --sig", () => {
  const r = cli(["ptx", "test/fixtures/cli-unannotated.mjs"], { NUMBATS_TARGET: "sim" });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, `numbats: kernel 'fill' has no signature to compile for: pass --kernel fill --sig with its parameter types, e.g. --sig "void(float32[::1], int32)", or give it options.signature\n`);
});

test("ptx failures name the problem and exit 1", () => {
  const cases: [string[], RegExp][] = [
    [["ptx", FIXTURE, "--kernel", "nope"], /exports no kernel named 'nope'; its kernels: axpy, doubleAll/],
    [["ptx", FIXTURE, "--kernel", "doubleAll", "--sig", "void(float99[::1])"], /unknown type "float99"/],
    [["ptx", FIXTURE, "--kernel", "doubleAll", "--sig", "void(int32)"], /TypingError: 'length' is not a property of int32/],
    [["ptx", FIXTURE, "--kernel", "axpy", "--sig", "int32(float32)"], /a kernel returns void/],
    [["ptx", "test/package/inputs.ts"], /exports no kernels/],
    [["ptx", "test/fixtures/no-such-module.js"], /no such file/],
  ];
  for (const [args, why] of cases) {
    const r = cli(args, { NUMBATS_TARGET: "sim" });
    assert.equal(r.status, 1, `numbats ${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, why);
    assert.equal(r.stdout, "");
  }
});
