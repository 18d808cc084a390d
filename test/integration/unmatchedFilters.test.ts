/**
 * A filter that selects nothing in a complete listing (a likely typo) is a warning in the
 * log and in `dlsync status`; the pass still succeeds (an empty selection is not an error).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox, seedSmallLibrary } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("filters that select nothing", { timeout: 60_000 }, () => {
  it("are warned in the log and listed in status; filters that match are not", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    const env = { DLSYNC_MIRROR_INCLUDE: "*.mvk,*.mkv", DLSYNC_MIRROR_FOLDERS: "Moviez,Movies" }
    const pass = await box.run(["run", "--once"], { env })
    assert.strictEqual(pass.code, 0, pass.stderr)
    assert.include(pass.stderr, 'mirror.include: \\"*.mvk\\" matches no file of the account')
    assert.include(pass.stderr, 'mirror.folders: \\"Moviez\\" names no folder of the account')
    assert.notInclude(pass.stderr, '\\"*.mkv\\" matches no file')
    assert.notInclude(pass.stderr, '\\"Movies\\" names no folder')

    const status = await box.run(["status"], { env })
    assert.strictEqual(status.code, 0, status.stderr)
    assert.include(status.stdout, "filters that select nothing (2):")
    assert.include(status.stdout, 'mirror.include: "*.mvk" matches no file of the account')
  })
})
