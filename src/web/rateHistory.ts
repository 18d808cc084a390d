/**
 * The transfer rate of the last hour, for the web page's graph: the daemon samples the
 * rate of all transfers every second and keeps one average per RATE_BUCKET_SECONDS in a ring
 * of RATE_BUCKETS (an hour), so a page opened now draws the hour before it. Pure: the caller
 * passes the time and the rate.
 */

/** One average of the rate over a bucket. */
export interface RateSample {
  /** The bucket's end, ms since the epoch. */
  readonly at: number
  readonly bytesPerSecond: number
}

export const RATE_BUCKET_SECONDS = 10

/** An hour of buckets. */
export const RATE_BUCKETS = 360

export interface RateHistory {
  /** Adds one reading; the bucket it closes, if it closes one. */
  readonly add: (now: number, bytesPerSecond: number) => RateSample | undefined
  /** The closed buckets, oldest first. */
  readonly samples: () => ReadonlyArray<RateSample>
}

export const makeRateHistory = (): RateHistory => {
  const ring: Array<RateSample> = []
  let next = 0
  let bucket: { readonly start: number; sum: number; count: number } | undefined
  return {
    add: (now, bytesPerSecond) => {
      bucket ??= { start: now, sum: 0, count: 0 }
      bucket.sum += bytesPerSecond
      bucket.count += 1
      if (now - bucket.start < RATE_BUCKET_SECONDS * 1000) return undefined
      const sample = { at: now, bytesPerSecond: Math.round(bucket.sum / bucket.count) }
      bucket = undefined
      if (ring.length < RATE_BUCKETS) ring.push(sample)
      else ring[next] = sample
      next = (next + 1) % RATE_BUCKETS
      return sample
    },
    samples: () => (ring.length < RATE_BUCKETS ? [...ring] : [...ring.slice(next), ...ring.slice(0, next)])
  }
}
