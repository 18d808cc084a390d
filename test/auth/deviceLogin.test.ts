/**
 * The device flow against the emulator, one test per row of the spec's polling table.
 * The injected sleep moves the emulator's clock by what it was asked to wait (or less,
 * to poll too fast), so no test waits in real time.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiHttp, ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import type { DeviceAuthorization } from "../../src/api/schemas/oauth.ts"
import { deviceLogin, nextPoll } from "../../src/auth/deviceLogin.ts"
import { OAuthEndpoints, SPEC_PATHS, underRoot } from "../../src/auth/OAuthEndpoints.ts"
import { authStateArea } from "../../src/emulator/oauthArea.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { countRequests, oauthLayer, transportLayer, useEmulator } from "./support/fixtures.ts"

const SCOPES = ["user:read", "files:read", "storage:read", "storage:write"]

/**
 * Runs the flow with a scripted user: `act(poll, userCode)` runs before each poll (1-based)
 * and `advance(seconds, poll)` says how far the emulator's clock moves for each wait.
 */
const run = (
  e: RunningEmulator,
  script: {
    readonly act?: (poll: number, userCode: string) => void
    readonly advance?: (seconds: number, poll: number) => number
  }
) =>
  Effect.gen(function* () {
    const waits: Array<number> = []
    let userCode = ""
    const result = yield* Effect.result(
      deviceLogin({
        clientId: e.clientId,
        scopes: SCOPES,
        prompt: (authorization: DeviceAuthorization) =>
          Effect.sync(() => {
            userCode = authorization.user_code
          }),
        sleep: (duration) =>
          Effect.sync(() => {
            const seconds = Duration.toSeconds(duration)
            waits.push(seconds)
            e.control.advanceClock((script.advance?.(seconds, waits.length) ?? seconds) * 1000)
            script.act?.(waits.length, userCode)
          })
      })
    )
    return { result, waits, userCode }
  }).pipe(Effect.provide(oauthLayer(e), { local: true }))

