// Checks a test could not run (a tool that is not installed) are reported as
// skipped, not passed: the running test gets a skipped subtest naming the
// check and why, so `node --test` counts it under "# skipped".
//
// Helpers such as hasPtxas() are called deep inside tests without a test
// context at hand; hooks on the root of each test file track the running
// test instead (tests within a file run one at a time).
import { afterEach, beforeEach, type TestContext } from "node:test";

const running: TestContext[] = [];

// Only in a test file's process: programs that tests spawn (the examples harness, run-case.ts)
// import these helpers too, and a hook would start a test run reporting on their stdout.
if (/\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? "")) {
  // beforeEach runs for tests only (its type also admits suites)
  beforeEach((t) => { running.push(t as TestContext); });
  afterEach(() => { running.pop(); });
}

const reported = new WeakMap<TestContext, Set<string>>();

/** Marks `check` skipped in the running test, once per test; outside a test (e.g. in a `skip` option) it does nothing. */
export function reportSkipped(check: string, reason: string): void {
  const t = running.at(-1);
  if (!t) return;
  const done = reported.get(t) ?? new Set<string>();
  reported.set(t, done);
  if (done.has(check)) return;
  done.add(check);
  void t.test(check, { skip: reason }, () => {});
}
