/**
 * One mirror pass: the store catches up with the account (feed), the root is brought in line
 * by the sync core (sync/pass.ts: plan and local actions, returning the downloads it needs),
 * and the downloads are carried out and recorded (TransferDownloads).
 *
 *   RemoteSync.catchUp ─► runPass ──────────────────────────► TransferDownloads.download
 *   (pages → store)       checkRoot · case probe · recover     transfer engine (lands in place)
 *                         · scan · plan · local actions        ─► recordDownload (store + app state)
 *                                   └──────────► one summary event per pass ◄─────────┘
 *                                                 + pass_complete (events/) with the changed paths
 *   after the downloads: posters (posters/, when on) · remote cleanup (cleanup/, when configured)
 *
 * Invariants:
 * - The root is checked before anything is read or created in it (RootUnavailable when it
 *   looks unmounted), once per pass, by runPass.
 * - A catch-up and the making of a plan (with its local actions) never overlap: the plan reads
 *   the feed state, the remote items and the local entries in separate calls, so it must not
 *   see a catch-up between pages. The downloads may overlap catch-ups (the daemon polls while
 *   a reconcile downloads; see Daemon.ts for why that is safe).
 * - Removals follow only from a complete listing (the store's `listingComplete`); a held big
 *   delete removes nothing and stays recorded for `status` until a pass clears it.
 * - A pass reports every failed action, failed download and unplaceable item with its reason.
 * - Every in-scope remote file the plan skips gets its app state (FileProgress): `locked`
 *   for a locked file, `skipped` with the reason otherwise; a file outside the filters
 *   (`filtered`) is not this mirror's and gets none.
 */
import { Context, DateTime, Effect, Layer, Option, Semaphore } from "effect"
import type { ApiError } from "../api/ApiError.ts"
import { FileProgress } from "../appstate/FileProgress.ts"
import { RemoteCleanup } from "../cleanup/RemoteCleanup.ts"
import { MirrorEvents } from "../events/MirrorEvents.ts"
import { Posters } from "../posters/Posters.ts"
import type { Database } from "../store/Database.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { type PassFailure, Store } from "../store/Store.ts"
import type { Outcome } from "../sync/executor.ts"
import type { LocalOpError, LocalOps, RootUnavailable } from "../sync/localOps.ts"
import { runPass } from "../sync/pass.ts"
import { planConfigOf } from "../sync/planConfig.ts"
import type { Action, SkipCode } from "../sync/planner.ts"
import { mapTree, unmatchedFilters } from "../sync/tree.ts"
import type { NotEnoughSpace } from "../transfer/NotEnoughSpace.ts"
import { EngineSettings } from "./EngineSettings.ts"
import { type CatchUpOptions, type CatchUpResult, RemoteSync } from "./RemoteSync.ts"
import { PASS_EVENT } from "./statusDocument.ts"
import { TransferDownloads } from "./TransferDownloads.ts"

/** One item the pass could not bring in line, with its reason. */
export type ItemFailure = PassFailure

export interface ReconcileOptions {
  readonly allowBigDelete: boolean
  /** Called once the plan is known, for progress displays. */
  readonly onPlan?: (summary: PlanSummary) => Effect.Effect<void>
}

export interface PassOptions extends CatchUpOptions, ReconcileOptions {}

export interface PlanSummary {
  readonly actions: number
  readonly downloads: number
  readonly bytes: number
}

export interface ReconcileReport {
  /** Local actions done, by action tag. */
  readonly done: Readonly<Record<string, number>>
  readonly downloaded: number
  readonly downloadedBytes: number
  readonly failures: ReadonlyArray<ItemFailure>
  readonly held: { readonly count: number; readonly mirrored: number; readonly limit: string } | null
  readonly skipped: Readonly<Partial<Record<SkipCode, number>>>
}

export interface PassReport extends ReconcileReport {
  readonly remote: CatchUpResult
}

/** Skips that leave an in-scope item unmirrored for a reason the user must look at. */
export const FAILING_SKIPS: ReadonlySet<SkipCode> = new Set(["occupied", "broken_parent", "too_deep", "parent_blocked"])

/** Skips that leave an in-scope file unmirrored, which its app state shows (all but `filtered`). */
export const APP_STATE_SKIPS: ReadonlySet<SkipCode> = new Set([
  "locked",
  "too_big",
  "broken_parent",
  "too_deep",
  "locally_deleted",
  "occupied",
  "modified_locally",
  "parent_blocked"
])

