/**
 * The intake's background work, run by the process holding the instance lock (the daemon):
 * every INTAKE_ROUND_INTERVAL, one round over the records in the store, so intakes added
 * by any process (`dlsync add`, a surface) are picked up:
 *
 *   round ─► cleanups owed by removals
 *         ─► `sending` without a stored answer ─► looked up (intakeSender.recoverSending)
 *         ─► `new` (not paused, due) ─► caps, cache, send (one GET /account per round at most)
 *         ─► `selecting` ─► answered by the category's policy
 *         ─► `sent` ─► followed on the service; its files, once known, wake a reconcile
 *         ─► completed there ─► verified on local disk
 *
 * A failing request leaves its intake as it was for the next round (logged); nothing here
 * fails the daemon. An idle round is one SQLite query.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import type { Limits } from "../api/schemas/account.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import { IntakeSettings } from "./IntakeSettings.ts"
import { cleanUp, followDownload, verifyLocal } from "./intakeProgress.ts"
import { recoverSending, resumeSelection, sendNew } from "./intakeSender.ts"
import { ACTIVE_STATUSES } from "./itemView.ts"

export const INTAKE_ROUND_INTERVAL = "2 seconds"

/** How often one accepted download is looked at on the service (GET /downloads/{id}). */
export const FOLLOW_INTERVAL_MS = 4_000

export type IntakeRunnerNeeds = ApiClient | IntakeTables | IntakeSettings | Store

/**
 * One round; `onFilesKnown` runs when a download's files became known (the mirror must take
 * them). `followEveryMs`: how long since a download was last updated before it is looked at
 * again — FOLLOW_INTERVAL_MS for the daemon's rounds every INTAKE_ROUND_INTERVAL, 0 for the
 * two rounds of `run --once`, which are far apart and each must see what the service has.
 */
export const intakeRound = Effect.fn("Intake.round")(function* (
  onFilesKnown: Effect.Effect<void>,
  followEveryMs: number = FOLLOW_INTERVAL_MS
) {
  const api = yield* ApiClient
  const tables = yield* IntakeTables
  const store = yield* Store
  const settings = yield* IntakeSettings
  const now = yield* Clock.currentTimeMillis
  const sender = { api, tables, categories: settings.categories, webhookUrl: settings.webhookUrl, now }
  const progress = { api, tables, store, root: settings.root, now }
  const guarded = <E>(what: string, step: Effect.Effect<unknown, E>) =>
    step.pipe(
      Effect.catch((error) => Effect.logWarning(`intake: ${what}: ${describe(error)}; tried again at the next round`)),
      Effect.catchDefect((defect) => Effect.logError(`intake: ${what} failed`, defect))
    )

  let filesKnown = false
  for (const record of yield* tables.owingCleanup) {
    yield* guarded(`removing ${record.name}`, cleanUp(progress, record))
    // The service's files went: the next reconcile sees them gone and trashes the local copies it wrote.
    filesKnown ||= record.cleanup === "files"
  }

  let records = yield* tables.live
  for (const record of records) {
    if (record.phase === "sending") yield* guarded(`looking up ${record.name}`, recoverSending(sender, record))
  }

  records = yield* tables.live
  const due = records.filter((r) => r.phase === "new" && !r.paused && (r.notBefore === null || r.notBefore <= now))
  if (due.length > 0) {
    let limits: Limits | null = yield* api.account.get.pipe(
      Effect.map((account) => account.limits),
      Effect.catch((error) => Effect.as(Effect.logWarning(`intake: account limits unread: ${error.message}`), null))
    )
    const active = { downloads: 0, torrents: 0 }
    for (const r of records) {
      if (r.phase !== "sent" || r.status === null || !ACTIVE_STATUSES.has(r.status)) continue
      active.downloads++
      if (r.sourceKind === "magnet" || r.sourceKind === "torrent") active.torrents++
    }
    for (const record of due) {
      const before = limits
      const after = yield* sendNew(sender, record, limits, active).pipe(
        Effect.catch((error) =>
          Effect.as(
            Effect.logWarning(`intake: sending ${record.name}: ${error.message}; tried again at the next round`),
            before
          )
        )
      )
      if (after !== before) {
        active.downloads++
        if (record.sourceKind === "magnet" || record.sourceKind === "torrent") active.torrents++
      }
      limits = after
    }
  }

  for (const record of yield* tables.live) {
    if (record.phase === "selecting" && !record.paused) {
      yield* guarded(`answering the selection of ${record.name}`, resumeSelection(sender, record))
    }
  }

  for (const record of yield* tables.live) {
    if (record.phase !== "sent" || record.completedAt !== null) continue
    if (record.files === null) {
      // The service is asked at most every `followEveryMs` per download (a torrent may run for hours),
      // except when it said completed (a cached torrent is at once): its files are read without a wait.
      if (record.status !== "completed" && now - record.updatedAt < followEveryMs) continue
      const known = yield* followDownload(progress, record).pipe(
        Effect.catch((error) =>
          Effect.as(Effect.logWarning(`intake: following ${record.name}: ${error.message}`), false)
        )
      )
      filesKnown ||= known
    } else yield* guarded(`checking ${record.name} on disk`, verifyLocal(progress, record))
  }
  if (filesKnown) yield* onFilesKnown
})

/** Rounds until interrupted. */
export const runIntake = (onFilesKnown: Effect.Effect<void>): Effect.Effect<never, never, IntakeRunnerNeeds> =>
  Effect.forever(
    intakeRound(onFilesKnown).pipe(
      Effect.catchDefect((defect) => Effect.logError("intake: round failed", defect)),
      Effect.andThen(Effect.sleep(INTAKE_ROUND_INTERVAL))
    )
  )

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The runner with what it needs captured, so the daemon forks it with only its wake-up to give. */
export class IntakeRunner extends Context.Service<
  IntakeRunner,
  {
    /** Rounds until interrupted (the daemon). */
    readonly run: (onFilesKnown: Effect.Effect<void>) => Effect.Effect<never>
    /** One round (`run --once`: before its pass, to send and follow; after it, to verify what landed). */
    readonly round: Effect.Effect<void>
  }
>()("dlsync/intake/IntakeRunner") {
  static readonly layer: Layer.Layer<IntakeRunner, never, IntakeRunnerNeeds> = Layer.effect(
    IntakeRunner,
    Effect.map(Effect.context<IntakeRunnerNeeds>(), (context) =>
      IntakeRunner.of({
        run: (onFilesKnown) => runIntake(onFilesKnown).pipe(Effect.provide(context)),
        round: intakeRound(Effect.void, 0).pipe(
          Effect.catchDefect((defect) => Effect.logError("intake: round failed", defect)),
          Effect.provide(context)
        )
      })
    )
  )
}
