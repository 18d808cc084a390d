/**
 * The local half of a mirror pass, over what the Store knows of the remote:
 *
 *   checkRoot ─► case probe ─► recoverInterrupted ─► scanLocal ─► plan ─► executePlan
 *
 * It returns the downloads the plan needs; the engine (engine/MirrorPass.ts) hands them to
 * the transfer step.
 *
 * Invariants:
 * - The root is checked before anything is read or created in it, here and only here: an
 *   unmounted root (marker gone while entries exist) stops the pass before the case probe
 *   writes under `.dlsync`, before an interrupted operation is settled from what the root
 *   seems to hold, and before any scan could read it as "the user deleted everything".
 * - Deletions follow only from a complete listing made with the current feed parameters
 *   (`FeedState.listingComplete`).
 * - A store without any local entry over a root that already holds files (a lost or deleted
 *   state dir, or a first run onto an existing folder) plans in adopt-only mode: what matches
 *   is adopted, the rest kept as conflict copies, nothing deleted.
 */
import { Effect } from "effect"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import type { Database } from "../store/Database.ts"
import { Store } from "../store/Store.ts"
import { detectCaseInsensitive } from "./caseSensitivity.ts"
import { type ExecutionReport, executePlan, recoverInterrupted } from "./executor.ts"
import { type LocalOpError, LocalOps, type RootUnavailable } from "./localOps.ts"
import { type ScanReport, scanLocal } from "./localScan.ts"
import { type Action, type PlanConfig, plan } from "./planner.ts"

export interface LocalPassOptions {
  /** The planner's policy, for a root whose names are (or are not) case-insensitive. */
  readonly config: (caseInsensitive: boolean) => PlanConfig
  readonly now: Date
  readonly trashDays: number
  /** `run --once --allow-big-delete`. */
  readonly allowBigDelete: boolean
}

export interface LocalPassReport {
  readonly caseInsensitive: boolean
  readonly adoptOnly: boolean
  readonly listingComplete: boolean
  readonly scan: ScanReport
  readonly actions: ReadonlyArray<Action>
  /** What was done on disk, and the downloads still needed (`execution.downloads`). */
  readonly execution: ExecutionReport
}

export const runPass = Effect.fn("runPass")(function* (
  options: LocalPassOptions
): Effect.fn.Return<LocalPassReport, RootUnavailable | LocalOpError, Store | LocalOps | MirrorEvents | Database> {
  const store = yield* Store
  const ops = yield* LocalOps
  yield* ops.checkRoot((yield* store.local.count) > 0)
  const caseInsensitive = yield* detectCaseInsensitive()
  // For `status`, which maps the remote tree to names without probing the root itself.
  yield* store.mirrorRoot.recordCaseInsensitive(caseInsensitive)
  yield* recoverInterrupted()
  const local = yield* store.local.all
  const scan = yield* scanLocal(local)
  const feed = yield* store.feed.state
  const adoptOnly = local.length === 0 && scan.disk.size > 0
  const actions = plan({
    remote: yield* store.remote.all,
    local,
    disk: scan.disk,
    locallyDeleted: yield* store.local.locallyDeleted,
    config: options.config(caseInsensitive),
    now: options.now,
    listingComplete: feed.listingComplete,
    adoptOnly,
    allowBigDelete: options.allowBigDelete,
    cleanedUp: yield* store.cleanup.marked
  })
  const execution = yield* executePlan(actions, { now: options.now, trashDays: options.trashDays })
  return { caseInsensitive, adoptOnly, listingComplete: feed.listingComplete, scan, actions, execution }
})
