// NVRTC and nvJitLink, for real where the libraries are found (an installed nvidia-cuda-nvrtc /
// nvidia-nvjitlink wheel is enough: compiling and linking need no GPU): CUDA C++ to PTX and LTO-IR,
// linked with a numbats kernel that calls it (cuda.declareDevice) into a cubin whose ELF symbol table
// defines both; numbats' call prototypes against NVRTC's for every type a call passes; NVRTC's PTX run
// on the PTX interpreter against the host's arithmetic; the errors (NVRTC's log, nvJitLink's undefined
// reference); and where the libraries are looked for, with no library needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadKoffi } from "../../src/backends/cuda/driver/ffi.js";
import { openLibrary, realLibraryHost, searchPlaces, type LibraryHost, type LoadedLibrary } from "../../src/backends/cuda/nvrtc/library-search.js";
import { compileCuda, compileCudaFile, NVRTC_LIBRARY, nvrtc, openNvrtc } from "../../src/backends/cuda/nvrtc/nvrtc.js";
import { jitLink, NVJITLINK_LIBRARY, nvJitLink, openNvJitLink, type JitLinkInput } from "../../src/backends/cuda/nvrtc/nvjitlink.js";
import { CompileError, CudaError } from "../../src/errors.js";
import { cuda } from "../../src/index.js";
import { elfSymbols } from "../helpers/elf.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { PTXSIM } from "../helpers/tools.js";

/** Why `open` cannot give the library here (not found, or no koffi to load it with); undefined where it can. */
function unavailable(open: () => unknown, wheel: string): string | undefined {
  const koffi = loadKoffi();
  if (!koffi.ok) return koffi.reason;
  try {
    open();
    return undefined;
  } catch (e) {
    if (!(e instanceof CudaError)) throw e;
    // the places tried, on one line
    return `${e.message.split("\n").map((l) => l.trim()).join(" ")} (pip install ${wheel})`;
  }
}

const noNvrtc = unavailable(nvrtc, "nvidia-cuda-nvrtc");
const noLinker = noNvrtc ?? unavailable(nvJitLink, "nvidia-nvjitlink");
if (noNvrtc) console.log(`# NVRTC tests skip: ${noNvrtc}`);
else if (noLinker) console.log(`# nvJitLink tests skip: ${noLinker}`);

const SM90: [number, number] = [9, 0];

const TWICE = { source: 'extern "C" __device__ float twice(float x) { return 2.0f * x; }\n', name: "twice.cu" };

/** A numbats kernel calling a declared device function: its PTX declares `twice` .extern and calls it. */
function scalePtx(): string {
  const twice = cuda.declareDevice<(x: number) => number>("twice", "float32(float32)");
  const scale = cuda.jit((out: Float32Array, x: Float32Array) => {
    const i = cuda.grid(1);
    if (i < out.length) out[i] = twice(x[i]!);
  }, { env: { twice }, name: "scale" });
  scale.compile("void(float32[:], float32[:])");
  return scale.inspectAsm(undefined, { computeCapability: SM90 });
}

const text = (code: Uint8Array) => new TextDecoder().decode(code);

test("NVRTC compiles an extern \"C\" __device__ function to relocatable PTX with nvcc's call ABI", { skip: noNvrtc }, () => {
  const { code, log } = compileCuda(TWICE, { computeCapability: SM90, output: "ptx" });
  const ptx = text(code);
  assert.equal(log, "");
  assert.match(ptx, /^\.target sm_90$/m);
  assert.match(ptx, /\.visible \.func\s+\(\.param \.b32 func_retval0\) twice\(\s*\.param \.b32 twice_param_0\s*\)/);
  assert.ok(!ptx.includes("\0"), "the PTX text ends before NVRTC's terminating NUL");
  if (hasPtxas()) ptxasCheck(ptx, "sm_90");
});

