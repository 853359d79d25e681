// Each of numbats' worker threads as one self-contained script, for `new Worker(code, { eval: true })`.
// The package build (scripts/build.ts) bundles each worker's entry module and replaces this module's
// compiled copy with one that holds the scripts: a bundler that bundles numbats into an app carries
// them as it carries any module, where files beside numbats' own would be left behind. Empty here:
// run from its sources, numbats starts its workers on their modules (worker-entry.ts).

/** The script of each worker (by entry module name, e.g. "sim-worker"), where the package build made one. */
export const WORKER_SOURCES: Readonly<Partial<Record<string, string>>> = {};
