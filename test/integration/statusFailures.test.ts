/**
 * `status` lists what the last `run --once` reported as failed, not only failed
 * downloads: here a user's file sits where a remote folder goes (occupied), which blocks
 * everything below it.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox, seedSmallLibrary } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("status after a pass with failures", () => {
  it("shows the failures run --once listed, and none after a clean pass", { timeout: 90_000 }, async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    Fs.writeFileSync(Path.join(b.root, "Movies"), "the user's file, where the remote folder goes")

    const run = await b.run(["run", "--once"])
    assert.strictEqual(run.code, 1, run.stderr)
    const listed = run.stderr
      .split("\n")
      .filter((line) => line.startsWith("failed: "))
      .map((line) => line.slice("failed: ".length).split(": ")[0])
    assert.isAbove(listed.length, 1)

    const status = await b.run(["status", "--json"])
    const document = JSON.parse(status.stdout)
    assert.deepStrictEqual(
      document.failures.map((f: { path: string }) => f.path).sort(),
      [...listed].sort(),
      "status lists what the run listed"
    )
    const human = (await b.run(["status"])).stdout
    assert.match(human, new RegExp(`local: .* ${listed.length} failed`))

    Fs.rmSync(Path.join(b.root, "Movies"))
    assert.strictEqual((await b.run(["run", "--once"])).code, 0)
    assert.deepStrictEqual(JSON.parse((await b.run(["status", "--json"])).stdout).failures, [])
  })
})