export class MirrorPass extends Context.Service<
  MirrorPass,
  {
    readonly catchUp: (options: CatchUpOptions) => Effect.Effect<CatchUpResult, ApiError>
    /**
     * ApiError only under run --once: the service's rate limit held download links longer than
     * it waits; NotEnoughSpace only when the transfer queue does not wait for room (`run --once`).
     */
    readonly reconcile: (
      options: ReconcileOptions
    ) => Effect.Effect<ReconcileReport, ApiError | RootUnavailable | LocalOpError | NotEnoughSpace>
    readonly run: (
      options: PassOptions
    ) => Effect.Effect<PassReport, ApiError | RootUnavailable | LocalOpError | NotEnoughSpace>
  }
>()("dlsync/engine/MirrorPass") {
  static readonly layer: Layer.Layer<
    MirrorPass,
    never,
    | Store
    | RemoteSync
    | TransferDownloads
    | LocalOps
    | EngineSettings
    | FileProgress
    | MirrorEvents
    | RemoteCleanup
    | Posters
    | Database
  > = Layer.effect(
    MirrorPass,
    Effect.gen(function* () {
      const store = yield* Store
      const remoteSync = yield* RemoteSync
      const downloads = yield* TransferDownloads
      const settings = yield* EngineSettings
      const progress = yield* FileProgress
      const posters = yield* Posters
      const cleanup = yield* RemoteCleanup
      const context = yield* Effect.context<Store | LocalOps | MirrorEvents | Database>()
      const events = yield* MirrorEvents
      // The intake queue's downloads are mirrored whatever the filters say (when the store has the queue).
      const intake = yield* Effect.serviceOption(IntakeTables)
      const alwaysMirror = Option.match(intake, {
        onNone: () => Effect.succeed(undefined),
        onSome: (t) => t.mirroredIds
      })
      // Held by each catch-up, and by each plan with its local actions (not its downloads).
      const remoteTurn = yield* Semaphore.make(1)
      const catchUp = (options: CatchUpOptions) => Semaphore.withPermit(remoteTurn, remoteSync.catchUp(options))

      const reportSkips = Effect.fnUntraced(function* (actions: ReadonlyArray<Action>) {
        for (const action of actions) {
          if (action._tag !== "Skip" || !APP_STATE_SKIPS.has(action.code)) continue
          const item = yield* store.remote.get(action.remoteId)
          if (item._tag === "None" || item.value.type !== "file") continue
          yield* progress.report(action.remoteId, {
            state: action.code === "locked" ? "locked" : "skipped",
            bytes: 0,
            size: item.value.size,
            path: action.path ?? "",
            error: action.reason
          })
        }
      })

      // Filters that select nothing in a complete listing: warned once, and again when they change.
      let warnedFilters = ""
      const warnUnmatchedFilters = Effect.fnUntraced(function* (caseInsensitive: boolean) {
        const { folders, include, exclude } = settings.mirror
        if (folders.length + include.length + exclude.length === 0) return
        if (!(yield* store.feed.state).listingComplete) return
        const config = planConfigOf(settings.mirror, caseInsensitive)
        const unmatched = unmatchedFilters(mapTree(yield* store.remote.all, config), config)
        const key = unmatched.join("\n")
        if (key === warnedFilters) return
        warnedFilters = key
        for (const line of unmatched) yield* Effect.logWarning(`${line}; check the spelling (see \`dlsync status\`)`)
      })

      const reconcile = Effect.fn("MirrorPass.reconcile")(function* (options: ReconcileOptions) {
        const now = DateTime.toDateUtc(yield* DateTime.now)
        const mirrored = yield* alwaysMirror
        const pass = yield* runPass({
          config: (caseInsensitive) => planConfigOf(settings.mirror, caseInsensitive, mirrored),
          now,
          trashDays: settings.trashDays,
          allowBigDelete: options.allowBigDelete
        }).pipe(Effect.provide(context), Semaphore.withPermit(remoteTurn))
        yield* reportSkips(pass.actions)
        yield* warnUnmatchedFilters(pass.caseInsensitive)
        const queued = pass.execution.downloads
        if (options.onPlan !== undefined) {
          yield* options.onPlan({
            actions: pass.actions.filter((a) => a._tag !== "Skip").length,
            downloads: queued.length,
            bytes: queued.reduce((n, d) => n + d.item.size, 0)
          })
        }
        const drained = yield* downloads.download(queued)
        // After the files landed: their posters, then what may be deleted on the service.
        yield* posters.sync(
          new Set(pass.actions.flatMap((a) => (a._tag === "Skip" && a.code === "occupied" && a.path ? [a.path] : [])))
        )
        const cleaned = yield* cleanup.run({ allowBigDelete: options.allowBigDelete })

        const failures: Array<ItemFailure> = []
        for (const o of pass.execution.failed) {
          const a = o.action
          const path = "path" in a ? a.path : "from" in a ? a.from : null
          failures.push({ path: path ?? "(unknown)", remoteId: remoteIdOf(a), reason: o.detail ?? a.reason })
        }
        failures.push(...drained.failed)
        const skipped: Partial<Record<SkipCode, number>> = {}
        let held: ReconcileReport["held"] = null
        for (const action of pass.actions) {
          if (action._tag === "HoldDeletes") {
            held = { count: action.count, mirrored: action.mirrored, limit: action.limit }
            yield* Effect.logWarning(
              `${action.reason}; nothing removed. Run \`dlsync run --once --allow-big-delete\` to go ahead.`
            )
          }
          if (action._tag !== "Skip") continue
          skipped[action.code] = (skipped[action.code] ?? 0) + 1
          if (FAILING_SKIPS.has(action.code)) {
            failures.push({
              path: action.path ?? `(remote item ${action.remoteId})`,
              remoteId: action.remoteId,
              reason: action.reason
            })
          }
        }
        const done: Record<string, number> = {}
        for (const [tag, n] of Object.entries(pass.execution.counts)) {
          if (tag !== "Download" && tag !== "Skip" && tag !== "HoldDeletes" && n !== undefined) done[tag] = n
        }
        if (cleaned.deleted > 0) done.RemoteCleanup = cleaned.deleted
        held ??= cleaned.held
        const report: ReconcileReport = {
          done,
          downloaded: drained.landed,
          downloadedBytes: drained.bytes,
          failures,
          held,
          skipped
        }
        yield* store.passFailures.replace(failures)
        yield* store.events.append({
          level: failures.length > 0 || held !== null ? "warn" : "info",
          kind: PASS_EVENT,
          message: describeReport(report),
          path: null,
          remoteId: null
        })
        const failedPaths = new Set(drained.failed.map((f) => f.path))
        yield* events.publish({
          _tag: "pass_complete",
          changed: [
            ...changedPaths(pass.execution.outcomes),
            ...queued.filter((d) => !failedPaths.has(d.path)).map((d) => d.path)
          ],
          downloaded: drained.landed,
          failed: failures.length
        })
        return report
      })

      const run = Effect.fn("MirrorPass.run")(function* (options: PassOptions) {
        const remote = yield* catchUp(options)
        const report = yield* reconcile(options)
        return { ...report, remote }
      })

      return MirrorPass.of({ catchUp, reconcile, run })
    })
  )
}

