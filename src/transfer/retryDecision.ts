/**
 * What the transfer engine does after an attempt at a file failed (pure): the caller passes
 * the fault, what this call counted so far and a random number, and gets back a decision and
 * the new counts, so every decision is reproducible.
 *
 * | fault          | decision                                                         | counts as an attempt |
 * | -------------- | ---------------------------------------------------------------- | -------------------- |
 * | `rate-limited` | wait as long as the service asked (else backoff); beyond         | no (the account's    |
 * |                | `maxRateLimitWaitMs`: stop as RateLimited, neither parked nor    | limit, not the file) |
 * |                | failed                                                           |                      |
 * | `transient`    | backoff (full jitter), then again from the bytes written; the    | yes                  |
 * |                | `maxAttempts`-th parks                                           |                      |
 * | `link`         | a fresh link at once; beyond `maxLinkRefreshes`, park            | yes                  |
 * | `restart`      | from zero (one plain GET if Range is ignored); beyond            | yes                  |
 * |                | `maxRestarts`, park                                              |                      |
 * | `no-space`     | pause until space returns                                        | yes                  |
 * | `fatal`        | park with the fault's reason                                     | yes                  |
 *
 * Invariant: a call ends. Without rate limits, at most `maxAttempts - 1 + maxLinkRefreshes +
 * maxRestarts` decisions in a row try again; every other one gives up (parks or pauses).
 * The counts are per call (a pass); what a file was ever through is the journal's.
 */
import { backoffDelay } from "../pacing/backoff.ts"
import type { FaultKind } from "./TransferFault.ts"

/** What failed, as the decision needs it (a `TransferFault` is one). */
export interface FailedAttempt {
  readonly kind: FaultKind
  readonly message: string
  readonly noRanges: boolean
  readonly retryAfterMillis?: number
}

export interface RetryLimits {
  readonly maxAttempts: number
  readonly maxLinkRefreshes: number
  readonly maxRestarts: number
  readonly backoffBaseMs: number
  readonly backoffMaxMs: number
  /** The longest rate-limit wait made; null waits as long as asked. */
  readonly maxRateLimitWaitMs: number | null
}

/** What one call has been through so far. */
export interface RetryCounts {
  /** Transient failures. */
  readonly failures: number
  readonly rateLimitWaits: number
  readonly linkRefreshes: number
  readonly restarts: number
}

export const NO_RETRIES: RetryCounts = { failures: 0, rateLimitWaits: 0, linkRefreshes: 0, restarts: 0 }

export type RetryDecision =
  /** Wait for the service's rate limit, then try again. */
  | { readonly _tag: "WaitForRateLimit"; readonly delayMs: number }
  /** The rate limit asks for a longer wait than allowed: stop without parking. */
  | { readonly _tag: "RateLimited"; readonly delayMs: number }
  /** Wait, then try again from the bytes written. */
  | { readonly _tag: "Backoff"; readonly delayMs: number }
  /** Drop the link and try again at once with a fresh one. */
  | { readonly _tag: "FreshLink" }
  /** Drop the bytes written and try again from zero (one plain GET when `noRanges`). */
  | { readonly _tag: "Restart"; readonly noRanges: boolean }
  /** Stop until disk space returns. */
  | { readonly _tag: "PauseForSpace" }
  /** Give up on this file for this call, with the reason. */
  | { readonly _tag: "Park"; readonly reason: string }

export interface RetryStep {
  readonly decision: RetryDecision
  readonly counts: RetryCounts
  /** The failure counts as an attempt at the file (everything but the service's rate limit). */
  readonly attempt: boolean
}

export const decideRetry = (input: {
  readonly failed: FailedAttempt
  readonly counts: RetryCounts
  readonly limits: RetryLimits
  /** In [0, 1): draws the backoff's jitter. */
  readonly random: number
}): RetryStep => {
  const { failed, counts, limits, random } = input
  const attempt = (decision: RetryDecision, next: RetryCounts = counts): RetryStep => ({
    decision,
    counts: next,
    attempt: true
  })
  switch (failed.kind) {
    case "rate-limited": {
      // A wait the service named is no step of the backoff.
      const asked = failed.retryAfterMillis
      const rateLimitWaits = counts.rateLimitWaits + (asked === undefined ? 1 : 0)
      const delayMs = asked ?? backoffDelay(rateLimitWaits, random, limits.backoffBaseMs, limits.backoffMaxMs)
      const tooLong = limits.maxRateLimitWaitMs !== null && delayMs > limits.maxRateLimitWaitMs
      return {
        decision: tooLong ? { _tag: "RateLimited", delayMs } : { _tag: "WaitForRateLimit", delayMs },
        counts: { ...counts, rateLimitWaits },
        attempt: false
      }
    }
    case "fatal":
      return attempt({ _tag: "Park", reason: failed.message })
    case "no-space":
      return attempt({ _tag: "PauseForSpace" })
    case "link": {
      const linkRefreshes = counts.linkRefreshes + 1
      const next = { ...counts, linkRefreshes }
      return linkRefreshes > limits.maxLinkRefreshes
        ? attempt({ _tag: "Park", reason: `${failed.message} after ${limits.maxLinkRefreshes} fresh links` }, next)
        : attempt({ _tag: "FreshLink" }, next)
    }
    case "restart": {
      const restarts = counts.restarts + 1
      const next = { ...counts, restarts }
      return restarts > limits.maxRestarts
        ? attempt({ _tag: "Park", reason: `${failed.message} (restarted ${restarts - 1} times)` }, next)
        : attempt({ _tag: "Restart", noRanges: failed.noRanges }, next)
    }
    case "transient": {
      const failures = counts.failures + 1
      const next = { ...counts, failures }
      return failures >= limits.maxAttempts
        ? attempt({ _tag: "Park", reason: `${failed.message} (${failures} attempts)` }, next)
        : attempt(
            { _tag: "Backoff", delayMs: backoffDelay(failures, random, limits.backoffBaseMs, limits.backoffMaxMs) },
            next
          )
    }
  }
}
