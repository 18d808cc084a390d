/**
 * Following an accepted intake to completion, and a removed one to its cleanup:
 *
 *   sent ─► GET /downloads/{id}: status, progress, size, error ─► completed there?
 *        ─► GET /files?download_id=: the download's files (the mirror takes them whatever
 *           its filters, see IntakeTables.mirroredIds) ─► verified on local disk?
 *        ─► completedAt
 *   removed (cleanup owed) ─► [POST /files/delete] ─► DELETE /downloads/{id} ─► done
 *
 * Invariants:
 * - `completedAt` is set only when every file of the download has a synced local entry
 *   and a fresh lstat at its path shows a regular file of the remote size, as dlsync wrote
 *   it (the engine lands files under .dlsync/partial and renames them into place, so a
 *   temporary file is never at that path).
 * - Failed, canceled and expired downloads fail the intake with the service's reason;
 *   a blocked one shows failed and is still followed (it may be released).
 * - A removal's cleanup is cleared only after the service answered (404 counts as done);
 *   with files, the service's files go first and the engine then trashes or deletes the
 *   local copies it wrote and that are unchanged, behind its big-delete gate.
 */
import * as NodePath from "node:path"
import { Effect, Option, Stream } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import type { ApiError } from "../api/ApiError.ts"
import type { Download } from "../api/schemas/downloads.ts"
import type { FileRecord } from "../api/schemas/files.ts"
import { FileId } from "../domain/FileId.ts"
import { lstatOrUndefined } from "../fs/localStat.ts"
import type { IntakeFile, IntakeRecord, IntakeTables } from "../store/intakeTables.ts"
import type { LiveTransfers } from "../store/liveTransfers.ts"
import { LIVE_TRANSFERS_MAX_AGE_MS } from "../store/liveTransfers.ts"
import type { Store } from "../store/Store.ts"
import { downloadIdOf, findByReference } from "./intakeSender.ts"

export interface ProgressContext {
  readonly api: ApiClient["Service"]
  readonly tables: IntakeTables["Service"]
  readonly store: Store["Service"]
  readonly root: string
  readonly now: number
}

/** Statuses after which the service will not complete the download. */
const FAILED_STATUSES: ReadonlySet<string> = new Set(["failed", "canceled", "cancelled", "expired", "error"])

/** One look at an accepted download on the service; true when its files became known (a reconcile is due). */
export const followDownload = Effect.fn("IntakeProgress.follow")(function* (
  ctx: ProgressContext,
  record: IntakeRecord
) {
  if (record.downloadId === null) return false
  const answer = yield* Effect.result(ctx.api.downloads.get(downloadIdOf(record.downloadId)))
  if (answer._tag === "Failure") {
    if (answer.failure.reason._tag !== "NotFound") return yield* answer.failure
    yield* ctx.tables.update(
      record.id,
      ["sent"],
      { phase: "failed", reason: "the download is no longer on the service (deleted there)" },
      ctx.now
    )
    return false
  }
  const download = answer.success
  const status = download.status ?? "queued"
  if (FAILED_STATUSES.has(status)) {
    const reason = `${status} on the service: ${errorText(download) ?? "no reason given"}`
    yield* ctx.tables.update(record.id, ["sent"], { phase: "failed", status, reason }, ctx.now)
    yield* Effect.logWarning(`intake: ${record.name} (${record.id}) ${reason}`)
    return false
  }
  const size = numberField(download, "size_bytes") ?? record.size
  const serviceProgress = status === "completed" ? 1 : (numberField(download, "progress") ?? record.progress)
  const reason =
    status === "blocked" ? `blocked by the service: ${errorText(download) ?? "the account needs attention"}` : null
  yield* ctx.tables.update(
    record.id,
    ["sent"],
    { status, size, reason, ...(status === "completed" ? {} : { progress: clamp(serviceProgress) }) },
    ctx.now
  )
  if (status !== "completed" || record.files !== null) return false
  const files = yield* downloadFiles(ctx.api, download, record.directory, record.category)
  // Completed but no file listed yet (the service may list them a moment later): asked again next round.
  if (files.length === 0) return false
  yield* ctx.tables.update(
    record.id,
    ["sent"],
    { files, fileId: download.file_id ?? null, progress: 0, size: files.reduce((n, f) => n + f.size, 0) || size },
    ctx.now
  )
  yield* Effect.logInfo(
    `intake: ${record.name} (${record.id}) completed on the service: ${files.length} file(s) to mirror`
  )
  return true
})

/**
 * Checks an intake's files on local disk; sets completedAt once every one is there as
 * dlsync wrote it. A file not yet there counts the bytes its running transfer has so far
 * (the live transfers this process publishes), so progress moves during a long file.
 */
