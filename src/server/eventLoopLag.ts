/**
 * How late the event loop runs what is due, from Node's own delay monitor (a libuv timer
 * every RESOLUTION_MS, no JavaScript on the idle loop): each sample is how much later than
 * due the timer fired. A request parsed or hashed synchronously for 100 ms shows as a sample
 * of about 100 ms: every listener, transfer and timer waited that long.
 *
 * `take` returns the p99 and the max of the samples since the previous `take` and starts a
 * new window. Node's monitor does not record the interval that spans the start of a window,
 * so a stall that begins within RESOLUTION_MS of a `take` is not seen.
 */
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Effect, type Scope } from "effect"

/** How often the monitor's timer is due. */
export const RESOLUTION_MS = 20

export interface EventLoopLagWindow {
  /** Seconds late; 0 when nothing was sampled. */
  readonly p99Seconds: number
  readonly maxSeconds: number
}

export interface EventLoopLag {
  /** The window since the previous take, and a new one started. */
  readonly take: () => EventLoopLagWindow
}

/** The loop's lag, monitored until the scope closes. */
export const monitorEventLoopLag: Effect.Effect<EventLoopLag, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => {
      const monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
      monitor.enable()
      return monitor
    }),
    (monitor) => Effect.sync(() => monitor.disable())
  ),
  (monitor) => ({
    take: () => {
      // A sample is the time between two firings: the resolution, plus how late.
      const late = (nanos: number) => Math.max(0, nanos / 1e9 - RESOLUTION_MS / 1000)
      const window =
        monitor.count === 0
          ? { p99Seconds: 0, maxSeconds: 0 }
          : { p99Seconds: late(monitor.percentile(99)), maxSeconds: late(monitor.max) }
      monitor.reset()
      return window
    }
  })
)
