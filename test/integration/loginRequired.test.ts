/**
 * A daemon whose sign-in is refused (revoked, or a rotated refresh token lost) keeps the
 * mirror as it is, says "login required" in `status`, and picks up a later `dlsync login`
 * at its next poll, without a restart.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { authStateArea } from "../../src/emulator/oauthArea.ts"
import { seedFreshLogin, seedTokens } from "../auth/support/fixtures.ts"
import { eventually, expectedTree, type Sandbox, sandbox, seedSmallLibrary, snapshot } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

const signInState = async (b: Sandbox): Promise<string> => {
  const result = await b.run(["status", "--json"])
  return result.code === 0 ? String(JSON.parse(result.stdout).signIn?.state) : `exit ${result.code}`
}

describe("login required in the daemon", () => {
  it("keeps the mirror, says so in status, and resumes after a new login", { timeout: 120_000 }, async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    await Effect.runPromise(seedTokens(b.emu, b.stateDir))
    const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: "1h" }, deadlineMs: 90_000 })
    const inLine = () => JSON.stringify(snapshot(b.root)) === JSON.stringify(expectedTree(b.emu))
    await eventually(
      async () => inLine(),
      "the first pass",
      45_000,
      () => daemon.output().stderr
    )
    const mirrored = snapshot(b.root)

    // The grant behind the stored pair dies: the next refresh answers invalid_grant.
    authStateArea(b.emu.context).oauth.revoke(b.emu.refreshToken)
    b.emu.control.addFile({ name: "after revoke.txt", sizeBytes: 10 })
    daemon.child.kill("SIGHUP")
    await eventually(async () => (await signInState(b)) === "login required", "status: login required", 30_000)
    assert.isNull(daemon.child.exitCode, "the daemon keeps running")
    assert.deepStrictEqual(snapshot(b.root), mirrored, "the mirror is left as it is")

    // `dlsync login` stores a new pair; the next poll uses it.
    await Effect.runPromise(seedFreshLogin(b.emu, b.stateDir))
    daemon.child.kill("SIGHUP")
    await eventually(
      async () => inLine(),
      "the new file after login",
      30_000,
      () => daemon.output().stderr
    )
    assert.strictEqual(await signInState(b), "ok")
    daemon.child.kill("SIGTERM")
    assert.strictEqual((await daemon.exit).code, 0)
  })
})
