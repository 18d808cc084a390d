/**
 * Failed releases reported to Sonarr, Radarr, Lidarr and Readarr. qBittorrent has no failed state, so an app
 * whose release failed on the service would only see a warning and never search again
 * (rogerfar/rdt-client#386). A release of the qBittorrent surface that fails
 * (`release_failed`, and those failed before a restart and not reported yet) waits here until
 * each configured app's queue is searched for it by its info-hash (findQueueItem.ts) and it is
 * marked failed there as the app's own Queue page does (markFailed.ts): the app blocklists the
 * release and searches for another.
 *
 *   release_failed (qbittorrent, btih:) ─► waiting ─► each app: GET queue (pages)
 *     found ─► DELETE queue/{id} (blocklist) ─► record "marked"
 *     in no app's queue for UNTRACKED_AFTER_MISSES rounds ─► record "untracked"
 *   rounds every REPORT_INTERVAL (the apps refresh their queue once a minute) while any waits;
 *   none while nothing does.
 *
 * Invariants:
 * - Only the qBittorrent surface's releases: the SABnzbd surface reports Failed itself, which
 *   the apps act on, and `dlsync add` or the blackhole add releases no app tracks.
 * - Each release is reported once: the store row is written after the app accepted the call,
 *   and a reported release is never looked up again, after a restart too.
 * - An app that cannot be reached is retried with the program's backoff (pacing/backoff.ts),
 *   then again next round; a refused key is logged once per problem. The mirror never
 *   waits for an app nor fails because of one.
 * - Runs only where the intake queue is provided (the daemon with a surface on).
 */
import { Clock, Effect, Layer, Option, PubSub, Queue } from "effect"
import type { ArrSettings } from "../config/arrSettings.ts"
import { MirrorEvents } from "../events/MirrorEvents.ts"
import { Intake } from "../intake/Intake.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { backoff, retrying } from "../pacing/retry.ts"
import { makeArrFailureReportTable } from "../store/arrFailureReportTable.ts"
import { Database } from "../store/Database.ts"
import { type ArrTarget, configuredApps } from "./ArrApp.ts"
import type { ArrError } from "./ArrError.ts"
import { findQueueItem } from "./findQueueItem.ts"
import { markFailed } from "./markFailed.ts"

/** The apps refresh their queue from the download client once a minute. */
export const REPORT_INTERVAL = "1 minute"
/** Rounds an item may be missing from every app's queue before it is taken as never grabbed by one (a `dlsync add`). */
export const UNTRACKED_AFTER_MISSES = 10
export const REPORT_ATTEMPTS = 5
export const REPORT_BACKOFF_BASE_MS = 2_000
export const REPORT_BACKOFF_MAX_MS = 60_000

/** The reporting loop for the scope's life; nothing when no app is configured or no intake queue is there. */
export const failedReportsLayer = (config: ArrSettings): Layer.Layer<never, never, Database | MirrorEvents> => {
  const apps = configuredApps(config)
  if (apps.length === 0) return Layer.empty
  return Layer.effectDiscard(
    Effect.gen(function* () {
      const intake = yield* Effect.serviceOption(Intake)
      if (Option.isNone(intake)) return
      const { db } = yield* Database
      const table = makeArrFailureReportTable(db)
      const waiting = new Map<string, FailedRelease>()
      const wake = yield* Queue.sliding<void>(1)
      const events = yield* MirrorEvents
      const subscription = yield* events.subscribe
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(PubSub.take(subscription), (event) => {
            if (event._tag !== "release_failed" || !isReportable(event, table)) return Effect.void
            waiting.set(event.id, event)
            return Queue.offer(wake, undefined)
          })
        )
      )
      for (const item of yield* intake.value.list({ via: "qbittorrent" })) {
        if (item.state === "failed" && isReportable(item, table)) waiting.set(item.id, item)
      }
      const report = makeReporter(apps, table)
      const rounds = Effect.gen(function* () {
        if (waiting.size === 0) yield* Queue.take(wake)
        for (const release of [...waiting.values()]) {
          if ((yield* report(release)) !== "waiting") waiting.delete(release.id)
        }
        if (waiting.size > 0) yield* Effect.sleep(REPORT_INTERVAL)
      })
      yield* Effect.forkScoped(Effect.forever(rounds))
    })
  ).pipe(Layer.provide(Outbound.layer))
}

// ---------------------------------------------------------------------------------------

type Table = ReturnType<typeof makeArrFailureReportTable>

/** What a report needs of a failed release (an IntakeItem or a release_failed event). */
interface FailedRelease {
  readonly id: string
  readonly name: string
  readonly via: string
  readonly reason: string | null
}

const isReportable = (release: FailedRelease, table: Table): boolean =>
  release.via === "qbittorrent" && release.id.startsWith("btih:") && !table.isReported(release.id)

/** Reports one release to the apps: "done" (marked, or in no app's queue for long enough), or "waiting" for the next round. */
const makeReporter = (apps: ReadonlyArray<ArrTarget>, table: Table) => {
  const misses = new Map<string, number>()
  const logged = new Set<string>()
  const warnOnce = (problem: string) =>
    logged.has(problem)
      ? Effect.void
      : Effect.sync(() => logged.add(problem)).pipe(Effect.andThen(Effect.logWarning(problem)))

  return Effect.fnUntraced(function* (release: FailedRelease) {
    const hash = release.id.slice("btih:".length)
    let answered = true
    for (const target of apps) {
      const found = yield* Effect.result(withBackoff(findQueueItem(target, hash)))
      if (found._tag === "Failure") {
        answered = false
        yield* warnOnce(`${target.app.name}: cannot report failed releases: ${found.failure.problem}`)
        continue
      }
      if (found.success === undefined) continue
      const marked = yield* Effect.result(withBackoff(markFailed(target, found.success.id)))
      if (marked._tag === "Failure") {
        // Gone from the queue meanwhile: looked up again next round.
        if (marked.failure.reason !== "notFound") {
          yield* warnOnce(`${target.app.name}: cannot mark ${release.name} failed: ${marked.failure.problem}`)
        }
        return "waiting" as const
      }
      table.record(release.id, { outcome: "marked", app: target.app.section }, yield* Clock.currentTimeMillis)
      misses.delete(release.id)
      yield* Effect.logInfo(
        `${target.app.name}: marked ${release.name} failed (${release.reason ?? "failed on the service"}); ${target.app.name} blocklists it and searches for another`
      )
      return "done" as const
    }
    if (!answered) return "waiting" as const
    const missed = (misses.get(release.id) ?? 0) + 1
    misses.set(release.id, missed)
    if (missed < UNTRACKED_AFTER_MISSES) return "waiting" as const
    table.record(release.id, { outcome: "untracked" }, yield* Clock.currentTimeMillis)
    misses.delete(release.id)
    yield* Effect.logInfo(`failed release ${release.name} is in no app's queue; nothing to report`)
    return "done" as const
  })
}

/** `attempt`, tried again by the program's backoff while the app cannot be reached. */
const withBackoff = <A, R>(attempt: Effect.Effect<A, ArrError, R>): Effect.Effect<A, ArrError, R> =>
  retrying(
    attempt,
    backoff({
      attempts: REPORT_ATTEMPTS,
      baseMs: REPORT_BACKOFF_BASE_MS,
      maxMs: REPORT_BACKOFF_MAX_MS,
      retryOn: (failure: ArrError) => failure.reason === "unreachable"
    })
  )
