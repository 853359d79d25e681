/// <reference types="@webgpu/types" />
// The WebGPU device in a browser (docs/browser.md): navigator.gpu, driven from the page's (or a
// Worker's) own thread through an InThreadChannel, so every call that would wait for the device is
// refused (canBlock false) and has an async twin. A browser finds its adapter asynchronously
// (navigator.gpu.requestAdapter), while selection probes synchronously: `openBrowserDevice()` (the
// descriptor's `prepare`, which `await ready()` runs) opens it once, and
// `browserDevice()` reports it to the probe afterwards.

import { totalmem } from "node:os";
import { openDevice } from "./runtime/adapter.js";
import { InThreadChannel } from "./runtime/channel.js";
import { GpuExecutor } from "./runtime/executor.js";
import type { NodeDevice } from "./runtime/node-channel.js";

/** The WebGPU entry point of the environment: a browser's (or Deno's) navigator.gpu; undefined in Node.js. */
const navigatorGpu = (): GPU | undefined => (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;

/** A browser's globals (a page's document, a Worker's scope) and Deno's. */
const web = globalThis as { document?: unknown; WorkerGlobalScope?: unknown; Deno?: unknown };

/**
 * Whether WebGPU here is navigator.gpu (a browser's page or Worker, Deno), not Node.js's `webgpu`
 * package: then `auto` may choose it, and a browser without it says why.
 */
export const usesNavigatorGpu = (): boolean =>
  navigatorGpu() !== undefined || web.document !== undefined || web.WorkerGlobalScope !== undefined || web.Deno !== undefined;

/** The device opened by openBrowserDevice, once it settles. */
let opened: NodeDevice | undefined;
let opening: Promise<NodeDevice> | undefined;

/** Opens navigator.gpu's adapter and device once (later calls share the first); resolves with it, or why there is none. */
export function openBrowserDevice(): Promise<NodeDevice> {
  return (opening ??= open().then((d) => (opened = d)));
}

async function open(): Promise<NodeDevice> {
  const gpu = navigatorGpu();
  if (gpu === undefined) return { ok: false, reason: NO_NAVIGATOR_GPU };
  try {
    const { device, facts } = await openDevice(gpu);
    return { ok: true, channel: new InThreadChannel(new GpuExecutor(device)), facts, totalMemory: totalmem() };
  } catch (e) {
    return { ok: false, reason: `navigator.gpu cannot be used: ${(e as Error).message}` };
  }
}

const NO_NAVIGATOR_GPU = "this browser has no WebGPU (navigator.gpu): it needs a secure context (https, or http://localhost) and a browser that has WebGPU enabled";

/**
 * The browser's device as the probe sees it: opened, or why not; before openBrowserDevice has settled,
 * why it cannot be used yet.
 */
export function browserDevice(): NodeDevice {
  if (opened !== undefined) return opened;
  if (navigatorGpu() === undefined) return { ok: false, reason: NO_NAVIGATOR_GPU };
  return {
    ok: false,
    reason: `a browser finds its WebGPU adapter asynchronously: await numbats' ready() before the first launch${opening ? " (it is still being opened)" : ""}`,
  };
}