/** One line summing up a pass, for the log and the event log, in a user's words. */
export const describeReport = (report: ReconcileReport): string => {
  const parts: Array<string> = []
  for (const [tag, n] of Object.entries(report.done)) parts.push(`${n} ${ACTION_WORDS[tag] ?? tag}`)
  parts.push(`${count(report.downloaded, "file")} downloaded`)
  for (const [code, n] of Object.entries(report.skipped)) parts.push(`${n} skipped (${SKIP_WORDS[code] ?? code})`)
  if (report.held !== null) parts.push(`a big delete of ${count(report.held.count, "file")} held`)
  parts.push(`${report.failures.length} failed`)
  return `pass: ${parts.join(", ")}`
}

/** "1 file", "2 files". */
export const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`

/** What each local action did, as a user says it ("3 folders created"). */
export const ACTION_WORDS: Readonly<Record<string, string>> = {
  Mkdir: "folders created",
  Rename: "renamed or moved on disk",
  Trash: "moved to the trash",
  Delete: "deleted",
  RemoveFolder: "folders removed",
  Refresh: "updated",
  ConflictCopy: "conflict copies kept",
  Adopt: "already there (adopted)",
  MarkLocallyDeleted: "deleted by you locally (kept deleted)",
  Forget: "no longer tracked",
  RemoteCleanup: "deleted on the service (remote cleanup, kept locally)"
}

const SKIP_WORDS: Readonly<Record<string, string>> = {
  locked: "locked on the remote",
  filtered: "outside the filters",
  too_big: "larger than mirror.max_file_size",
  broken_parent: "broken remote folder",
  locally_deleted: "deleted by you locally",
  occupied: "path taken by a file dlsync did not write",
  modified_locally: "changed locally",
  parent_blocked: "folder blocked"
}

// ---------------------------------------------------------------------------------------

/** The paths a pass's local actions created, moved or removed (both ends of a move). */
const changedPaths = (outcomes: ReadonlyArray<Outcome>): Array<string> =>
  outcomes.flatMap((o): Array<string> => {
    if (o.result !== "done") return []
    const a = o.action
    switch (a._tag) {
      case "Mkdir":
      case "Trash":
      case "Delete":
      case "RemoveFolder":
        return [a.path]
      case "Rename":
      case "ConflictCopy":
        return [a.from, a.to]
      default:
        return []
    }
  })

const remoteIdOf = (action: Action): string | null =>
  action._tag === "HoldDeletes" ? null : "remoteId" in action ? action.remoteId : action.item.id
