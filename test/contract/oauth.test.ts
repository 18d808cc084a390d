/**
 * OAuth at auth_url through the client: discovery, device authorization, token polling
 * (authorization_pending, slow_down, access_denied, expired_token, approval through the
 * control API, tokens once), refresh-token rotation, the device-authorize rate limit, and
 * tokens in use on the API.
 */

import { createHash, randomBytes } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { Credentials } from "../../src/api/Credentials.ts"
import { DEVICE_CODE_GRANT, type TokenGrant } from "../../src/api/oauth.ts"
import {
  CONFIDENTIAL_CLIENT_ID,
  CONFIDENTIAL_CLIENT_SECRET,
  REDIRECT_URI,
  WEB_CLIENT_ID
} from "../../src/emulator/oauthClients.ts"
import {
  Emulator,
  expectReason,
  freshUser,
  issueToken,
  logMark,
  rawCall,
  requestsSince,
  withClient
} from "./harness.ts"

const USER_CODE = /^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$/

/** The device-code grant for `deviceCode` of the emulator's device client. */
const deviceGrant = (clientId: string, deviceCode: string): TokenGrant => ({
  grantType: DEVICE_CODE_GRANT,
  clientId,
  deviceCode: Redacted.make(deviceCode)
})

/** POST /_control/oauth/device/{approve,deny} with the user code; its status. */
const answerDevice = (action: "approve" | "deny", userCode: string) =>
  Emulator.use((e) =>
    rawCall("POST", `${e.controlUrl}/oauth/device/${action}`, {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_code: userCode })
    })
  )