export const verifyLocal = Effect.fn("IntakeProgress.verify")(function* (ctx: ProgressContext, record: IntakeRecord) {
  const files = record.files
  if (files === null || record.completedAt !== null) return
  const inFlight = inFlightBytes(yield* ctx.store.liveTransfers.read, ctx.now)
  const checked: Array<IntakeFile> = []
  let allVerified = files.length > 0
  for (const file of files) {
    // Never the whole size before it is verified: an empty or fully transferred file may still be unplaced.
    const transferring = Math.min(inFlight.get(file.remoteId) ?? 0, Math.max(0, file.size - 1))
    const entry = yield* ctx.store.local.byRemoteId(FileId.make(file.remoteId))
    if (Option.isNone(entry)) {
      allVerified = false
      checked.push({ ...file, localBytes: transferring })
      continue
    }
    const { path, written, state } = entry.value
    const relative = relativeTo(path, record.category) ?? file.path
    const stat = lstatOrUndefined(NodePath.join(ctx.root, path))
    const verified =
      state === "synced" &&
      written !== null &&
      stat?.isFile() === true &&
      Number(stat.size) === written.size &&
      written.size === file.size
    allVerified &&= verified
    checked.push({ ...file, path: relative, localBytes: verified ? file.size : transferring })
  }
  const total = checked.reduce((n, f) => n + f.size, 0)
  const local = checked.reduce((n, f) => n + f.localBytes, 0)
  const complete = allVerified
  yield* ctx.tables.update(
    record.id,
    ["sent"],
    {
      files: checked,
      progress: total === 0 ? (complete ? 1 : 0) : local / total,
      ...(complete ? { completedAt: ctx.now } : {})
    },
    ctx.now
  )
  if (complete) yield* Effect.logInfo(`intake: ${record.name} (${record.id}) is complete on local disk`)
})

/** What a removal owes the service: the files (when asked) and the download record. */
export const cleanUp = Effect.fn("IntakeProgress.cleanUp")(function* (ctx: ProgressContext, record: IntakeRecord) {
  const downloadId =
    record.downloadId ?? Option.getOrNull(Option.map(yield* findByReference(ctx.api, record.id), (d) => d.id))
  if (record.cleanup === "files") {
    const ids = record.fileId !== null ? [record.fileId] : (record.files ?? []).map((f) => f.remoteId)
    if (ids.length > 0) yield* ctx.api.files.deleteMany(ids.map((id) => FileId.make(id)))
  }
  if (downloadId !== null) {
    yield* ctx.api.downloads.delete(downloadIdOf(downloadId)).pipe(
      Effect.catchIf(
        (e: ApiError) => e.reason._tag === "NotFound",
        () => Effect.void
      )
    )
  }
  yield* ctx.tables.update(record.id, ["removed"], { cleanup: null }, ctx.now)
  yield* Effect.logInfo(
    `intake: ${record.name} (${record.id}) removed from the service${record.cleanup === "files" ? " with its files" : ""}`
  )
})

// ---------------------------------------------------------------------------------------

/** Bytes so far of the files being transferred, by remote id, from a snapshot at most LIVE_TRANSFERS_MAX_AGE_MS old. */
const inFlightBytes = (published: Option.Option<LiveTransfers>, now: number): ReadonlyMap<string, number> => {
  if (Option.isNone(published) || !(now - Date.parse(published.value.updatedAt) <= LIVE_TRANSFERS_MAX_AGE_MS)) {
    return new Map()
  }
  return new Map(published.value.files.map((f) => [f.fileId, f.bytes]))
}

/**
 * The download's files, with their paths below the category folder as the service names
 * them. The listing holds the files; the download's root folder (`file_id`) is read for
 * its name, so the release's folder is right before the mirror has the files (the local
 * paths replace these once mirrored).
 */
const downloadFiles = (api: ApiClient["Service"], download: Download, directory: string, category: string) =>
  Effect.gen(function* () {
    const pages = yield* Stream.runCollect(api.files.listPages({ downloadId: download.id, flatten: true }))
    const byId = new Map<string, FileRecord>()
    for (const page of pages) for (const item of page.items) byId.set(item.id, item)
    const rootId = download.file_id ?? null
    let rootName: string | undefined
    if (rootId !== null && !byId.has(rootId)) {
      const root = yield* api.files.get(rootId)
      if (root.type === "folder") rootName = root.name
    }
    const below = relativeTo(directory, category)
    const files: Array<IntakeFile> = []
    for (const item of byId.values()) {
      if (item.type !== "file") continue
      const parts = [item.name]
      let parentId = item.parent_id
      let parent = parentId === null ? undefined : byId.get(parentId)
      while (parent !== undefined) {
        parts.unshift(parent.name)
        parentId = parent.parent_id
        parent = parentId === null ? undefined : byId.get(parentId)
      }
      if (rootName !== undefined && parentId !== null) parts.unshift(rootName)
      files.push({
        remoteId: item.id,
        path: [below ?? "", ...parts].filter((p) => p !== "").join("/"),
        size: item.size_bytes,
        localBytes: 0
      })
    }
    return files
  })

/** `path` below `folder` (both relative, `/`-separated); undefined when it is not below it. */
const relativeTo = (path: string, folder: string): string | undefined => {
  if (folder === "") return path
  return path.startsWith(`${folder}/`) ? path.slice(folder.length + 1) : path === folder ? "" : undefined
}

const numberField = (download: Download, key: string): number | undefined => {
  const value = download[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

const errorText = (download: Download): string | undefined => {
  const error = download.error
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return undefined
}

const clamp = (n: number): number => Math.min(1, Math.max(0, n))
