/**
 * When and how long to wait before sending a failed API request again. Pure: the caller
 * passes the clock reading and a random number, so every decision is reproducible.
 *
 * Retried: 429 (honouring Retry-After), 408, 425, 5xx and connection failures, with
 * exponential backoff and full jitter (pacing/backoff.ts). Which requests may be sent twice is decided per
 * operation (`Idempotency`):
 *
 * | operation                                   | class      | why                                        |
 * | ------------------------------------------- | ---------- | ------------------------------------------ |
 * | every GET (incl. OAuth discovery)           | idempotent | safe                                       |
 * | PUT /files/{id}/state, PUT /app-storage/{k} | idempotent | whole replacement; If-Match turns a replay |
 * |                                             |            | of an applied write into a 412, not a loss |
 * | DELETE state, storage item, download        | idempotent | a second delete changes nothing more       |
 * | POST /files/{id}/download-link              | idempotent | mints a link, changes no state             |
 * | POST /files/zip                             | idempotent | mints a link; there is no ZIP job to dup   |
 * | POST /files/delete (bulk)                   | idempotent | "already scheduled" also answers `deleted` |
 * | POST /cache/check                           | idempotent | read-only, reserves nothing                |
 * | POST /files/folder                          | unsafe     | a replay fails as "name already used"      |
 * | POST /downloads, /downloads/upload          | unsafe     | a replay creates (and bills) a second one  |
 * | POST /download-selections/{id}/choices      | unsafe     | a replay may answer a later stage          |
 * | POST /downloads/{id}/cancel, /retry         | unsafe     | retry starts (and bills) another attempt   |
 * | POST /oauth/device/authorize                | unsafe     | each call issues a new device code         |
 * | POST /oauth/token                           | unsafe     | refresh rotates; a device code issues once |
 *
 * An unsafe request is sent again only when it provably never reached the server
 * (connection refused, DNS failure): then no byte of it was processed.
 */
import { DateTime, Result } from "effect"
import { Headers } from "effect/http"
import { backoffDelay } from "../pacing/backoff.ts"
import type { ApiErrorReason } from "./ApiError.ts"

/** First backoff ceiling; full jitter draws the wait from [0, ceiling). */
export const RETRY_BASE_DELAY_MS = 500
/** Highest backoff ceiling. */
export const RETRY_MAX_DELAY_MS = 30_000
/** Attempts in all, the first one included. */
export const RETRY_MAX_ATTEMPTS = 5
/** Retry-After values above this are treated as this (a day: beyond it the header is noise). */
export const RETRY_AFTER_CAP_MS = 24 * 60 * 60 * 1000
/** The longest Retry-After waited for inside one call; a longer one is handed to the caller. */
export const RETRY_AFTER_MAX_INLINE_WAIT_MS = 60_000

export type Idempotency = "idempotent" | "unsafe"

/** The backoff schedule; tests shrink it, production uses `DEFAULT_RETRY_SCHEDULE`. */
export interface RetrySchedule {
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly maxAttempts: number
  readonly maxInlineWaitMs: number
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = {
  baseDelayMs: RETRY_BASE_DELAY_MS,
  maxDelayMs: RETRY_MAX_DELAY_MS,
  maxAttempts: RETRY_MAX_ATTEMPTS,
  maxInlineWaitMs: RETRY_AFTER_MAX_INLINE_WAIT_MS
}

/** Statuses that mean "try again later" besides 429. */
export const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 425 || (status >= 500 && status <= 599)

/**
 * Reads Retry-After: delta-seconds (digits only) or an HTTP date (RFC 9110 forms). Returns the delay in
 * milliseconds, capped at `RETRY_AFTER_CAP_MS`; a date in the past gives 0. Garbage,
 * negative or fractional values give `undefined` (then plain backoff applies).
 */
export const parseRetryAfter = (header: string | undefined, nowMs: number): number | undefined => {
  if (header === undefined) return undefined
  const text = header.trim()
  if (text === "") return undefined
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, RETRY_AFTER_CAP_MS)
  const at = Headers.parseHttpDate(text)
  if (Result.isFailure(at)) return undefined
  return Math.min(Math.max(0, DateTime.toEpochMillis(at.success) - nowMs), RETRY_AFTER_CAP_MS)
}

/**
 * Decides whether to send again after `attempts` attempts ended in `failure`. Returns the
 * wait in milliseconds, or `undefined` to give up and surface the failure.
 */
export const retryDelay = (input: {
  readonly failure: ApiErrorReason
  readonly idempotency: Idempotency
  readonly attempts: number
  readonly random: number
  readonly schedule?: RetrySchedule
}): number | undefined => {
  const schedule = input.schedule ?? DEFAULT_RETRY_SCHEDULE
  if (input.attempts >= schedule.maxAttempts) return undefined
  const failure = input.failure
  const mayResend = input.idempotency === "idempotent" || (failure._tag === "Transport" && failure.neverSent)
  if (!mayResend) return undefined
  const backoff = backoffDelay(input.attempts, input.random, schedule.baseDelayMs, schedule.maxDelayMs)
  switch (failure._tag) {
    case "Transport":
      // A refused certificate is refused again.
      return failure.certificate === undefined ? backoff : undefined
    case "Server":
      return backoff
    case "RateLimited": {
      const asked = failure.retryAfterMillis
      if (asked === undefined) return backoff
      if (asked > schedule.maxInlineWaitMs) return undefined
      return Math.max(asked, backoff)
    }
    default:
      return undefined
  }
}
