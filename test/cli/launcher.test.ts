/**
 * bin/dlsync.js chooses what to run: the bundle while it is newer than every source and the
 * lock file, the sources otherwise (an edited source never runs stale). Each case is a copy
 * of the launcher in a scratch tree whose `src/main.ts` and `dist/dlsync.mjs` say who ran.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"

const launcher = Path.resolve(import.meta.dirname, "../../bin/dlsync.js")
let tree = ""

const write = (rel: string, text: string, mtimeSeconds: number) => {
  const path = Path.join(tree, rel)
  Fs.mkdirSync(Path.dirname(path), { recursive: true })
  Fs.writeFileSync(path, text)
  Fs.utimesSync(path, mtimeSeconds, mtimeSeconds)
}

const whoRuns = () => execFileSync(process.execPath, [Path.join(tree, "bin", "dlsync.js")], { encoding: "utf8" }).trim()

beforeEach(() => {
  tree = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-launcher-"))
  Fs.mkdirSync(Path.join(tree, "bin"))
  Fs.copyFileSync(launcher, Path.join(tree, "bin", "dlsync.js"))
  write("src/main.ts", 'console.log("sources")\n', 1_000)
  write("src/deep/module.ts", "export {}\n", 1_000)
  write("package-lock.json", "{}\n", 1_000)
})

afterEach(() => Fs.rmSync(tree, { recursive: true, force: true }))

describe("bin/dlsync.js", () => {
  it("runs the sources when there is no bundle", () => {
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs the bundle when it is newer than every source and the lock file", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    assert.strictEqual(whoRuns(), "bundle")
  })

  it("runs the sources when any source, however deep, is newer than the bundle", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    write("src/deep/module.ts", "export const edited = 1\n", 3_000)
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs the sources when the dependencies changed after the bundle was built", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    write("package-lock.json", '{"changed":true}\n', 3_000)
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs it with a small young generation, in the launcher's own process", () => {
    write(
      "dist/dlsync.mjs",
      "console.log(JSON.stringify({ pid: process.pid, ppid: process.ppid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX }))\n",
      2_000
    )
    const ran = JSON.parse(whoRuns())
    assert.includeMembers(ran.execArgv, ["--max-semi-space-size=1", "--optimize-for-size"])
    assert.strictEqual(ran.arenas, "2")
    // execve, not a child: the process this test started (a supervisor's) is the one that runs.
    assert.strictEqual(ran.ppid, process.pid)
  })

  it("runs the bundle where no sources ship (the container image)", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    Fs.rmSync(Path.join(tree, "src"), { recursive: true })
    Fs.rmSync(Path.join(tree, "package-lock.json"))
    assert.strictEqual(whoRuns(), "bundle")
  })
})
