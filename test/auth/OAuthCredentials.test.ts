/** OAuth credentials against the emulator: rotation, expiry, single flight, login required, file mode. */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import type { ApiError } from "../../src/api/ApiError.ts"
import { isLoginRequired } from "../../src/auth/AuthError.ts"
import { AuthStatus, needsRefresh, refreshMarginMs } from "../../src/auth/OAuthCredentials.ts"
import { OAuthEndpoints } from "../../src/auth/OAuthEndpoints.ts"
import { TOKEN_FILE } from "../../src/auth/TokenStore.ts"
import { authStateArea } from "../../src/emulator/oauthArea.ts"
import {
  countRequests,
  oauthClientLayer,
  oauthLayer,
  readTokens,
  seedTokens,
  useEmulator,
  useStateDir
} from "./support/fixtures.ts"

const getAccount = Effect.gen(function* () {
  return yield* (yield* ApiClient).account.get
})

const expectLoginRequired = (exit: { _tag: "Success" } | { _tag: "Failure"; failure: ApiError }) => {
  assert.strictEqual(exit._tag, "Failure")
  if (exit._tag === "Failure") assert.isTrue(isLoginRequired(exit.failure), exit.failure.message)
}

describe("OAuthCredentials", () => {
  it.live("a 401 refreshes once; the pair rotates and the old refresh token is rejected afterwards", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const seeded = yield* seedTokens(e, dir, { accessToken: Redacted.make("at_not_valid") })
      const account = yield* getAccount.pipe(Effect.provide(oauthClientLayer(e, dir), { local: true }))
      assert.strictEqual(account.id, e.state.primaryUser.id)
      assert.strictEqual(countRequests(e, "POST", "/oauth/token"), 1)

      const stored = yield* readTokens(dir)
      assert.isDefined(stored)
      assert.notStrictEqual(Redacted.value(stored!.refreshToken), Redacted.value(seeded.refreshToken))
      assert.strictEqual((Fs.statSync(Path.join(dir, TOKEN_FILE)).mode & 0o777).toString(8), "600")

      const reuse = yield* Effect.gen(function* () {
        return yield* (yield* OAuthEndpoints).token({ grantType: "refresh_token", refreshToken: seeded.refreshToken })
      }).pipe(Effect.provide(oauthLayer(e), { local: true }), Effect.flip)
      assert.isTrue(reuse.reason._tag === "OAuth" && reuse.reason.error === "invalid_grant")
    })
  )

  it.effect("tokens expiring every 3 s are refreshed ahead of expiry during a sequence of calls", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator({ accessTokenLifetimeSeconds: 3 })
      const dir = yield* useStateDir
      // Our clock and the emulator's move together; both start at the real time.
      const start = Date.now()
      yield* TestClock.setTime(start)
      const pair = authStateArea(e.context).oauth.issueTokens(e.state.primaryUser.id, e.clientId, ["user:read"])
      yield* seedTokens(
        e,
        dir,
        {
          accessToken: Redacted.make(pair.access_token),
          refreshToken: Redacted.make(pair.refresh_token),
          expiresAtMs: start + 3_000,
          lifetimeSeconds: 3
        },
        start
      )
      yield* Effect.gen(function* () {
        for (let step = 0; step < 40; step++) {
          const account = yield* getAccount
          assert.strictEqual(account.id, e.state.primaryUser.id)
          yield* TestClock.adjust(750)
          e.control.advanceClock(750)
        }
      }).pipe(Effect.provide(oauthClientLayer(e, dir), { local: true }))
      // 30 s of 3 s tokens: about one refresh per 2 s (refreshed 1 s before expiry), and no call ever got a 401.
      const refreshes = countRequests(e, "POST", "/oauth/token")
      assert.isAtLeast(refreshes, 12)
      assert.isAtMost(refreshes, 20)
      assert.strictEqual(
        e.control.requests().filter((r) => r.path.startsWith("/api/v1/account") && r.status === 401).length,
        0
      )
    })
  )

  it.live("concurrent calls with an expired token refresh once (single flight)", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      yield* seedTokens(e, dir, { expiresAtMs: Date.now() - 1_000 })
      const accounts = yield* Effect.all(
        Array.from({ length: 12 }, () => getAccount),
        {
          concurrency: "unbounded"
        }
      ).pipe(Effect.provide(oauthClientLayer(e, dir), { local: true }))
      assert.strictEqual(accounts.length, 12)
      assert.strictEqual(countRequests(e, "POST", "/oauth/token"), 1)
    })
  )

  it.live("invalid_grant is login required; a new sign-in in the token file heals a running client", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const oauth = authStateArea(e.context).oauth
      yield* seedTokens(e, dir, { expiresAtMs: Date.now() - 1_000 })
      oauth.revoke(e.refreshToken)
      yield* Effect.gen(function* () {
        expectLoginRequired(yield* Effect.result(getAccount))
        const status = yield* AuthStatus
        const problem = yield* status.loginRequired
        assert.isTrue(Option.isSome(problem) && problem.value.reason === "refresh_rejected")
        // Retried slowly by the daemon: the refused pair is not sent again.
        const before = countRequests(e, "POST", "/oauth/token")
        expectLoginRequired(yield* Effect.result(getAccount))
        assert.strictEqual(countRequests(e, "POST", "/oauth/token"), before)

        const pair = oauth.issueTokens(e.state.primaryUser.id, e.clientId, ["user:read"])
        yield* seedTokens(e, dir, {
          accessToken: Redacted.make(pair.access_token),
          refreshToken: Redacted.make(pair.refresh_token)
        })
        const account = yield* getAccount
        assert.strictEqual(account.id, e.state.primaryUser.id)
        assert.isTrue(Option.isNone(yield* status.loginRequired))
      }).pipe(Effect.provide(oauthClientLayer(e, dir), { local: true }))
    })
  )

  it.live("without a token file every call is login required, and nothing is sent", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      yield* Effect.gen(function* () {
        expectLoginRequired(yield* Effect.result(getAccount))
        const problem = yield* (yield* AuthStatus).loginRequired
        assert.isTrue(Option.isSome(problem) && problem.value.reason === "not_signed_in")
      }).pipe(Effect.provide(oauthClientLayer(e, dir), { local: true }))
      assert.strictEqual(countRequests(e, "GET", "/api/v1/account"), 0)
    })
  )

  it.live("tokens of another service are never sent to this one", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      yield* seedTokens(e, dir, { authUrl: "https://other.example", expiresAtMs: Date.now() - 1 })
      yield* Effect.gen(function* () {
        expectLoginRequired(yield* Effect.result(getAccount))
        const problem = yield* (yield* AuthStatus).loginRequired
        assert.isTrue(Option.isSome(problem) && problem.value.reason === "other_service")
      }).pipe(Effect.provide(oauthClientLayer(e, dir), { local: true }))
      assert.strictEqual(e.control.requests().length, 0)
    })
  )

  it.live("a refresh stored by another process is adopted instead of spending our refresh token", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const oauth = authStateArea(e.context).oauth
      yield* seedTokens(e, dir, { expiresAtMs: Date.now() - 1_000 })
      yield* Effect.gen(function* () {
        // The client has read the expired pair; "another process" rotates and stores first.
        const client = yield* ApiClient
        const pair = oauth.issueTokens(e.state.primaryUser.id, e.clientId, ["user:read"])
        yield* seedTokens(e, dir, {
          accessToken: Redacted.make(pair.access_token),
          refreshToken: Redacted.make(pair.refresh_token)
        })
        const account = yield* client.account.get
        assert.strictEqual(account.id, e.state.primaryUser.id)
      }).pipe(Effect.provide(oauthClientLayer(e, dir), { local: true }))
      assert.strictEqual(countRequests(e, "POST", "/oauth/token"), 0)
    })
  )

  it("refresh margin is a tenth of the lifetime, between 1 s and 60 s", () => {
    assert.strictEqual(refreshMarginMs(3), 1_000)
    assert.strictEqual(refreshMarginMs(300), 30_000)
    assert.strictEqual(refreshMarginMs(3600), 60_000)
    const tokens = {
      accessToken: Redacted.make("a"),
      refreshToken: Redacted.make("r"),
      expiresAtMs: 100_000,
      lifetimeSeconds: 3600,
      obtainedAtMs: 0,
      authUrl: "x",
      clientId: "c",
      scopes: []
    }
    assert.isFalse(needsRefresh(tokens, 39_999))
    assert.isTrue(needsRefresh(tokens, 40_000))
  })
})
