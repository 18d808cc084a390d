/**
 * The record step of a download: one call writes what the transfer step brought back into
 * the store and queues the file's app state (never waited on).
 *
 *   Landed ─► entry synced with the landed lstat ─► app state "complete"
 *   Failed ─► entry failed with the reason (+ event) ─► app state "failed"
 */
import { Effect } from "effect"
import { FileProgress } from "../appstate/FileProgress.ts"
import type { WrittenStat } from "../domain/LocalEntry.ts"
import type { Store } from "../store/Store.ts"
import { type DownloadAction, recordFailed, recordLanded } from "../sync/executor.ts"

/** What the transfer step brings back for one download. */
export type DownloadOutcome =
  | { readonly _tag: "Landed"; readonly action: DownloadAction; readonly written: WrittenStat }
  | { readonly _tag: "Failed"; readonly action: DownloadAction; readonly reason: string }

export const recordDownload = (outcome: DownloadOutcome): Effect.Effect<void, never, Store | FileProgress> =>
  Effect.gen(function* () {
    const { action } = outcome
    const progress = yield* FileProgress
    if (outcome._tag === "Landed") {
      yield* recordLanded(action, outcome.written)
      yield* progress.report(action.item.id, {
        state: "complete",
        bytes: outcome.written.size,
        size: action.item.size,
        path: action.path
      })
    } else {
      yield* recordFailed(action, outcome.reason)
      yield* progress.report(action.item.id, {
        state: "failed",
        bytes: 0,
        size: action.item.size,
        path: action.path,
        error: outcome.reason
      })
    }
  })