layer(Emulator.layer())("oauth", (it) => {
  it.effect("discovery: the metadata names the endpoints, grants, scopes and client authentication methods", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const metadata = yield* withClient("unused", (c) => c.oauth.discover)
      assert.strictEqual(metadata.token_endpoint, `${e.authUrl}/oauth/token`)
      assert.strictEqual(metadata.device_authorization_endpoint, `${e.authUrl}/oauth/device/authorize`)
      assert.include(metadata.grant_types_supported ?? [], DEVICE_CODE_GRANT)
      assert.include(metadata.grant_types_supported ?? [], "refresh_token")
      assert.include(metadata.scopes_supported ?? [], "files:read")
      assert.isAbove(metadata.token_endpoint_auth_methods_supported?.length ?? 0, 0)
    })
  )

  it.effect(
    "device flow: pending, slow_down (+5 s), approval through control, tokens once, tokens work on the API",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        yield* withClient("unused", (c) =>
          Effect.gen(function* () {
            const mark = yield* logMark
            const device = yield* c.oauth.authorizeDevice(e.clientId)
            assert.match(device.user_code, USER_CODE)
            assert.strictEqual(device.expires_in, 600)
            assert.strictEqual(device.interval, 5)
            assert.isTrue(URL.canParse(device.verification_uri))
            assert.include(device.verification_uri_complete, device.user_code)
            // OAuth endpoints take no API bearer.
            assert.isUndefined((yield* requestsSince(mark)).at(-1)?.headers.authorization)

            const grant = deviceGrant(e.clientId, device.device_code)
            const pending = yield* expectReason(c.oauth.token(grant), "OAuth", 400)
            assert.strictEqual(pending.error, "authorization_pending")
            // Polled again at once: too fast.
            const slow = yield* expectReason(c.oauth.token(grant), "OAuth", 400)
            assert.strictEqual(slow.error, "slow_down")
            // Each slow_down adds 5 s: 5 s later is too fast again (now 15 s), 15 s after that is fine.
            e.control.advanceClock(5_000)
            assert.strictEqual((yield* expectReason(c.oauth.token(grant), "OAuth", 400)).error, "slow_down")
            e.control.advanceClock(15_000)
            assert.strictEqual((yield* expectReason(c.oauth.token(grant), "OAuth", 400)).error, "authorization_pending")

            assert.strictEqual((yield* answerDevice("approve", device.user_code)).status, 204)
            e.control.advanceClock(15_000)
            const tokens = yield* c.oauth.token(grant)
            assert.strictEqual(tokens.token_type, "Bearer")
            assert.isAbove(tokens.expires_in, 0)
            // A device code issues tokens once.
            e.control.advanceClock(15_000)
            assert.strictEqual((yield* expectReason(c.oauth.token(grant), "OAuth", 400)).error, "invalid_grant")

            const account = yield* withClient(tokens.access_token, (api) => api.account.get)
            assert.strictEqual(account.id, e.state.primaryUser.id)
          })
        )
      })
  )

  it.effect("device flow: a refused request answers access_denied; an old code expired_token", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      yield* withClient("unused", (c) =>
        Effect.gen(function* () {
          const denied = yield* c.oauth.authorizeDevice(e.clientId)
          assert.strictEqual((yield* answerDevice("deny", denied.user_code)).status, 204)
          const refusal = yield* expectReason(c.oauth.token(deviceGrant(e.clientId, denied.device_code)), "OAuth", 400)
          assert.strictEqual(refusal.error, "access_denied")

          const late = yield* c.oauth.authorizeDevice(e.clientId)
          e.control.advanceClock(600_000)
          const expired = yield* expectReason(c.oauth.token(deviceGrant(e.clientId, late.device_code)), "OAuth", 400)
          assert.strictEqual(expired.error, "expired_token")
        })
      )
    })
  )

  it.effect("device authorization refuses unknown clients and clients without Device Flow: invalid_client (401)", () =>
    Effect.gen(function* () {
      yield* withClient("unused", (c) =>
        Effect.gen(function* () {
          for (const clientId of ["00000000-0000-4000-8000-000000000000", CONFIDENTIAL_CLIENT_ID]) {
            const refused = yield* expectReason(c.oauth.authorizeDevice(clientId), "OAuth", 401)
            assert.strictEqual(refused.error, "invalid_client")
          }
          // Not a UUID: refused before sending.
          assert.strictEqual(
            (yield* expectReason(c.oauth.authorizeDevice("not-a-uuid"), "ClientValidation")).field,
            "client_id"
          )
        })
      )
    })
  )

  it.effect("refresh rotation: the answer carries a new refresh token; the old one is rejected from then on", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      yield* withClient("unused", (c) =>
        Effect.gen(function* () {
          const refresh = (token: string): TokenGrant => ({
            grantType: "refresh_token",
            refreshToken: Redacted.make(token),
            clientId: e.clientId
          })
          const rotated = yield* c.oauth.token(refresh(user.refreshToken))
          assert.notStrictEqual(rotated.refresh_token, user.refreshToken)
          assert.notStrictEqual(rotated.access_token, user.accessToken)
          const reused = yield* expectReason(c.oauth.token(refresh(user.refreshToken)), "OAuth", 400)
          assert.strictEqual(reused.error, "invalid_grant")
          const again = yield* c.oauth.token(refresh(rotated.refresh_token))
          assert.notStrictEqual(again.refresh_token, rotated.refresh_token)
          yield* expectReason(c.oauth.token(refresh(rotated.refresh_token)), "OAuth", 400)
          // The newest access token works on the API for the same user.
          const account = yield* withClient(again.access_token, (api) => api.account.get)
          assert.strictEqual(account.id, user.userId)
        })
      )
    })
  )

  it.effect("after a 401 the client asks the credentials for a fresh bearer and sends the request once more", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const stale = yield* issueToken(user.userId, e.clientId, ["user:read"])
      yield* rawCall("POST", `${e.controlUrl}/oauth/revoke`, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: stale })
      })
      let current = stale
      const asked: Array<string> = []
      const credentials = Layer.succeed(
        Credentials,
        Credentials.of({
          bearer: Effect.sync(() => Redacted.make(current)),
          refreshAfterUnauthorized: (used) =>
            Effect.sync(() => {
              asked.push(Redacted.value(used))
              current = user.accessToken
              return true
            })
        })
      )
      const mark = yield* logMark
      const account = yield* withClient(credentials, (c) => c.account.get)
      assert.strictEqual(account.id, user.userId)
      assert.deepStrictEqual(asked, [stale])
      assert.deepStrictEqual(
        (yield* requestsSince(mark)).map((r) => [r.status, r.headers.authorization]),
        [
          [401, `Bearer ${stale}`],
          [200, `Bearer ${user.accessToken}`]
        ]
      )
    })
  )

  it.effect("a revoked access token is Unauthorized on the API, with a Bearer challenge", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      assert.strictEqual((yield* withClient(user.accessToken, (c) => c.account.get)).id, user.userId)
      const revoked = yield* rawCall("POST", `${e.controlUrl}/oauth/revoke`, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: user.accessToken })
      })
      assert.strictEqual(revoked.status, 200)
      const reason = yield* expectReason(
        withClient(user.accessToken, (c) => c.account.get),
        "Unauthorized",
        401
      )
      assert.match(reason.challenge ?? "", /^Bearer/)
    })
  )
})

/** Runs the browser half of Authorization Code + PKCE (the emulator consents at once); the code and state. */
const authorize = (clientId: string, verifier: string, state: string) =>
  Emulator.use((e) =>
    Effect.promise(async () => {
      const url = new URL(`${e.authUrl}/oauth/authorize`)
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        state,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
        scope: "user:read files:read"
      }).toString()
      const response = await fetch(url, { redirect: "manual" })
      const location = new URL(response.headers.get("location") ?? "http://invalid/")
      return {
        status: response.status,
        code: location.searchParams.get("code") ?? "",
        state: location.searchParams.get("state")
      }
    })
  )

