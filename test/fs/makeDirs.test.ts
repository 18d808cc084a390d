/**
 * makeDirsSync: `mkdir -p` one level at a time, so that a parent that cannot hold children
 * fails at once instead of looping inside Node's recursive mkdir (under /proc).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { makeDirsSync } from "../../src/fs/makeDirs.ts"

let dir = ""
beforeEach(() => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-makedirs-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

describe("makeDirsSync", () => {
  it("makes every missing level with the mode asked for, and is a no-op when all exist", () => {
    const deep = Path.join(dir, "a", "b", "c")
    makeDirsSync(deep, 0o700)
    for (const level of ["a", "a/b", "a/b/c"]) {
      assert.strictEqual(Fs.statSync(Path.join(dir, level)).mode & 0o777, 0o700, level)
    }
    makeDirsSync(deep, 0o700)
    assert.isTrue(Fs.statSync(deep).isDirectory())
  })

  it("throws the mkdir's error where a level cannot be made: a file in the way, a path under /proc", () => {
    Fs.writeFileSync(Path.join(dir, "file"), "")
    assert.throws(() => makeDirsSync(Path.join(dir, "file", "sub")), /ENOTDIR/)
    assert.throws(
      () => makeDirsSync("/proc/nonexistent/state"),
      /ENOENT: no such file or directory, mkdir '\/proc\/nonexistent'/
    )
  })
})
