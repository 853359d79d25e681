// The WebGPU adapters the tests run kernels on, on a machine with no GPU: Mesa's lavapipe and Chrome's
// SwiftShader, CPU Vulkan drivers that Dawn (the `webgpu` package) runs on. `.ci/run` fetches them into
// a folder (default: ~/.cache/numbats/webgpu-cpu; NUMBATS_WEBGPU_CPU names another) that holds one
// environment file per adapter (`env-lavapipe.sh`, `env-swiftshader.sh`: LD_LIBRARY_PATH and
// VK_ICD_FILENAMES). Where they are absent, what needs them is skipped, saying why.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

/** The variables an environment file sets that Dawn and Chromium read. */
const ADAPTER_VARS = ["LD_LIBRARY_PATH", "VK_ICD_FILENAMES", "CHROMIUM"] as const;

export interface CpuAdapter {
  /** "lavapipe" or "swiftshader" */
  readonly name: string;
  /** what a child process needs in its environment to find it */
  readonly env: Readonly<Record<string, string>>;
}

/** Where the CPU adapters are (or would be). */
export function cpuAdapterDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.NUMBATS_WEBGPU_CPU || join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "numbats", "webgpu-cpu");
}

/** The variables `file` exports, read by the shell that would source it. */
function exportsOf(file: string): Record<string, string> {
  const r = spawnSync("bash", ["-c", `. "$1" && env -0`, "bash", file], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  if (r.status !== 0) throw new Error(`${file} could not be sourced: ${r.stderr}`);
  const out: Record<string, string> = {};
  for (const line of r.stdout.split("\0")) {
    const eq = line.indexOf("=");
    const name = line.slice(0, eq) as (typeof ADAPTER_VARS)[number];
    if (ADAPTER_VARS.includes(name)) out[name] = line.slice(eq + 1);
  }
  return out;
}

let found: { adapters: CpuAdapter[] } | { reason: string } | undefined;

/** The CPU adapters, or why there are none (the `webgpu` package missing, or the drivers). */
export function cpuAdapters(): { adapters: readonly CpuAdapter[] } | { reason: string } {
  if (found) return found;
  try {
    createRequire(import.meta.url).resolve("webgpu");
  } catch {
    return (found = { reason: "the `webgpu` package (Dawn for Node) is not installed: npm install webgpu" });
  }
  const dir = cpuAdapterDir();
  const adapters = ["lavapipe", "swiftshader"].flatMap((name): CpuAdapter[] => {
    const file = join(dir, `env-${name}.sh`);
    return existsSync(file) ? [{ name, env: exportsOf(file) }] : [];
  });
  if (adapters.length === 0) {
    return (found = { reason: `no CPU WebGPU adapters in ${dir} (.ci/run fetches them with the WebGPU setup tool; NUMBATS_WEBGPU_CPU=<dir> names a folder holding env-lavapipe.sh and env-swiftshader.sh)` });
  }
  return (found = { adapters });
}