layer(Emulator.layer())("authorization code with PKCE", (it) => {
  it.effect(
    "a public client exchanges the code once with its verifier; a wrong verifier or a reused code is invalid_grant",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const verifier = randomBytes(48).toString("base64url")
        const grant = (code: string, codeVerifier: string, redirectUri = REDIRECT_URI): TokenGrant => ({
          grantType: "authorization_code",
          code: Redacted.make(code),
          codeVerifier: Redacted.make(codeVerifier),
          clientId: WEB_CLIENT_ID,
          redirectUri
        })
        yield* withClient("unused", (c) =>
          Effect.gen(function* () {
            const first = yield* authorize(WEB_CLIENT_ID, verifier, "st-1")
            assert.strictEqual(first.status, 302)
            assert.strictEqual(first.state, "st-1")
            const wrong = yield* expectReason(
              c.oauth.token(grant(first.code, randomBytes(48).toString("base64url"))),
              "OAuth",
              400
            )
            assert.strictEqual(wrong.error, "invalid_grant")
            const mismatch = yield* authorize(WEB_CLIENT_ID, verifier, "st-m")
            const moved = yield* expectReason(
              c.oauth.token(grant(mismatch.code, verifier, "http://127.0.0.1/elsewhere")),
              "OAuth",
              400
            )
            assert.strictEqual(moved.error, "invalid_grant")
            const second = yield* authorize(WEB_CLIENT_ID, verifier, "st-2")
            const tokens = yield* c.oauth.token(grant(second.code, verifier))
            assert.strictEqual(tokens.token_type, "Bearer")
            const reused = yield* expectReason(c.oauth.token(grant(second.code, verifier)), "OAuth", 400)
            assert.strictEqual(reused.error, "invalid_grant")
            // The token carries the requested scopes: user:read yes, storage:read no.
            const account = yield* withClient(tokens.access_token, (api) => api.account.get)
            assert.strictEqual(account.id, e.state.primaryUser.id)
            yield* expectReason(
              withClient(tokens.access_token, (api) => api.storage.list()),
              "Forbidden",
              403
            )
            // A verifier outside 43..128 characters of the allowed set is refused before sending.
            const short = yield* expectReason(c.oauth.token(grant(second.code, "short")), "ClientValidation")
            assert.strictEqual(short.field, "code_verifier")
          })
        )
      })
  )

  it.effect(
    "a confidential client must send its secret; its refresh token is refused to another client (401 invalid_request)",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const verifier = randomBytes(48).toString("base64url")
        yield* withClient("unused", (c) =>
          Effect.gen(function* () {
            const codeGrant = (code: string, secret?: string): TokenGrant => ({
              grantType: "authorization_code",
              code: Redacted.make(code),
              codeVerifier: Redacted.make(verifier),
              clientId: CONFIDENTIAL_CLIENT_ID,
              redirectUri: REDIRECT_URI,
              ...(secret === undefined ? {} : { clientSecret: Redacted.make(secret) })
            })
            const withoutSecret = yield* authorize(CONFIDENTIAL_CLIENT_ID, verifier, "s")
            const noSecret = yield* expectReason(c.oauth.token(codeGrant(withoutSecret.code)), "OAuth", 401)
            assert.strictEqual(noSecret.error, "invalid_client")
            const ok = yield* authorize(CONFIDENTIAL_CLIENT_ID, verifier, "s")
            const tokens = yield* c.oauth.token(codeGrant(ok.code, CONFIDENTIAL_CLIENT_SECRET))
            const stolen = yield* expectReason(
              c.oauth.token({
                grantType: "refresh_token",
                refreshToken: Redacted.make(tokens.refresh_token),
                clientId: e.clientId
              }),
              "OAuth",
              401
            )
            assert.strictEqual(stolen.error, "invalid_request")
            assert.isAbove(stolen.message.length, 0)
            // The rightful client still refreshes with it.
            const rotated = yield* c.oauth.token({
              grantType: "refresh_token",
              refreshToken: Redacted.make(tokens.refresh_token),
              clientId: CONFIDENTIAL_CLIENT_ID,
              clientSecret: Redacted.make(CONFIDENTIAL_CLIENT_SECRET)
            })
            assert.notStrictEqual(rotated.refresh_token, tokens.refresh_token)
          })
        )
      })
  )
})

layer(Emulator.layer())("device authorization rate limit", (it) => {
  it.effect("the 31st device authorization within a minute is 429 with Retry-After, surfaced as RateLimited", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      yield* withClient("unused", (c) =>
        Effect.gen(function* () {
          for (let n = 0; n < 30; n++) yield* c.oauth.authorizeDevice(e.clientId)
          const mark = yield* logMark
          const limited = yield* expectReason(c.oauth.authorizeDevice(e.clientId), "RateLimited", 429)
          assert.isAbove(limited.retryAfterMillis ?? 0, 0)
          assert.isAtMost(limited.retryAfterMillis ?? 0, 60_000)
          // Device authorization is never resent by the client: one request.
          assert.strictEqual((yield* requestsSince(mark)).length, 1)
          // A minute later the window has room again (the client honours Retry-After on its own clock too).
          e.control.advanceClock(61_000)
          yield* TestClock.adjust("61 seconds")
          yield* c.oauth.authorizeDevice(e.clientId)
        })
      )
    })
  )
})
