/**
 * vitest's global setup: every temporary folder of one run (the tests' `os.tmpdir()`, and the
 * processes they start, which inherit TMPDIR) goes under one folder of its own, removed when
 * the run ends. A test that keeps its folders (to look into after a failure, or because it was
 * cut short) then leaves nothing behind in the system's /tmp.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

export default function setup(): () => void {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-tests-"))
  process.env.TMPDIR = dir
  return () => {
    try {
      Fs.rmSync(dir, { recursive: true, force: true })
    } catch (error) {
      // A file system still mounted below it (a test's tmpfs): say so, fail nothing.
      process.stderr.write(`left ${dir} in place: ${String(error)}\n`)
    }
  }
}
