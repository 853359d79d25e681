// The driver's linker (cuLink*): PTX, cubins, fatbins, relocatable objects and
// libraries linked into one cubin image for the current context's device.
//
// The driver compiles PTX inputs with its JIT (relocatable), resolves `.extern`
// functions against the other inputs and returns the linked image, which
// cuModuleLoadData(Ex) loads like PTX. Needs a current context (the linker
// targets its device); needs no toolkit.

import { koffi } from "./ffi.js";
import { CUDA_SUCCESS, type CudaCall, type CudaDriver } from "./driver.js";
import type { CudaError } from "../../../errors.js";

/** What a link input is; a `library` is an archive (`.a`) of relocatable objects. */
export type LinkInputKind = "ptx" | "cubin" | "fatbin" | "object" | "library";

/** One input of a link: its bytes (or PTX text), and a name the linker's log uses for it. */
export interface LinkInput {
  readonly kind: LinkInputKind;
  readonly name: string;
  readonly data: string | Uint8Array;
}

export interface LinkOptions {
  /** a register cap for the code the JIT compiles (CU_JIT_MAX_REGISTERS) */
  readonly maxRegisters?: number;
}

/** The linked image (a copy: the linker's own buffer dies with it) and the linker's info log. */
export interface LinkedImage {
  readonly image: Uint8Array;
  readonly infoLog: string;
}

/** CUjitInputType */
const INPUT_TYPE: Readonly<Record<LinkInputKind, number>> = { cubin: 0, ptx: 1, fatbin: 2, object: 3, library: 4 };
/** CUjit_option values */
const JIT = { maxRegisters: 0, infoLog: 3, infoLogSize: 4, errorLog: 5, errorLogSize: 6, logVerbose: 12 } as const;
const LOG_BYTES = 16384;

/** Bytes as the linker takes them: PTX text NUL-terminated (the JIT reads it as a C string). */
function inputBytes(input: LinkInput): Uint8Array {
  if (typeof input.data !== "string") return input.data;
  const text = Buffer.from(input.data + "\0", "utf8");
  return new Uint8Array(text.buffer, text.byteOffset, text.byteLength);
}

/**
 * Links `inputs` with the driver's linker into one image for the current context's device.
 * A failure is a CudaError naming the call (and the input, for cuLinkAddData) with the linker's
 * error log, e.g. an undefined function's "Unresolved extern function" line.
 */
export function linkImage(driver: CudaDriver, inputs: readonly LinkInput[], options: LinkOptions = {}): LinkedImage {
  const ffi = koffi();
  const errorLog = ffi.alloc("char", LOG_BYTES);
  const infoLog = ffi.alloc("char", LOG_BYTES);
  const state: unknown[] = [null];
  const logs = () => ({ error: String(ffi.decode(errorLog, "char", -1)).trim(), info: String(ffi.decode(infoLog, "char", -1)).trim() });
  const fail = (call: CudaCall, rc: number, what: string): CudaError => {
    const { error, info } = logs();
    return driver.error(call, rc, [what, error ? `linker error log:\n${error}` : "the linker gave no error log", info && `linker info log:\n${info}`].filter(Boolean).join("\n"));
  };
  try {
    // the log buffers stay the linker's until cuLinkDestroy: the JIT writes them during every call
    const opts: number[] = [JIT.errorLog, JIT.errorLogSize, JIT.infoLog, JIT.infoLogSize, JIT.logVerbose];
    const values = [ffi.address(errorLog), BigInt(LOG_BYTES), ffi.address(infoLog), BigInt(LOG_BYTES), 1n];
    if (options.maxRegisters !== undefined) opts.push(JIT.maxRegisters), values.push(BigInt(options.maxRegisters));
    const names = inputs.map((i) => `'${i.name}' (${i.kind})`).join(", ");
    let rc = driver.api.cuLinkCreate_v2(opts.length, new Int32Array(opts), new BigUint64Array(values), state);
    if (rc !== CUDA_SUCCESS) throw fail("cuLinkCreate_v2", rc, `creating a link of ${names}`);
    for (const input of inputs) {
      const bytes = inputBytes(input);
      rc = driver.api.cuLinkAddData_v2(state[0], INPUT_TYPE[input.kind], bytes, bytes.byteLength, input.name, 0, null, null);
      if (rc !== CUDA_SUCCESS) throw fail("cuLinkAddData_v2", rc, `adding ${input.kind} input '${input.name}' to the link`);
    }
    const image: unknown[] = [null];
    const size: (number | bigint)[] = [0];
    rc = driver.api.cuLinkComplete(state[0], image, size);
    if (rc !== CUDA_SUCCESS) throw fail("cuLinkComplete", rc, `linking ${names}`);
    const bytes = Number(size[0]);
    return { image: new Uint8Array(ffi.view(image[0], bytes)).slice(), infoLog: logs().info };
  } finally {
    if (state[0] !== null) driver.api.cuLinkDestroy(state[0]);
    ffi.free(errorLog);
    ffi.free(infoLog);
  }
}
