/**
 * The record step of a download: one call writes what the transfer step brought back into
 * the store and queues the file's app state (never waited on).
 *
 *   Landed ─► entry synced with the landed lstat ─► app state "complete" ─► file_complete
 *             └─► the last file of its service download to land? ─► download_complete
 *   Failed ─► entry failed with the reason (+ event) ─► app state "failed" ─► file_failed
 *
 * The mirror event (events/) is published after the store recorded the outcome: a consumer
 * that reads the store on `file_complete` finds the file synced. The caller runs one record
 * step at a time (TransferDownloads), so a download completes once.
 */
import * as NodePath from "node:path"
import { Effect, Option } from "effect"
import { FileProgress } from "../appstate/FileProgress.ts"
import type { WrittenStat } from "../domain/LocalEntry.ts"
import { categoryOf, type FileFacts } from "../events/MirrorEvent.ts"
import { type MirrorEvents, publishEvent } from "../events/MirrorEvents.ts"
import { Store } from "../store/Store.ts"
import { type DownloadAction, recordFailed, recordLanded } from "../sync/executor.ts"

/** What the transfer step brings back for one download. */
export type DownloadOutcome =
  | { readonly _tag: "Landed"; readonly action: DownloadAction; readonly written: WrittenStat }
  | { readonly _tag: "Failed"; readonly action: DownloadAction; readonly reason: string }

/** Records one outcome; `root` is the mirror root, for the event's absolute path. */
export const recordDownload = (
  outcome: DownloadOutcome,
  root: string
): Effect.Effect<void, never, Store | FileProgress | MirrorEvents> =>
  Effect.gen(function* () {
    const { action } = outcome
    const progress = yield* FileProgress
    const facts: FileFacts = {
      path: action.path,
      absolutePath: NodePath.join(root, action.path),
      fileId: action.item.id,
      size: action.item.size,
      kind: action.item.kind,
      category: categoryOf(action.path)
    }
    if (outcome._tag === "Landed") {
      yield* recordLanded(action, outcome.written)
      yield* progress.report(action.item.id, {
        state: "complete",
        bytes: outcome.written.size,
        size: action.item.size,
        path: action.path
      })
      yield* publishEvent({ _tag: "file_complete", ...facts, size: outcome.written.size })
      // A replaced file (a new version) does not complete its download a second time.
      const downloadId = action.item.downloadId
      if (downloadId !== undefined && action.replace === null) yield* completeDownload(downloadId)
    } else {
      yield* recordFailed(action, outcome.reason)
      yield* progress.report(action.item.id, {
        state: "failed",
        bytes: 0,
        size: action.item.size,
        path: action.path,
        error: outcome.reason
      })
      yield* publishEvent({ _tag: "file_failed", ...facts, reason: outcome.reason })
    }
  })

/** Publishes download_complete when every file the feed reported for `downloadId` is synced on disk. */
const completeDownload = Effect.fnUntraced(function* (downloadId: string) {
  const store = yield* Store
  const paths: Array<string> = []
  for (const file of yield* store.remote.filesOfDownload(downloadId)) {
    const entry = yield* store.local.byRemoteId(file.id)
    if (Option.isNone(entry) || entry.value.state !== "synced") return
    paths.push(entry.value.path)
  }
  if (paths.length > 0) yield* publishEvent({ _tag: "download_complete", downloadId, paths })
})
