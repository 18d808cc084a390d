/**
 * The global bandwidth limit shared by all transfers: one token bucket that every byte
 * path takes from, following the daily schedule. `take` is called once per received
 * chunk, so it is a plain synchronous call: it returns how many milliseconds the caller
 * should pause reading (0 when unlimited or within budget).
 */
import { Clock, Context, Effect, Layer } from "effect"
import { type BandwidthSchedule, limitAt, minuteOfDay } from "../config/bandwidthSchedule.ts"
import { fullBucket, type TokenBucket, take } from "../pacing/tokenBucket.ts"

export interface RateLimiter {
  /** Accounts for `bytes` just received; returns the pause in ms before reading on. */
  readonly take: (bytes: number) => number
  /** The limit in force now, bytes per second (0 = none). */
  readonly currentLimit: () => number
}

export interface BandwidthOptions {
  /** Bytes per second; 0 = unlimited. */
  readonly bandwidth_limit: number
  readonly bandwidth_schedule: BandwidthSchedule
}

export class Bandwidth extends Context.Service<Bandwidth, RateLimiter>()("dlsync/transfer/Bandwidth") {
  static readonly layer = (options: BandwidthOptions) =>
    Layer.effect(
      Bandwidth,
      Clock.clockWith((clock) => {
        const now = () => clock.currentTimeMillisUnsafe()
        return Effect.succeed(Bandwidth.of(makeRateLimiter(options, now, () => minuteOfDay(new Date(now())))))
      })
    )

  static readonly unlimited = Layer.succeed(Bandwidth, Bandwidth.of({ take: () => 0, currentLimit: () => 0 }))
}

/**
 * A limiter over wall-clock time. The scheduled limit is re-read at most once a second;
 * the bucket holds 50 ms of traffic (at least 16 KiB), so bursts stay small.
 */
export const makeRateLimiter = (
  options: BandwidthOptions,
  now: () => number,
  minuteOfDay: () => number
): RateLimiter => {
  let limit = limitAt(options.bandwidth_schedule, options.bandwidth_limit, minuteOfDay())
  let checkedAt = now()
  let bucket: TokenBucket = fullBucket(burstFor(limit), checkedAt)
  const refresh = (t: number) => {
    if (t - checkedAt < 1000) return
    checkedAt = t
    const next = limitAt(options.bandwidth_schedule, options.bandwidth_limit, minuteOfDay())
    if (next !== limit) {
      limit = next
      bucket = fullBucket(burstFor(limit), t)
    }
  }
  return {
    take: (bytes) => {
      if (options.bandwidth_limit === 0 && options.bandwidth_schedule.length === 0) return 0
      const t = now()
      refresh(t)
      if (limit <= 0) return 0
      const r = take(bucket, bytes, limit, burstFor(limit), t)
      bucket = r.bucket
      return r.waitMs
    },
    currentLimit: () => {
      refresh(now())
      return limit
    }
  }
}

// ---------------------------------------------------------------------------------------

const burstFor = (limit: number): number => Math.max(16 * 1024, limit / 20)
