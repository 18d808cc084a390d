/**
 * The harness's deadline: a dlsync that does not finish in time is killed, and the error
 * says which signals the test sent and what each of its threads was doing (the evidence a
 * rare CI hang leaves; see threadStates in harness.ts).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("harness deadline", { timeout: 60_000 }, () => {
  it("kills a dlsync past its deadline and names its threads' states", async () => {
    box = await sandbox()
    // The daemon never finishes by itself.
    const daemon = box.spawn(["run"], { deadlineMs: 3_000 })
    const error = await daemon.exit.then(
      () => assert.fail("the daemon finished by itself"),
      (e: unknown) => (e instanceof Error ? e.message : String(e))
    )
    assert.match(error, /^dlsync run did not finish within 3000 ms \(no signal sent\)/)
    assert.match(error, /threads of \d+ at the deadline:\n {2}\d+ MainThread [RSD] wchan=/)
    const killedBy =
      daemon.child.signalCode ??
      (await new Promise((resolve) => daemon.child.once("exit", (_code, signal) => resolve(signal))))
    assert.strictEqual(killedBy, "SIGKILL")
  })
})
