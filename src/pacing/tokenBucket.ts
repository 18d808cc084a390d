/**
 * Token bucket arithmetic (pure), shared by the bandwidth limit (tokens are bytes, the
 * rate per second) and the app-state request budget (tokens are requests, the rate per
 * minute). The bucket refills at `rate` tokens per `periodMs` up to `burst`.
 *
 * Two ways to take: `take` hands out tokens that are not there yet and leaves a debt (a
 * reader that has already received the bytes pauses for the returned wait, so the
 * long-run rate never exceeds `rate`, and at most `burst` passes ahead of it);
 * `takeIfAvailable` takes only what is there, and otherwise says when it will be (a
 * request not yet sent asks again then).
 */
export interface TokenBucket {
  readonly tokens: number
  /** Milliseconds timestamp of the last refill. */
  readonly at: number
}

export const fullBucket = (burst: number, now: number): TokenBucket => ({ tokens: burst, at: now })

/** The tokens there at `now`: refilled for the time since `bucket.at`, up to `burst`. */
const refilled = (bucket: TokenBucket, rate: number, burst: number, now: number, periodMs: number): number =>
  Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) * rate) / periodMs)

/** How long until `missing` tokens have refilled. */
const waitFor = (missing: number, rate: number, periodMs: number): number =>
  missing <= 0 ? 0 : Math.ceil((missing * periodMs) / rate)

/** Takes `n` tokens at `now` from a bucket refilling at `rate` per `periodMs` (default a second). */
type Take = (
  bucket: TokenBucket,
  n: number,
  rate: number,
  burst: number,
  now: number,
  periodMs?: number
) => { readonly bucket: TokenBucket; readonly waitMs: number }

/** Refills, then takes `n` even into debt; returns the new bucket and how long to pause (ms). */
export const take: Take = (bucket, n, rate, burst, now, periodMs = 1000) => {
  const tokens = refilled(bucket, rate, burst, now, periodMs) - n
  return { bucket: { tokens, at: now }, waitMs: waitFor(-tokens, rate, periodMs) }
}

/** Refills, then takes `n` if they are there (wait 0); otherwise takes nothing and says how long until they are. */
export const takeIfAvailable: Take = (bucket, n, rate, burst, now, periodMs = 1000) => {
  const tokens = refilled(bucket, rate, burst, now, periodMs)
  if (tokens >= n) return { bucket: { tokens: tokens - n, at: now }, waitMs: 0 }
  return { bucket: { tokens, at: now }, waitMs: waitFor(n - tokens, rate, periodMs) }
}
