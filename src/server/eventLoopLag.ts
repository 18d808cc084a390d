/**
 * How late the event loop runs what is due: every SAMPLE_INTERVAL a fiber sleeps that long
 * on the live Clock and records how much later than asked it woke. A request parsed or hashed
 * synchronously for 100 ms shows as a sample of 100 ms: every listener, transfer and timer
 * waited that long.
 *
 * `take` returns the p99 and the max of the samples since the previous `take` and starts
 * a new window, so each /metrics scrape reports its own interval (Node's own delay monitor
 * drops the interval that spans a reset, which would hide a stall that began just then).
 */
import { createHistogram } from "node:perf_hooks"
import { Clock, Duration, Effect } from "effect"

/** How often the loop is sampled. */
export const SAMPLE_INTERVAL = Duration.millis(20)

export interface EventLoopLagWindow {
  /** Seconds; 0 when no sample was taken. */
  readonly p99Seconds: number
  readonly maxSeconds: number
}

export interface EventLoopLag {
  /** Samples the loop until the scope closes. */
  readonly sample: Effect.Effect<never>
  /** The window since the previous take, and a new one started. */
  readonly take: () => EventLoopLagWindow
}

export const makeEventLoopLag = (): EventLoopLag => {
  const histogram = createHistogram()
  const intervalNanos = BigInt(Duration.toMillis(SAMPLE_INTERVAL)) * 1_000_000n
  const once = Effect.gen(function* () {
    const before = yield* Clock.currentTimeNanos
    yield* Effect.sleep(SAMPLE_INTERVAL)
    const late = (yield* Clock.currentTimeNanos) - before - intervalNanos
    // A histogram takes values from 1 (ns): on time is 1 ns late.
    histogram.record(late > 0n ? late : 1n)
  })
  return {
    // The loop runs in real time, whatever Clock the rest runs on (a test's included).
    sample: Effect.forever(once).pipe(Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())),
    take: () => {
      const window =
        histogram.count === 0
          ? { p99Seconds: 0, maxSeconds: 0 }
          : { p99Seconds: histogram.percentile(99) / 1e9, maxSeconds: histogram.max / 1e9 }
      histogram.reset()
      return window
    }
  }
}
