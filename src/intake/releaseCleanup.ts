/**
 * What a removal owes the service: with its files, the release's own files (by id) and its
 * own folder when nothing else is in it; then the download record.
 *
 *   removed (cleanup owed) ─► files? ─► the store lacks some of them (the feed has not caught
 *        │                               up since the service completed it) ─► wait, poll
 *        │                             ─► POST /files/delete [its files' ids, + its folder's id
 *        │                                when every file below that folder is its own]
 *        ▼
 *   a download still running ─► POST /downloads/{id}/cancel ─► DELETE /downloads/{id} ─► done
 *
 * Invariants:
 * - Never a folder that holds anything but this release's files: the folder goes only when
 *   the store shows no file below it of another download or of none (releaseFiles.ts), so
 *   two releases that the service put in one folder can each be removed without the other
 *   losing a byte.
 * - The cleanup is cleared only after the service answered (404 counts as done), so a crash
 *   or an outage repeats it; deleting by id is harmless to repeat.
 * - With files, the feed then reports them deleted and the mirror trashes the local copies
 *   it wrote and that are unchanged, behind its big-delete gate.
 */
import { Effect, Option } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import type { ApiError } from "../api/ApiError.ts"
import { DownloadId } from "../api/schemas/common.ts"
import type { FileId } from "../domain/FileId.ts"
import type { IntakeRecord, IntakeTables } from "../store/intakeTables.ts"
import type { Store } from "../store/Store.ts"
import { findByReference } from "./intakeSender.ts"
import { contentRootOf, isWithin } from "./releaseFolder.ts"

export interface CleanupContext {
  readonly api: ApiClient["Service"]
  readonly tables: IntakeTables["Service"]
  readonly store: Store["Service"]
  readonly now: number
}

/** "done", or "waiting" for the feed to bring the release's files (a poll is due). */
export type CleanupOutcome = "done" | "waiting"

export const cleanUp = Effect.fn("Intake.cleanUp")(function* (ctx: CleanupContext, record: IntakeRecord) {
  const downloadId =
    record.downloadId ?? Option.getOrNull(Option.map(yield* findByReference(ctx.api, record.id), (d) => d.id))
  if (record.cleanup === "files" && downloadId !== null) {
    if (record.serviceCompletedAt !== null) {
      const feed = yield* ctx.store.feed.state
      const seenSince = feed.caughtUpFrom === null ? Number.NaN : Date.parse(feed.caughtUpFrom)
      if (!(seenSince >= record.serviceCompletedAt)) return "waiting" as CleanupOutcome
    }
    const ids = yield* ownItems(ctx.store, record, downloadId)
    if (ids.length > 0) yield* ctx.api.files.deleteMany(ids)
  }
  if (downloadId !== null) {
    const id = DownloadId.make(downloadId)
    if (record.serviceCompletedAt === null && record.phase !== "failed") {
      // Still running there: stopped first, so that it makes no files after its record is gone.
      yield* ctx.api.downloads.cancel(id).pipe(Effect.catchIf(isGone, () => Effect.succeed(Option.none())))
    }
    yield* ctx.api.downloads.delete(id).pipe(Effect.catchIf(isGone, () => Effect.void))
  }
  yield* ctx.tables.update(record.id, ["removed"], { cleanup: null }, ctx.now)
  yield* Effect.logInfo(
    `intake: ${record.name} (${record.id}) removed from the service${record.cleanup === "files" ? " with its files" : ""}`
  )
  return "done" as CleanupOutcome
})

// ---------------------------------------------------------------------------------------

/**
 * The ids to delete: the release's folder (its own directory, or the torrent's root folder
 * inside its category) when every file below it is the release's, else its files one by one.
 */
const ownItems = Effect.fnUntraced(function* (store: Store["Service"], record: IntakeRecord, downloadId: string) {
  const files = yield* store.releases.filesOf(downloadId)
  const ids: Array<FileId> = files.map((f) => f.remoteId)
  const root = contentRootOf(
    files.map((f) => f.remotePath),
    record.directoryCategory
  )
  const shared = record.directoryCategory
  const folder = record.directory !== shared ? record.directory : files.length > 1 ? root : undefined
  if (folder === undefined || !isWithin(folder, shared) || folder === shared) return ids
  if ((yield* store.releases.foreignFilesBelow(folder, downloadId)) > 0) return ids
  const folderId = yield* store.releases.itemAt(folder)
  return Option.isSome(folderId) ? [folderId.value, ...ids] : ids
})

/** 404 (already gone) and 409 (already in that state) leave nothing to do. */
const isGone = (error: ApiError): boolean => error.reason._tag === "NotFound" || error.reason._tag === "Conflict"
