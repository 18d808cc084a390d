/**
 * Failed releases reported to Sonarr, Radarr, Lidarr and Readarr. qBittorrent has no failed state, so an app
 * whose release failed on the service would only see a warning and never search again
 * (rogerfar/rdt-client#386). Every REPORT_INTERVAL this reads the intake queue and, for each
 * failed torrent not reported yet, finds it in each configured app's queue by its info-hash
 * (findQueueItem.ts) and marks it failed there as the app's own Queue page does
 * (markFailed.ts): the app blocklists the release and searches for another.
 *
 *   Intake.list ─► failed · btih: · not in arr_failure_reports ─► each app: GET queue (pages)
 *     found ─► DELETE queue/{id} (blocklist) ─► record "marked"
 *     in no app's queue for UNTRACKED_AFTER_MISSES rounds ─► record "untracked"
 *
 * Invariants:
 * - Only torrents (`btih:` identities): the qBittorrent surface's items. The SABnzbd surface
 *   reports Failed itself, which the apps act on; an NZB never reaches this.
 * - Each intake is reported once: the store row is written after the app accepted the call,
 *   and a reported intake is never looked up again, after a restart too.
 * - An app that cannot be reached is retried with the program's backoff (pacing/backoff.ts),
 *   then again next round; a refused key is logged once per problem. The mirror never
 *   waits for an app nor fails because of one.
 * - Runs only where the intake queue is provided (the daemon with a surface on).
 */
import { Clock, Effect, Layer, Option, Random, Schedule } from "effect"
import type { ArrSettings } from "../config/arrSettings.ts"
import { Intake, type IntakeItem } from "../intake/Intake.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { backoffDelay } from "../pacing/backoff.ts"
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
export const failedReportsLayer = (config: ArrSettings): Layer.Layer<never, never, Database> => {
  const apps = configuredApps(config)
  if (apps.length === 0) return Layer.empty
  return Layer.effectDiscard(
    Effect.gen(function* () {
      const intake = yield* Effect.serviceOption(Intake)
      if (Option.isNone(intake)) return
      const { db } = yield* Database
      const reporter = makeReporter(apps, intake.value, makeArrFailureReportTable(db))
      yield* Effect.forkScoped(Effect.repeat(reporter, Schedule.spaced(REPORT_INTERVAL)))
    })
  ).pipe(Layer.provide(Outbound.layer))
}

// ---------------------------------------------------------------------------------------

type Table = ReturnType<typeof makeArrFailureReportTable>

/** One round: every failed torrent not yet reported. */
const makeReporter = (apps: ReadonlyArray<ArrTarget>, intake: Intake["Service"], table: Table) => {
  const misses = new Map<string, number>()
  const logged = new Set<string>()
  const warnOnce = (problem: string) =>
    logged.has(problem)
      ? Effect.void
      : Effect.sync(() => logged.add(problem)).pipe(Effect.andThen(Effect.logWarning(problem)))

  const reportItem = Effect.fnUntraced(function* (item: IntakeItem) {
    const hash = item.id.slice("btih:".length)
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
          yield* warnOnce(`${target.app.name}: cannot mark ${item.name} failed: ${marked.failure.problem}`)
        }
        return
      }
      table.record(item.id, { outcome: "marked", app: target.app.section }, yield* Clock.currentTimeMillis)
      misses.delete(item.id)
      yield* Effect.logInfo(
        `${target.app.name}: marked ${item.name} failed (${item.reason ?? "failed on the service"}); ${target.app.name} blocklists it and searches for another`
      )
      return
    }
    if (!answered) return
    const missed = (misses.get(item.id) ?? 0) + 1
    misses.set(item.id, missed)
    if (missed >= UNTRACKED_AFTER_MISSES) {
      table.record(item.id, { outcome: "untracked" }, yield* Clock.currentTimeMillis)
      misses.delete(item.id)
      yield* Effect.logInfo(`failed release ${item.name} is in no app's queue; nothing to report`)
    }
  })

  return Effect.gen(function* () {
    const failed = (yield* intake.list()).filter(
      (item) => item.state === "failed" && item.id.startsWith("btih:") && !table.isReported(item.id)
    )
    for (const item of failed) yield* reportItem(item)
  })
}

/** `attempt`, retried by the program's backoff while the app cannot be reached. */
const withBackoff = <A, R>(attempt: Effect.Effect<A, ArrError, R>): Effect.Effect<A, ArrError, R> =>
  Effect.gen(function* () {
    for (let n = 1; ; n++) {
      const result = yield* Effect.result(attempt)
      if (result._tag === "Success") return result.success
      if (result.failure.reason !== "unreachable" || n >= REPORT_ATTEMPTS) return yield* result.failure
      yield* Effect.sleep(backoffDelay(n, yield* Random.next, REPORT_BACKOFF_BASE_MS, REPORT_BACKOFF_MAX_MS))
    }
  })