test("NVRTC's PTX of a __global__ kernel runs on the PTX interpreter with the host's float32 results", { skip: noNvrtc }, async () => {
  const source = `extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
`;
  // -fmad=false: a separately rounded multiply and add, as the host computes them
  const ptx = text(compileCuda({ source, name: "saxpy.cu" }, { computeCapability: SM90, output: "ptx", options: ["-fmad=false"] }).code);
  const n = 100, a = 1.37;
  const x = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 10), y = Float32Array.from({ length: n }, (_, i) => i / 7);
  const ps = await import(pathToFileURL(PTXSIM).href);
  const mod = ps.loadModule(ptx);
  assert.deepEqual(mod.compileErrors, []);
  const memory = ps.createMemory();
  const xs = memory.allocWith(x, "x"), ys = memory.allocWith(y, "y");
  ps.launch(mod, "saxpy", { grid: [2], block: [64], params: [{ value: a, type: "f32" }, xs, ys, n], memory });
  const got = memory.readF32(ys, n);
  const af = Math.fround(a);
  const want = Float32Array.from(x, (xi, i) => Math.fround(Math.fround(af * xi) + y[i]!));
  assert.deepEqual([...got], [...want]);
});

test("LTO-IR, PTX and a cubin from NVRTC link with a numbats kernel through nvJitLink: the cubin defines the kernel and the function", { skip: noLinker }, () => {
  const kernel = scalePtx();
  assert.match(kernel, /^\.extern \.func \(\.param \.b32 func_retval0\) twice\(/m);
  for (const output of ["ltoir", "ptx", "cubin"] as const) {
    const compiled = compileCuda(TWICE, { computeCapability: SM90, output });
    const inputs: JitLinkInput[] = [{ kind: "ptx", name: "scale.ptx", data: kernel }, { kind: output, name: "twice.cu", data: compiled.code }];
    const { cubin } = jitLink(inputs, { computeCapability: SM90 });
    const symbols = elfSymbols(cubin);
    const defined = (name: string) => symbols.find((s) => s.name === name && s.defined);
    assert.deepEqual(
      [defined("scale"), defined("twice")].map((s) => s && { binding: s.binding, type: s.type, section: s.section }),
      [{ binding: "global", type: "func", section: ".text.scale" }, { binding: "global", type: "func", section: ".text.twice" }],
      `linking ${output}`,
    );
    if (hasReadelf) assert.deepEqual(definedFunctions(symbols), readelfFunctions(cubin), "the ELF reader agrees with readelf");
  }
});

/** binutils' readelf, a second reader of the symbol table where it is installed */
const hasReadelf = spawnSync("readelf", ["--version"]).status === 0;

/** The functions `symbols` defines, sorted by name. */
function definedFunctions(symbols: ReturnType<typeof elfSymbols>): string[] {
  return symbols.filter((s) => s.type === "func" && s.defined).map((s) => s.name).sort();
}

/** The same, by binutils' readelf. */
function readelfFunctions(cubin: Uint8Array): string[] {
  const dir = mkdtempSync(join(tmpdir(), "numbats-elf-"));
  try {
    writeFileSync(join(dir, "k.cubin"), cubin);
    const table = execFileSync("readelf", ["-sW", join(dir, "k.cubin")], { encoding: "utf8" });
    // Num: Value Size Type Bind Vis Ndx Name (Vis may be followed by "[<other>: 10]")
    return table.split("\n").map((l) => /^\s*\d+:\s+\S+\s+\S+\s+FUNC\s+\S+\s+\S+(?:\s+\[[^\]]*\])?\s+(\S+)\s+(\S+)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null && m[1] !== "UND").map((m) => m[2]!).sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Declared device functions of every type a call passes, each with a C definition of the same types. */
const PASSED_TYPES = [
  ["f32", "float32(float32, float32)", "float f32(float a, float b) { return a * b; }"],
  ["f64", "float64(float64)", "double f64(double a) { return a + 1; }"],
  ["i32", "int32(int32, int8, int16)", "int i32(int a, signed char b, short c) { return a + b + c; }"],
  ["i64", "int64(uint64)", "long long i64(unsigned long long a) { return a * 3; }"],
  ["flag", "bool(bool, uint8)", "bool flag(bool a, unsigned char u) { return !a && u; }"],
  ["u32", "uint32(uint16)", "unsigned u32(unsigned short a) { return a; }"],
  ["fill", "void(float32[:], int32)", "void fill(float *p, int n) { for (int i = 0; i < n; i++) p[i] = i; }"],
] as const;

/** A function's PTX prototype, `(.param .b32 func_retval0) f(.param .b32 f_param_0, …)`, spaced one way. */
function prototypes(ptx: string, keyword: RegExp): Map<string, string> {
  const found = [...ptx.matchAll(new RegExp(`${keyword.source}\\s+(\\([^)]*\\)\\s*)?(\\w+)\\(([^)]*)\\)`, "g"))];
  const spaced = (t: string) => t.replace(/\s+/g, " ").trim();
  return new Map(found.map((m) => [m[2]!, spaced(`${m[1] ?? ""} ${m[2]}(${spaced(m[3]!)})`)]));
}

test("numbats declares each passed type as NVRTC defines it (nvcc's extern \"C\" ABI), and the kernel links with them through nvJitLink", { skip: noLinker }, () => {
  const [f32, f64, i32, i64, flag, u32, fill] = PASSED_TYPES.map(([name, signature]) => cuda.declareDevice<(...args: any[]) => any>(name, signature));
  const callAll = cuda.jit((f: Float32Array, d: Float64Array, n: Int32Array, u: Uint8Array, l: BigInt64Array) => {
    f[0] = f32(f[1]!, f[2]!);
    d[0] = f64(d[1]!);
    n[0] = i32(n[1]!, n[2]!, n[3]!);
    l[0] = i64(l[1]!);
    u[0] = flag(u[1] !== 0, u[2]!) ? 1 : 0;
    n[4] = u32(u[3]!);
    fill(f, n[5]!);
  }, { env: { f32, f64, i32, i64, flag, u32, fill }, name: "callAll" });
  callAll.compile("void(float32[:], float64[:], int32[:], uint8[:], int64[:])");
  const kernel = callAll.inspectAsm(undefined, { computeCapability: SM90 });
  const source = PASSED_TYPES.map(([, , c]) => `extern "C" __device__ ${c}\n`).join("");
  const defined = prototypes(text(compileCuda({ source, name: "types.cu" }, { computeCapability: SM90, output: "ptx" }).code), /\.visible \.func/);
  const declared = prototypes(kernel, /\.extern \.func/);
  assert.deepEqual([...declared.keys()].sort(), PASSED_TYPES.map(([name]) => name).sort());
  for (const [name, signature] of PASSED_TYPES) assert.equal(declared.get(name), defined.get(name), `${signature}`);
  const { cubin } = jitLink([{ kind: "ptx", name: "callAll.ptx", data: kernel },
    { kind: "ltoir", name: "types.cu", data: compileCuda({ source, name: "types.cu" }, { computeCapability: SM90, output: "ltoir" }).code }], { computeCapability: SM90 });
  const functions = definedFunctions(elfSymbols(cubin));
  for (const name of ["callAll", ...PASSED_TYPES.map(([n]) => n)]) assert.ok(functions.includes(name), `${name} defined in the cubin`);
});

test("a link that lacks the called function is nvJitLink's undefined reference, with its error log", { skip: noLinker }, () => {
  assert.throws(() => jitLink([{ kind: "ptx", name: "scale.ptx", data: scalePtx() }], { computeCapability: SM90 }), (e: unknown) => {
    assert.ok(e instanceof CudaError);
    assert.equal(e.call, "nvJitLinkComplete");
    assert.match(e.message, /nvJitLink's error log:\n.*Undefined reference to 'twice' in 'scale\.ptx'/);
    return true;
  });
});

test("a CUDA C++ syntax error is a CompileError: each of NVRTC's errors at its line, with a caret, and NVRTC's log", { skip: noNvrtc }, () => {
  const source = 'extern "C" __device__ float f(float x) {\n  return 2.0f * x\n}\n';
  assert.throws(() => compileCuda({ source, name: "broken.cu" }, { computeCapability: SM90, output: "ptx" }), (e: unknown) => {
    assert.ok(e instanceof CompileError);
    assert.match(e.message, /^NVRTC \(compute_90\): expected a ";" \(in 'broken\.cu' at line 3, column 1\)\n3 \| \}\n {4}\^/);
    assert.equal(e.line, 3);
    assert.match((e as CompileError & { log: string }).log, /^broken\.cu\(3\): error: expected a ";"$/m);
    return true;
  });
  // an error at the end of the source is placed after its last line, with NVRTC's note on it
  assert.throws(() => compileCuda({ source: 'extern "C" __device__ float f(float x) {\n  return x;\n', name: "open.cu" }, { computeCapability: SM90, output: "ptx" }),
    (e: unknown) => e instanceof CompileError && e.line === 2 && e.column === "  return x;".length
      && e.message.startsWith('NVRTC (compute_90): expected a "}"; note at line 1: to match this "{" (in \'open.cu\' at line 2, column 12)'));
});

test("a .cu file finds its #includes in its own folder", { skip: noNvrtc }, () => {
  const dir = mkdtempSync(join(tmpdir(), "numbats-cu-"));
  try {
    writeFileSync(join(dir, "scale.h"), "#define SCALE 3.0f\n");
    writeFileSync(join(dir, "lib.cu"), '#include "scale.h"\nextern "C" __device__ float thrice(float x) { return SCALE * x; }\n');
    const ptx = text(compileCudaFile(join(dir, "lib.cu"), { computeCapability: SM90, output: "ptx" }).code);
    assert.match(ptx, /\.visible \.func\s+\(\.param \.b32 func_retval0\) thrice\(/);
    assert.match(ptx, /mul(\.rn)?\.f32\s+%f\d+, %f\d+, 0f40400000;/, "3.0f from the header");
    // an error in the header: the header's name and line, in words
    writeFileSync(join(dir, "scale.h"), "#define SCALE 3.0f\n__device__ int broken() { return nowhere; }\n");
    assert.throws(() => compileCudaFile(join(dir, "lib.cu"), { computeCapability: SM90, output: "ptx" }),
      (e: unknown) => e instanceof CompileError && e.problems.some((p) => p.message.endsWith(`(${join(dir, "scale.h")} line 2)`)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a NUMBATS_*_LIBRARY naming a missing file is the only place tried, and the error says so", { skip: loadKoffi().ok ? false : "koffi cannot load here" }, () => {
  for (const [open, variable] of [[openNvrtc, "NUMBATS_NVRTC_LIBRARY"], [openNvJitLink, "NUMBATS_NVJITLINK_LIBRARY"]] as const) {
    const missing = "/nonexistent/numbats-test/libmissing.so";
    assert.throws(() => open({ ...realLibraryHost, env: { [variable]: missing } }), (e: unknown) => {
      assert.ok(e instanceof CudaError);
      assert.equal(e.code, -1);
      const lines = e.message.split("\n");
      assert.match(lines[0]!, /^(NVRTC|nvJitLink) was not found; looked in:$/);
      assert.match(lines[1]!, new RegExp(`^  ${variable}: ${missing}: `));
      assert.equal(lines[2], `fix ${variable} (the path of the library) or unset it`);
      return true;
    });
  }
});

/** A machine with nothing installed but what `files` lists (empty files under `root`). */
function fakeMachine(root: string, files: readonly string[], env: NodeJS.ProcessEnv): LibraryHost {
  for (const f of files) {
    mkdirSync(join(root, f, ".."), { recursive: true });
    writeFileSync(join(root, f), "");
  }
  return { ...realLibraryHost, env, home: join(root, "home") };
}

test("the search's order: the loader path, the wheels (virtualenv, user site), the toolkits; NVRTC's builtins loaded before it", () => {
  const root = mkdtempSync(join(tmpdir(), "numbats-search-"));
  try {
    const venv = join(root, "venv"), cuda = join(root, "cuda-13.0");
    const host = fakeMachine(root, [
      "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
      "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc-builtins.so.13.0",
      "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc-builtins.alt.so.13.0",
      "home/.local/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
      "home/.local/lib/python3.9/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12",
      "cuda-13.0/lib64/libnvrtc.so.13",
    ], { VIRTUAL_ENV: venv, CUDA_HOME: cuda });
    const venvSite = join(venv, "lib/python3.12/site-packages"), userSite = join(root, "home/.local/lib/python3.11/site-packages");
    // the machine's own site-packages and toolkits are searched too: left out here
    const ours = (places: ReturnType<typeof searchPlaces>) => places.filter((p) => p.place.startsWith("the loader") || p.place.includes(root));
    assert.deepEqual(ours(searchPlaces(NVRTC_LIBRARY, host)).map((p) => [p.place, p.candidates]), [
      ["the loader path (LD_LIBRARY_PATH, the loader cache, the system library directories)", ["libnvrtc.so.13", "libnvrtc.so.12"]],
      [`the nvidia-cuda-nvrtc wheel in ${venvSite}`, [join(venvSite, "nvidia/cu13/lib/libnvrtc.so.13")]],
      [`the nvidia-cuda-nvrtc wheel in ${userSite}`, [join(userSite, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12")]],
      [`the nvidia-cuda-nvrtc wheel in ${join(root, "home/.local/lib/python3.9/site-packages")}`, []],
      [`the CUDA toolkit at ${cuda}`, [join(cuda, "lib64/libnvrtc.so.13")]],
    ]);
    // nothing loads: every place is named, in order, with the fix
    const loaded: string[] = [];
    const load = (path: string): never => { loaded.push(path); throw new Error(`cannot open ${path}`); };
    assert.throws(() => openLibrary(NVRTC_LIBRARY, () => 0, host, load), (e: unknown) => {
      assert.ok(e instanceof CudaError);
      assert.match(e.message, /^NVRTC was not found; looked in:\n {2}the loader path .*: libnvrtc\.so\.13: cannot open libnvrtc\.so\.13\n/);
      assert.ok(e.message.includes(`the nvidia-cuda-nvrtc wheel in ${venvSite}: ${join(venvSite, "nvidia/cu13/lib/libnvrtc.so.13")}: cannot open`));
      assert.ok(e.message.includes(`the nvidia-cuda-nvrtc wheel in ${join(root, "home/.local/lib/python3.9/site-packages")}: none of libnvrtc.so.13, libnvrtc.so.12 in `));
      assert.ok(e.message.endsWith("\ninstall it (pip install nvidia-cuda-nvrtc) or set NUMBATS_NVRTC_LIBRARY to the library's path"));
      return true;
    });
    const wheelLib = join(venvSite, "nvidia/cu13/lib");
    assert.deepEqual(loaded.filter((p) => p.startsWith(wheelLib)), [join(wheelLib, "libnvrtc-builtins.so.13.0"), join(wheelLib, "libnvrtc.so.13")],
      "the builtins (not the .alt variant) before the library");
    // the first that loads is the one
    const found = openLibrary(NVJITLINK_LIBRARY, ({ path }) => path, host, (path) => {
      if (!path.startsWith(root)) throw new Error("not here");
      return {} as LoadedLibrary;
    });
    assert.equal(found, join(root, "home/.local/lib/python3.9/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12"));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
