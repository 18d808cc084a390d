/**
 * The app-state request budget (pure): a token bucket (pacing/tokenBucket.ts) of requests
 * per minute, so this device stays under `app_state.max_requests_per_minute` (the service
 * allows 1,200 per user and app across all devices). A 429 pauses all requests for its
 * Retry-After and halves the rate for `REDUCED_FOR_MS`; a quiet period restores the
 * configured rate.
 */
import { type TokenBucket, takeIfAvailable } from "../pacing/tokenBucket.ts"

/** How long a halved rate lasts after the last 429. */
export const REDUCED_FOR_MS = 5 * 60_000
/** Pause after a 429 without a usable Retry-After. */
export const DEFAULT_RETRY_AFTER_MS = 60_000
/** The rate never drops below this many requests per minute. */
export const MIN_RATE_PER_MINUTE = 6

/** A token bucket of requests (`tokens` may be fractional) with the 429 state around it. */
export interface RequestBudget extends TokenBucket {
  /** The rate in force, requests per minute. */
  readonly ratePerMinute: number
  /** Until then the rate stays reduced. */
  readonly reducedUntil: number
  /** Until then no request is sent (Retry-After). */
  readonly pausedUntil: number
}

/** At most ten seconds' worth of requests may go at once. */
export const burstOf = (ratePerMinute: number): number => Math.max(1, Math.ceil(ratePerMinute / 6))

export const makeBudget = (maxPerMinute: number, now: number): RequestBudget => ({
  tokens: burstOf(maxPerMinute),
  at: now,
  ratePerMinute: maxPerMinute,
  reducedUntil: now,
  pausedUntil: now
})

/** Takes one request if one is available now; otherwise says how long to wait before asking again. */
export const acquire = (
  budget: RequestBudget,
  now: number,
  maxPerMinute: number
): { readonly budget: RequestBudget; readonly waitMs: number } => {
  if (now < budget.pausedUntil) return { budget, waitMs: budget.pausedUntil - now }
  const rate = now >= budget.reducedUntil ? maxPerMinute : budget.ratePerMinute
  const r = takeIfAvailable(budget, 1, rate, burstOf(rate), now, 60_000)
  return { budget: { ...budget, ...r.bucket, ratePerMinute: rate }, waitMs: r.waitMs }
}

/** A 429: pause for Retry-After (or the default), halve the rate and keep it halved for a while. */
export const rateLimited = (budget: RequestBudget, now: number, retryAfterMs: number | undefined): RequestBudget => ({
  // Nothing accrues during the pause.
  tokens: 0,
  at: now + (retryAfterMs ?? DEFAULT_RETRY_AFTER_MS),
  ratePerMinute: Math.max(MIN_RATE_PER_MINUTE, Math.floor(budget.ratePerMinute / 2)),
  reducedUntil: now + REDUCED_FOR_MS,
  pausedUntil: now + (retryAfterMs ?? DEFAULT_RETRY_AFTER_MS)
})
