/**
 * The figures README.md quotes from a run are the figures of a run: "Five minutes with the
 * emulator" mirrors the emulator's demo library with `dlsync run --once`, here for real, and
 * the README's pass summary, file count and `ls` of the mirror must match what it printed.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox } from "../integration/harness.ts"

const readme = Fs.readFileSync(Path.resolve(import.meta.dirname, "../../README.md"), "utf8")

/** The README's text matched by `pattern`; fails naming the pattern when it is gone. */
const quoted = (pattern: RegExp): RegExpExecArray => {
  const match = pattern.exec(readme)
  if (match === null) throw new Error(`README.md no longer has ${pattern}: update this test with it`)
  return match
}

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("README.md's figures", { timeout: 120_000 }, () => {
  it("are those of a first `dlsync run --once` of the emulator's demo library", async () => {
    box = await sandbox("demo")
    const run = await box.run(["run", "--once"])
    assert.strictEqual(run.code, 0, run.stderr)
    const [, folders, files] = /pass: (\d+) folders created, (\d+) files downloaded/.exec(run.stdout) ?? []
    assert.isDefined(files, run.stdout)

    const [, saidFolders, saidFiles] = quoted(
      /dlsync run --once +# one pass: (\d+) folders created, (\d+) files downloaded/
    )
    assert.deepStrictEqual([saidFolders, saidFiles], [folders, files], "the pass summary of the walkthrough")
    assert.strictEqual(quoted(/the emulator's demo library \((\d+) files\)/)[1], files, "the app-state paragraph")

    const listed = Fs.readdirSync(box.root)
      .filter((name) => name !== ".dlsync")
      .sort()
    const [, saidListing = ""] = quoted(/ls ~\/dlsync-mirror +# (.+)$/m)
    assert.deepStrictEqual(saidListing.split(/ {2,}/), listed, "the `ls` of the walkthrough")
  })
})
