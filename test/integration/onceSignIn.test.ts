/**
 * `run --once` whose sign-in is refused exits 77 and leaves `status` saying "login
 * required" (not "ok"), until a later run signs in again; the refusal does not pass for a
 * personal API key's (the mirror stays in change-feed mode).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { authStateArea } from "../../src/emulator/oauthArea.ts"
import { seedFreshLogin, seedTokens } from "../auth/support/fixtures.ts"
import { type Sandbox, sandbox, seedSmallLibrary } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

const signIn = async (b: Sandbox) => JSON.parse((await b.run(["status", "--json"])).stdout).signIn

describe("run --once and the sign-in state in status", () => {
  it("a refused sign-in (77) shows as login required; a later good run clears it", { timeout: 90_000 }, async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    await Effect.runPromise(seedTokens(b.emu, b.stateDir))
    assert.strictEqual((await b.run(["run", "--once"])).code, 0)
    assert.strictEqual((await signIn(b)).state, "ok")

    authStateArea(b.emu.context).oauth.revoke(b.emu.refreshToken)
    const refused = await b.run(["run", "--once"])
    assert.strictEqual(refused.code, 77, refused.stderr)
    assert.notInclude(refused.stderr, "mirroring by listing", "a refused OAuth sign-in is not a personal API key")
    const document = JSON.parse((await b.run(["status", "--json"])).stdout)
    assert.strictEqual(document.mode.name, "changes", document.mode.reason)
    const state = await signIn(b)
    assert.strictEqual(state.state, "login required")
    assert.isString(state.since)

    await Effect.runPromise(seedFreshLogin(b.emu, b.stateDir))
    const again = await b.run(["run", "--once"])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual((await signIn(b)).state, "ok")
  })
})
