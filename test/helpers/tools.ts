// The tools the tests run besides numbats: the project's own (tools/: the PTX interpreter, the
// emulated CUDA driver, the SASS census), always in the repository, and those a machine may lack
// (NVIDIA's ptxas and nvcc, gcc), each found once and, when missing, named with how to get it.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const tool = (path: string) => fileURLToPath(new URL(`../../tools/${path}`, import.meta.url));

/** The PTX interpreter (tools/ptxsim/README.md). */
export const PTXSIM = tool("ptxsim/ptxsim.mjs");
/** The emulated GPU: `node --import` it and the process's CUDA driver is fakecuda (tools/fakecuda/README.md). */
export const FAKECUDA = tool("fakecuda/register.mjs");
/** SASS instruction counts per loop of an sm_90 cubin, without a disassembler. */
export const SASS_CENSUS = tool("sass-census.mjs");

/** What gives each tool a machine may lack; no GPU is needed for any. */
const HOW_TO_GET = {
  ptxas: "ptxas and nvcc are NVIDIA's CUDA 13 compiler: install the CUDA Toolkit (developer.nvidia.com/cuda-downloads, then add /usr/local/cuda/bin to PATH) or `pip install \"nvidia-cuda-nvcc==13.0.*\"` and add its nvidia/cu13/bin (in python3's site-packages) to PATH",
  gcc: "gcc builds the emulated GPU's libcuda and the test libraries: `apt-get install gcc` (Debian, Ubuntu) or your system's C compiler package",
} as const;
const GIVEN_BY = { ptxas: "ptxas", nvcc: "ptxas", gcc: "gcc" } as const;

export type Tool = keyof typeof GIVEN_BY;

const found = new Map<Tool, boolean>();

/** Whether `tool --version` runs from PATH. */
export function hasTool(t: Tool): boolean {
  let ok = found.get(t);
  if (ok === undefined) found.set(t, ok = spawnSync(t, ["--version"], { stdio: "ignore" }).status === 0);
  return ok;
}

/** Why a check cannot run: the first of `tools` not on PATH, and how to get it; false when all are there. */
export function missingTools(...tools: Tool[]): string | false {
  const t = tools.find((x) => !hasTool(x));
  return t === undefined ? false : `${t} not found on PATH (${HOW_TO_GET[GIVEN_BY[t]]})`;
}
