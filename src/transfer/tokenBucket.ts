/**
 * Token bucket arithmetic (pure). Tokens are bytes; the bucket refills at `rate` bytes
 * per second up to `burst`. Taking more than is there leaves a debt (negative tokens) and
 * returns how long the taker must wait until the debt is paid, so a caller that has
 * already received bytes simply pauses for that long: the long-run rate never exceeds
 * `rate`, and at most `burst` bytes pass ahead of it.
 */
export interface TokenBucket {
  readonly tokens: number
  /** Milliseconds timestamp of the last refill. */
  readonly at: number
}

export const fullBucket = (burst: number, now: number): TokenBucket => ({ tokens: burst, at: now })

/** Refills for the time since `bucket.at`, then takes `n`; returns the new bucket and the wait in ms. */
export const take = (
  bucket: TokenBucket,
  n: number,
  rate: number,
  burst: number,
  now: number
): { readonly bucket: TokenBucket; readonly waitMs: number } => {
  const elapsed = Math.max(0, now - bucket.at)
  const tokens = Math.min(burst, bucket.tokens + (elapsed * rate) / 1000) - n
  return { bucket: { tokens, at: now }, waitMs: tokens >= 0 ? 0 : Math.ceil((-tokens * 1000) / rate) }
}
