/**
 * One mirror pass over what the Store knows of the remote:
 *
 *   recoverInterrupted ─► checkRoot ─► scanLocal ─► plan ─► executePlan
 *
 * Invariants:
 * - The root is checked before it is read: an unmounted root (marker gone while entries
 *   exist) stops the pass before any scan could read it as "the user deleted everything".
 * - Deletions follow only from a complete listing made with the current feed parameters
 *   (`FeedState.listingComplete`).
 * - A store without any local entry over a root that already holds files (a lost or deleted
 *   state dir, or a first run onto an existing folder) plans in adopt-only mode: what matches
 *   is adopted, the rest kept as conflict copies, nothing deleted.
 */
import { Effect } from "effect"
import { Store } from "../store/Store.ts"
import { type DownloadQueue, type ExecutionReport, executePlan, recoverInterrupted } from "./executor.ts"
import { type LocalOpError, LocalOps, type RootUnavailable } from "./localOps.ts"
import { type ScanReport, scanLocal } from "./localScan.ts"
import { type Action, type PlanConfig, plan } from "./planner.ts"

export interface PassOptions {
  readonly config: PlanConfig
  readonly now: Date
  readonly trashDays: number
  /** `run --once --allow-big-delete`. */
  readonly allowBigDelete: boolean
}

export interface PassReport {
  readonly adoptOnly: boolean
  readonly listingComplete: boolean
  readonly scan: ScanReport
  readonly actions: ReadonlyArray<Action>
  readonly execution: ExecutionReport
}

export const runPass = Effect.fn("runPass")(function* (
  options: PassOptions
): Effect.fn.Return<PassReport, RootUnavailable | LocalOpError, Store | LocalOps | DownloadQueue> {
  const store = yield* Store
  const ops = yield* LocalOps
  yield* recoverInterrupted()
  const local = yield* store.local.all
  yield* ops.checkRoot(local.length > 0)
  const scan = yield* scanLocal(local)
  const feed = yield* store.feed.state
  const adoptOnly = local.length === 0 && scan.disk.size > 0
  const actions = plan({
    remote: yield* store.remote.all,
    local,
    disk: scan.disk,
    locallyDeleted: yield* store.local.locallyDeleted,
    config: options.config,
    now: options.now,
    listingComplete: feed.listingComplete,
    adoptOnly,
    allowBigDelete: options.allowBigDelete
  })
  const execution = yield* executePlan(actions, { now: options.now, trashDays: options.trashDays })
  return { adoptOnly, listingComplete: feed.listingComplete, scan, actions, execution }
})
