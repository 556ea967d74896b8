// What the benchmarks share about their corpora.
import fs from "node:fs";
import path from "node:path";

/**
 * What Debian's libpython3.11-testsuite adds to the python-stdlib corpus (fetch-corpora.sh): the
 * directories of CPython's own tests. The stdlib's targets of bench:build and bench:daemon were set
 * on the stdlib alone (15K nodes), before the corpus took in the test suite (6379949; 54K nodes).
 */
export const PY_TESTSUITE_DIRS = ["test", "ctypes/test", "distutils/tests", "idlelib/idle_test", "lib2to3/tests", "tkinter/test", "unittest/test"];

/** Copies the python-stdlib corpus to `dest` without CPython's test suite: the tree the stdlib targets were set on. */
export function copyStdlibWithoutTests(corpus, dest) {
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.cpSync(corpus, dest, { recursive: true });
  for (const d of PY_TESTSUITE_DIRS) fs.rmSync(path.join(dest, d), { recursive: true, force: true });
}
