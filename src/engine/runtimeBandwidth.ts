/**
 * The bandwidth limit set at run time (the web page's "limit now"), over the configured one
 * (`transfers.bandwidth_limit` and `bandwidth_schedule`), through Bandwidth's public
 * limiter only:
 *
 *   every received chunk ─► a limit set now, still in force? ─yes─► its own bucket
 *                                                   └──no──► the configured limiter
 *
 * Invariants:
 * - A limit set now holds until its `until` (epoch ms) or, without one, until it is cleared
 *   or the process ends (never stored); then the configured limit and schedule apply again.
 * - 0 bytes per second set now means no limit until then (a configured one lifted).
 * - The byte path pays one comparison per chunk for it.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { minuteOfDay } from "../config/bandwidthSchedule.ts"
import { Bandwidth, type BandwidthOptions, makeRateLimiter, type RateLimiter } from "../transfer/Bandwidth.ts"

/** A limit set at run time. */
export interface BandwidthLimitNow {
  /** 0 = none. */
  readonly bytesPerSecond: number
  /** Epoch ms it ends at; null: until cleared or the process ends. */
  readonly until: number | null
}

export interface RuntimeBandwidthShape {
  /** Sets the limit now; null clears it (the configured one applies). */
  readonly set: (limit: BandwidthLimitNow | null) => Effect.Effect<void>
  /** The limit set now while it is in force; null when the configured one applies. */
  readonly current: Effect.Effect<BandwidthLimitNow | null>
  /** The configured limit in force now (the schedule's), bytes per second (0 = none). */
  readonly configured: Effect.Effect<number>
}

export class RuntimeBandwidth extends Context.Service<RuntimeBandwidth, RuntimeBandwidthShape>()(
  "dlsync/engine/RuntimeBandwidth"
) {}

/** Bandwidth (what the transfer engine takes from) and RuntimeBandwidth (what sets it), for one configuration. */
export const runtimeBandwidthLayer = (options: BandwidthOptions): Layer.Layer<Bandwidth | RuntimeBandwidth> =>
  Layer.effectContext(
    Clock.clockWith((clock) => {
      const now = () => clock.currentTimeMillisUnsafe()
      const configured = makeRateLimiter(options, now, () => minuteOfDay(new Date(now())))
      let set: { readonly limit: BandwidthLimitNow; readonly limiter: RateLimiter } | null = null
      const inForce = (t: number) => {
        if (set !== null && set.limit.until !== null && t >= set.limit.until) set = null
        return set
      }
      const limiter: RateLimiter = {
        take: (bytes) => (set === null ? configured.take(bytes) : (inForce(now())?.limiter ?? configured).take(bytes)),
        currentLimit: () => inForce(now())?.limit.bytesPerSecond ?? configured.currentLimit()
      }
      const control: RuntimeBandwidthShape = {
        set: (limit) =>
          Effect.sync(() => {
            set =
              limit === null
                ? null
                : {
                    limit,
                    limiter: makeRateLimiter(
                      { bandwidth_limit: limit.bytesPerSecond, bandwidth_schedule: [] },
                      now,
                      () => 0
                    )
                  }
          }),
        current: Effect.sync(() => inForce(now())?.limit ?? null),
        configured: Effect.sync(() => configured.currentLimit())
      }
      return Effect.succeed(
        Context.make(Bandwidth, Bandwidth.of(limiter)).pipe(Context.add(RuntimeBandwidth, RuntimeBandwidth.of(control)))
      )
    })
  )
