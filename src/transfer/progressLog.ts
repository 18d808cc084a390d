/**
 * Progress without a TTY (journald, docker logs, cron mail): one log line per file
 * started, finished, parked, paused or retried, and a totals line every `intervalMs`
 * while anything is active — never a redraw.
 */
import { Clock, Effect } from "effect"
import type { ProgressSnapshot, ProgressTrackerShape } from "./ProgressTracker.ts"
import { formatDone, formatEta, formatRate } from "./progressFormat.ts"
import { describeEvent } from "./progressView.ts"

/** The periodic totals line, or undefined when nothing is active. */
export const totalsLine = (s: ProgressSnapshot): string | undefined =>
  s.overall.active === 0
    ? undefined
    : `transfers: ${s.overall.active} active, ${s.overall.completed} done · ${formatDone(s.overall.done, s.overall.size)} · ` +
      `${formatRate(s.overall.rate)} · ETA ${formatEta(s.overall.eta)}`

export const ProgressLog = {
  /** Logs events as they happen and totals every `intervalMs` (default 30 s) until interrupted. */
  run: (tracker: ProgressTrackerShape, options: { readonly intervalMs?: number } = {}): Effect.Effect<never> =>
    Effect.gen(function* () {
      const context = yield* Effect.context<never>()
      const unsubscribe = tracker.subscribe((e) => {
        const line = describeEvent(e)
        if (line === undefined) return
        const log = e._tag === "Parked" || e._tag === "Paused" ? Effect.logWarning(line) : Effect.logInfo(line)
        Effect.runForkWith(context)(log.pipe(Effect.annotateLogs({ fileId: e.fileId })))
      })
      return yield* Effect.forever(
        Effect.sleep(options.intervalMs ?? 30_000).pipe(
          Effect.andThen(
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const line = totalsLine(tracker.snapshot(now))
              return line === undefined ? Effect.void : Effect.logInfo(line)
            })
          )
        )
      ).pipe(Effect.ensuring(Effect.sync(unsubscribe)))
    })
}
