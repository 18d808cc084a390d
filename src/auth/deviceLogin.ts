/**
 * The OAuth device flow (RFC 8628) as the spec's polling table says:
 *
 *   authorize ─► prompt (URL, user code) ─► wait `interval` ─► poll token endpoint
 *                                             ▲                 │ authorization_pending: same interval
 *                                             └─────────────────┤ slow_down: interval + 5 s, kept
 *                                                               │ access_denied / expired_token: stop
 *                                                               └ 200: tokens (a code issues them once)
 *
 * Invariants: the first poll waits one interval; the interval never shrinks; the flow
 * stops by itself once the code's `expires_in` has passed; a device code is never logged.
 */
import { Clock, Duration, Effect, Redacted } from "effect"
import type { ApiError } from "../api/ApiError.ts"
import { DEVICE_CODE_GRANT } from "../api/oauth.ts"
import type { DeviceAuthorization, TokenResponse } from "../api/schemas/oauth.ts"
import { DeviceLoginFailed } from "./AuthError.ts"
import { OAuthEndpoints } from "./OAuthEndpoints.ts"
import type { StoredTokens } from "./TokenStore.ts"

/** Seconds added to the interval for each `slow_down` (spec: device polling table). */
export const SLOW_DOWN_STEP_SECONDS = 5
/** Interval used when an answer gives none smaller than this (spec: initial interval 5 s). */
export const MIN_INTERVAL_SECONDS = 1

export interface DeviceLoginOptions {
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
  /** Shows the verification URL and user code (and a QR code) to the user. */
  prompt(authorization: DeviceAuthorization): Effect.Effect<void>
  /** Waits between polls; default `Effect.sleep` (tests drive it with TestClock or a fake). */
  readonly sleep?: (duration: Duration.Duration) => Effect.Effect<void>
}

/** What to do after one poll answered with an OAuth error code. */
export type PollStep =
  | { readonly _tag: "Continue"; readonly intervalSeconds: number }
  | { readonly _tag: "Stop"; readonly reason: DeviceLoginFailed["reason"] }

/** The polling table as a function: the next interval, or why to stop. */
export const nextPoll = (intervalSeconds: number, oauthError: string): PollStep => {
  switch (oauthError) {
    case "authorization_pending":
      return { _tag: "Continue", intervalSeconds }
    case "slow_down":
      return { _tag: "Continue", intervalSeconds: intervalSeconds + SLOW_DOWN_STEP_SECONDS }
    case "access_denied":
      return { _tag: "Stop", reason: "access_denied" }
    case "expired_token":
      return { _tag: "Stop", reason: "expired_token" }
    default:
      return { _tag: "Stop", reason: "rejected" }
  }
}

/** Runs the device flow until the user approves (tokens), refuses, or the code expires. */
export const deviceLogin = Effect.fn("deviceLogin")(function* (
  options: DeviceLoginOptions
): Effect.fn.Return<TokenResponse, DeviceLoginFailed | ApiError, OAuthEndpoints> {
  const oauth = yield* OAuthEndpoints
  const sleep = options.sleep ?? Effect.sleep
  const authorization = yield* oauth.authorizeDevice(options.clientId, options.scopes)
  yield* options.prompt(authorization)
  const deadline = (yield* Clock.currentTimeMillis) + authorization.expires_in * 1000
  const deviceCode = Redacted.make(authorization.device_code)
  let interval = Math.max(MIN_INTERVAL_SECONDS, authorization.interval)
  for (;;) {
    yield* sleep(Duration.seconds(interval))
    if ((yield* Clock.currentTimeMillis) >= deadline) {
      return yield* new DeviceLoginFailed({ reason: "expired_token", detail: "the code's lifetime passed" })
    }
    const outcome = yield* Effect.result(
      oauth.token({ grantType: DEVICE_CODE_GRANT, clientId: options.clientId, deviceCode })
    )
    if (outcome._tag === "Success") return outcome.success
    const reason = outcome.failure.reason
    switch (reason._tag) {
      case "OAuth": {
        const step = nextPoll(interval, reason.error)
        if (step._tag === "Stop") {
          return yield* new DeviceLoginFailed({ reason: step.reason, detail: `${reason.error}: ${reason.message}` })
        }
        interval = step.intervalSeconds
        break
      }
      case "RateLimited":
        // Too many requests is the same message as slow_down, said with HTTP.
        interval += SLOW_DOWN_STEP_SECONDS
        if (reason.retryAfterMillis !== undefined) yield* sleep(Duration.millis(reason.retryAfterMillis))
        break
      case "Server":
      case "Transport":
        yield* Effect.logWarning("sign-in poll failed; trying again").pipe(
          Effect.annotateLogs({ reason: reason._tag, message: reason.message })
        )
        break
      default:
        return yield* outcome.failure
    }
  }
})

/** A token answer as stored tokens for `authUrl`, issued at `nowMs`. */
export const toStoredTokens = (
  response: TokenResponse,
  context: {
    readonly authUrl: string
    readonly clientId: string
    readonly scopes: ReadonlyArray<string>
    readonly nowMs: number
  }
): StoredTokens => ({
  accessToken: Redacted.make(response.access_token),
  refreshToken: Redacted.make(response.refresh_token),
  expiresAtMs: context.nowMs + response.expires_in * 1000,
  lifetimeSeconds: response.expires_in,
  obtainedAtMs: context.nowMs,
  authUrl: context.authUrl,
  clientId: context.clientId,
  scopes: context.scopes
})