describe("deviceLogin", () => {
  it.effect("authorization_pending keeps the interval; approval yields working tokens", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const oauth = authStateArea(e.context).oauth
      const { result, waits, userCode } = yield* run(e, {
        act: (poll, code) => {
          if (poll === 3) oauth.approveDevice(code)
        }
      })
      assert.match(userCode, /^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$/)
      assert.isTrue(result._tag === "Success")
      assert.deepStrictEqual(waits, [5, 5, 5])
      assert.strictEqual(countRequests(e, "POST", "/oauth/token"), 3)
      if (result._tag !== "Success") return
      const account = yield* Effect.gen(function* () {
        return yield* (yield* ApiClient).account.get
      }).pipe(
        Effect.provide(
          ApiClient.layer.pipe(
            Layer.provide(ApiHttp.layer.pipe(Layer.provide(ApiObserver.none))),
            Layer.provide(Credentials.apiKey(Redacted.make(result.success.access_token))),
            Layer.provide(transportLayer(e))
          ),
          { local: true }
        )
      )
      assert.strictEqual(account.id, e.state.primaryUser.id)
    })
  )

  it.effect("slow_down adds 5 s to the interval for every later poll", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const oauth = authStateArea(e.context).oauth
      const { result, waits } = yield* run(e, {
        // Polls 2 and 5 come too early (1 s after the previous one): the emulator answers slow_down.
        advance: (seconds, poll) => (poll === 2 || poll === 5 ? 1 : seconds),
        act: (poll, code) => {
          if (poll === 7) oauth.approveDevice(code)
        }
      })
      assert.isTrue(result._tag === "Success")
      assert.deepStrictEqual(waits, [5, 5, 10, 10, 10, 15, 15])
    })
  )

  it.effect("access_denied stops with a typed error", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const oauth = authStateArea(e.context).oauth
      const { result, waits } = yield* run(e, {
        act: (poll, code) => {
          if (poll === 2) oauth.denyDevice(code)
        }
      })
      assert.isTrue(result._tag === "Failure" && result.failure._tag === "DeviceLoginFailed")
      if (result._tag === "Failure" && result.failure._tag === "DeviceLoginFailed") {
        assert.strictEqual(result.failure.reason, "access_denied")
      }
      assert.deepStrictEqual(waits, [5, 5])
    })
  )

  it.effect("expired_token stops with a typed error", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const { result } = yield* run(e, { advance: (_, poll) => (poll === 2 ? 600 : 5) })
      assert.isTrue(result._tag === "Failure" && result.failure._tag === "DeviceLoginFailed")
      if (result._tag === "Failure" && result.failure._tag === "DeviceLoginFailed") {
        assert.strictEqual(result.failure.reason, "expired_token")
      }
    })
  )

  it.effect("the flow gives up by itself once the code's lifetime has passed", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      // Our clock passes the 600 s lifetime while the emulator's stays put (its code stays alive).
      const waits: Array<number> = []
      const error = yield* deviceLogin({
        clientId: e.clientId,
        scopes: SCOPES,
        prompt: () => Effect.void,
        sleep: (duration) => {
          waits.push(Duration.toSeconds(duration))
          return TestClock.adjust(duration)
        }
      }).pipe(Effect.provide(oauthLayer(e), { local: true }), Effect.flip)
      assert.strictEqual(error._tag, "DeviceLoginFailed")
      if (error._tag === "DeviceLoginFailed") assert.strictEqual(error.reason, "expired_token")
      assert.isAtLeast(
        waits.reduce((a, b) => a + b, 0),
        600
      )
    })
  )

  it.effect("the approved device code issued tokens once: polling it again is refused", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const oauth = authStateArea(e.context).oauth
      let code = ""
      const { result } = yield* run(e, {
        act: (poll, c) => {
          code = c
          if (poll === 1) oauth.approveDevice(c)
        }
      })
      assert.isTrue(result._tag === "Success")
      assert.isFalse(oauth.approveDevice(code))
    })
  )

  it("nextPoll follows the polling table", () => {
    assert.deepStrictEqual(nextPoll(5, "authorization_pending"), { _tag: "Continue", intervalSeconds: 5 })
    assert.deepStrictEqual(nextPoll(5, "slow_down"), { _tag: "Continue", intervalSeconds: 10 })
    assert.deepStrictEqual(nextPoll(10, "slow_down"), { _tag: "Continue", intervalSeconds: 15 })
    assert.deepStrictEqual(nextPoll(5, "access_denied"), { _tag: "Stop", reason: "access_denied" })
    assert.deepStrictEqual(nextPoll(5, "expired_token"), { _tag: "Stop", reason: "expired_token" })
    assert.deepStrictEqual(nextPoll(5, "invalid_grant"), { _tag: "Stop", reason: "rejected" })
  })
})

describe("OAuth discovery", () => {
  it.effect("uses discovered endpoints under auth_url", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const paths = yield* Effect.gen(function* () {
        return yield* (yield* OAuthEndpoints).paths
      }).pipe(Effect.provide(oauthLayer(e), { local: true }))
      assert.deepStrictEqual(paths, SPEC_PATHS)
      assert.strictEqual(countRequests(e, "GET", "/.well-known/oauth-authorization-server"), 1)
    })
  )

  it.live("falls back to the spec's paths when discovery fails, and still signs in", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      e.control.addFault({ kind: "status_500", path: "/.well-known/oauth-authorization-server", count: 10 })
      const oauth = authStateArea(e.context).oauth
      const { result } = yield* run(e, {
        act: (poll, code) => {
          if (poll === 1) oauth.approveDevice(code)
        }
      })
      assert.isTrue(result._tag === "Success")
    })
  )

  it("accepts only endpoints under auth_url", () => {
    assert.strictEqual(underRoot("https://svc.example", "https://svc.example/oauth/token"), "/oauth/token")
    assert.strictEqual(underRoot("https://svc.example/auth", "https://svc.example/auth/t"), "/t")
    assert.isUndefined(underRoot("https://svc.example/auth", "https://svc.example/other/t"))
    assert.isUndefined(underRoot("https://svc.example", "https://evil.example/oauth/token"))
    assert.isUndefined(underRoot("https://svc.example", "http://svc.example/oauth/token"))
    assert.isUndefined(underRoot("https://svc.example", "not a url"))
    assert.isUndefined(underRoot("https://svc.example", undefined))
  })
})
