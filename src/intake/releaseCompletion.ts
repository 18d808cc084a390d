/**
 * The one meaning of "complete" for a release: the service completed its download, the
 * store has seen every file the download had then, and each of them is on local disk as
 * dlsync wrote it. Settling it fixes the release's content path for good.
 *
 *   serviceCompletedAt ─► a catch-up that started after it reached the feed's head?
 *        │ (until then the store may lack some of its files) ─► wait
 *        ▼
 *   its files (remote items with its download_id): each synced at its size in the store,
 *   and a fresh lstat finds a regular file of that size ─► else wait (the mirror is on it)
 *        ▼
 *   a content root that holds them and no other download's file ─► completed (contentPath)
 *                                                               └► else failed, with why
 *
 * Invariants:
 * - `completedAt` is written only here, only when every file is verified, and with the
 *   content root: a release reported complete names a path that holds all of it.
 * - A release never reports a path that holds another release's (or anyone else's) file on
 *   the service: that release fails instead, saying why.
 */
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { Effect } from "effect"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import type { IntakeRecord, IntakeTables } from "../store/intakeTables.ts"
import type { ReleaseFile, Store } from "../store/Store.ts"
import { contentRootOf } from "./releaseFolder.ts"
import { isVerified } from "./releaseView.ts"

export interface CompletionContext {
  readonly store: Store["Service"]
  readonly tables: IntakeTables["Service"]
  readonly events: MirrorEvents["Service"]
  /** The mirror root, absolute. */
  readonly root: string
  readonly now: number
}

export type Settled = "waiting" | "completed" | "failed"

/** Settles one release the service completed; "waiting" while the store or the disk lacks some of it. */
export const settleCompletion = Effect.fn("Intake.settleCompletion")(function* (
  ctx: CompletionContext,
  record: IntakeRecord
) {
  const downloadId = record.downloadId
  if (record.phase !== "sent" || record.completedAt !== null || record.serviceCompletedAt === null) {
    return "waiting" as Settled
  }
  if (downloadId === null) return "waiting" as Settled
  const feed = yield* ctx.store.feed.state
  const seenSince = feed.caughtUpFrom === null ? Number.NaN : Date.parse(feed.caughtUpFrom)
  if (!(seenSince >= record.serviceCompletedAt)) return "waiting" as Settled

  const files = yield* ctx.store.releases.filesOf(downloadId)
  if (files.length === 0) {
    return yield* fail(ctx, record, `completed on the service, but no file of download ${downloadId} is listed there`)
  }
  if (!files.every(isVerified)) return "waiting" as Settled
  if (!(yield* onDisk(ctx.root, files))) return "waiting" as Settled

  const remoteRoot = contentRootOf(
    files.map((f) => f.remotePath),
    record.directoryCategory
  )
  const localRoot = contentRootOf(
    files.map((f) => f.local?.path ?? f.remotePath),
    record.directoryCategory
  )
  if (remoteRoot === undefined || localRoot === undefined) {
    return yield* fail(
      ctx,
      record,
      `the service put its files loose in ${record.directoryCategory === "" ? "the account's root" : `"${record.directoryCategory}"`}, beside other files, so no path holds them alone`
    )
  }
  if (files.length > 1) {
    const foreign = yield* ctx.store.releases.foreignFilesBelow(remoteRoot, downloadId)
    if (foreign > 0) {
      return yield* fail(
        ctx,
        record,
        `the service put its files in "${remoteRoot}" beside ${foreign} file(s) of another download; dlsync reports no path that holds another release's files (remove it and add it again)`
      )
    }
  }
  const size = files.reduce((n, f) => n + f.size, 0)
  const stored = yield* ctx.tables.update(
    record.id,
    ["sent"],
    { completedAt: ctx.now, contentPath: localRoot, size, progress: 1, reason: null },
    ctx.now
  )
  if (!stored) return "waiting" as Settled
  yield* Effect.logInfo(`intake: ${record.name} (${record.id}) is complete on local disk at ${localRoot}`)
  yield* ctx.events.publish({
    _tag: "release_complete",
    id: record.id,
    name: record.name,
    category: record.category,
    via: record.via,
    path: localRoot,
    absolutePath: NodePath.join(ctx.root, localRoot),
    size,
    files: files.length
  })
  return "completed" as Settled
})

/** Marks a release failed (from any live phase) and tells the subscribers. */
export const failRelease = Effect.fnUntraced(function* (
  ctx: Pick<CompletionContext, "tables" | "events" | "now">,
  record: IntakeRecord,
  reason: string
) {
  const stored = yield* ctx.tables.update(
    record.id,
    ["new", "sending", "selecting", "parked", "sent"],
    { phase: "failed", reason },
    ctx.now
  )
  if (!stored) return
  yield* Effect.logWarning(`intake: ${record.name} (${record.id}) failed: ${reason}`)
  yield* ctx.events.publish({
    _tag: "release_failed",
    id: record.id,
    name: record.name,
    category: record.category,
    via: record.via,
    reason
  })
})

// ---------------------------------------------------------------------------------------

const fail = (ctx: CompletionContext, record: IntakeRecord, reason: string) =>
  Effect.as(failRelease(ctx, record, reason), "failed" as Settled)

/** Whether a fresh lstat of each file finds a regular file of its size (nothing moved or changed it since). */
const onDisk = (root: string, files: ReadonlyArray<ReleaseFile>): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    for (const file of files) {
      const stat = await NodeFs.lstat(NodePath.join(root, file.local?.path ?? file.remotePath)).catch(() => undefined)
      if (stat === undefined || !stat.isFile() || stat.size !== file.size) return false
    }
    return true
  })
