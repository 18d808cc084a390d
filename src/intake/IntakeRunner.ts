/**
 * The intake's background work, run by the process holding the instance lock (the daemon,
 * or `run --once` around its pass). A release's route runs one way:
 *
 *   new ─► caps, cache, folder ─► POST /downloads ─► sent               (intakeSender.ts)
 *   sent ─► GET /downloads/{id} until the service completes it          (followDownload.ts)
 *        └► completed there: a poll of the feed is asked for, and the following ends
 *   the feed reports its files (remote items with its download_id) ─► the mirror plans,
 *        transfers and records them ─► download_complete (MirrorEvents)
 *   ─► settled: every file verified on disk ─► completed, release_complete (releaseCompletion.ts)
 *   removed ─► its files and record deleted on the service                (releaseCleanup.ts)
 *
 * A round reads what is unfinished in one query (an idle round is that query) and does what
 * each record is due for. Rounds come every INTAKE_ROUND_INTERVAL, so that releases added
 * by any process (`dlsync add`) are taken, and at once when the mirror lands a file. A
 * failing request leaves its release as it was for the next round (logged); nothing here
 * fails the daemon.
 */
import { Clock, Context, Effect, Layer, PubSub, Queue } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import type { Limits } from "../api/schemas/account.ts"
import { MirrorEvents } from "../events/MirrorEvents.ts"
import { type IntakeRecord, IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import { followDownload } from "./followDownload.ts"
import { IntakeSettings } from "./IntakeSettings.ts"
import { isDue, isSelectionDue, recoverSending, resumeSelection, sendNew } from "./intakeSender.ts"
import { cleanUp } from "./releaseCleanup.ts"
import { settleCompletion } from "./releaseCompletion.ts"

export const INTAKE_ROUND_INTERVAL = "2 seconds"

/** How often one download is looked at on the service (GET /downloads/{id}) while it runs there. */
export const FOLLOW_INTERVAL_MS = 4_000

/** Service statuses of a download that holds one of the account's concurrent slots. */
export const ACTIVE_STATUSES: ReadonlySet<string> = new Set(["queued", "processing", "downloading", "finalizing"])

export type IntakeRunnerNeeds = ApiClient | IntakeTables | IntakeSettings | Store | MirrorEvents

/** What a round leaves for the caller: whether the feed should be polled now (a download's files exist, or went). */
export interface RoundOutcome {
  readonly pollDue: boolean
}

/**
 * One round. `followEveryMs`: how long since a download was last looked at before it is
 * looked at again — FOLLOW_INTERVAL_MS for the daemon's rounds, 0 for the two rounds of
 * `run --once`, which are far apart and each must see what the service has.
 */
export const intakeRound = Effect.fn("Intake.round")(function* (followEveryMs: number = FOLLOW_INTERVAL_MS) {
  const tables = yield* IntakeTables
  const records = yield* tables.unfinished
  if (records.length === 0) return { pollDue: false }
  const api = yield* ApiClient
  const store = yield* Store
  const settings = yield* IntakeSettings
  const events = yield* MirrorEvents
  const now = yield* Clock.currentTimeMillis
  const ctx = { api, tables, store, events, root: settings.root, now }
  const sender = { ...ctx, categories: settings.categories, webhookUrl: settings.webhookUrl }
  let pollDue = false
  let slotFreed = false

  for (const record of records) {
    if (record.phase === "removed") {
      const outcome = yield* guarded(`removing ${record.name}`, cleanUp(ctx, record), "waiting" as const)
      // The feed is to bring the files still missing from the store, or to see them gone.
      pollDue ||= outcome === "waiting" || record.cleanup === "files"
    } else if (record.phase === "sending") {
      yield* guarded(`looking up ${record.name}`, recoverSending(sender, record), undefined)
    } else if (record.phase === "sent" && record.serviceCompletedAt === null) {
      if (record.status !== "completed" && now - record.updatedAt < followEveryMs) continue
      const outcome = yield* guarded(`following ${record.name}`, followDownload(ctx, record), "under way" as const)
      pollDue ||= outcome === "completed"
      slotFreed ||= outcome !== "under way"
    }
  }

  // What the service completed and the mirror has: settled from the store.
  for (const record of yield* tables.unfinished) {
    if (record.phase === "sent" && record.serviceCompletedAt !== null) {
      yield* guarded(`checking ${record.name} on disk`, settleCompletion(ctx, record), "waiting" as const)
    }
  }

  const live = yield* tables.unfinished
  const due = live.filter((r) => isDue(r, now, slotFreed))
  if (due.length > 0) {
    let limits: Limits | null = yield* api.account.get.pipe(
      Effect.map((account) => account.limits),
      Effect.catch((error) => Effect.as(Effect.logWarning(`intake: account limits unread: ${error.message}`), null))
    )
    const active = activeCounts(live)
    for (const record of due) {
      const before = limits
      const after = yield* guarded(`sending ${record.name}`, sendNew(sender, record, limits, active), before)
      if (after !== before) {
        active.downloads++
        if (isTorrent(record)) active.torrents++
      }
      limits = after
    }
  }

  for (const record of yield* tables.unfinished) {
    if (isSelectionDue(record, now)) {
      yield* guarded(`answering the selection of ${record.name}`, resumeSelection(sender, record), undefined)
    }
  }
  return { pollDue }
})

/** The runner with what it needs captured, so the daemon forks it with only its poll request to give. */
export class IntakeRunner extends Context.Service<
  IntakeRunner,
  {
    /**
     * Rounds until interrupted (the daemon): every INTAKE_ROUND_INTERVAL, and at once when
     * the mirror lands a download; `pollNow` asks the daemon to poll the feed.
     */
    readonly run: (pollNow: Effect.Effect<void>) => Effect.Effect<never>
    /** One round (`run --once`: before its pass, to send and follow; after it, to settle what landed). */
    readonly round: Effect.Effect<void>
  }
>()("dlsync/intake/IntakeRunner") {
  static readonly layer: Layer.Layer<IntakeRunner, never, IntakeRunnerNeeds> = Layer.effect(
    IntakeRunner,
    Effect.map(Effect.context<IntakeRunnerNeeds>(), (context) =>
      IntakeRunner.of({
        run: (pollNow) => runIntake(pollNow).pipe(Effect.provide(context)),
        round: intakeRound(0).pipe(
          Effect.asVoid,
          Effect.catchDefect((defect) => Effect.logError("intake: round failed", defect)),
          Effect.provide(context)
        )
      })
    )
  )
}

// ---------------------------------------------------------------------------------------

const runIntake = (pollNow: Effect.Effect<void>): Effect.Effect<never, never, IntakeRunnerNeeds> =>
  Effect.scoped(
    Effect.gen(function* () {
      const landed = yield* Queue.sliding<void>(1)
      const events = yield* MirrorEvents
      const subscription = yield* events.subscribe
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(PubSub.take(subscription), (event) =>
            event._tag === "download_complete" ? Queue.offer(landed, undefined) : Effect.void
          )
        )
      )
      return yield* Effect.forever(
        intakeRound().pipe(
          Effect.flatMap((outcome) => (outcome.pollDue ? pollNow : Effect.void)),
          Effect.catchDefect((defect) => Effect.logError("intake: round failed", defect)),
          Effect.andThen(Effect.raceFirst(Effect.sleep(INTAKE_ROUND_INTERVAL), Queue.take(landed)))
        )
      )
    })
  )

/** A step whose failure is logged and leaves its release for the next round; `fallback` stands for its outcome. */
const guarded = <A, E, R>(what: string, step: Effect.Effect<A, E, R>, fallback: A): Effect.Effect<A, never, R> =>
  step.pipe(
    Effect.catch((error) =>
      Effect.as(Effect.logWarning(`intake: ${what}: ${describe(error)}; tried again at the next round`), fallback)
    ),
    Effect.catchDefect((defect) => Effect.as(Effect.logError(`intake: ${what} failed`, defect), fallback))
  )

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const isTorrent = (record: IntakeRecord): boolean => record.sourceKind === "magnet" || record.sourceKind === "torrent"

/** The queue's downloads holding a concurrent slot on the service. */
const activeCounts = (records: ReadonlyArray<IntakeRecord>): { downloads: number; torrents: number } => {
  const active = { downloads: 0, torrents: 0 }
  for (const r of records) {
    if (r.phase !== "sent" || r.serviceCompletedAt !== null || r.status === null || !ACTIVE_STATUSES.has(r.status)) {
      continue
    }
    active.downloads++
    if (isTorrent(r)) active.torrents++
  }
  return active
}
