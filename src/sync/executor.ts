/**
 * The executor: performs a plan's local actions on the mirror root through LocalOps, records
 * every outcome in the Store, and returns the downloads the plan needs (the transfer step,
 * engine/TransferDownloads.ts, carries them out and records what comes back).
 *
 *   plan ─► executePlan ─┬─► LocalOps (mkdir, rename, conflict copy, trash, delete, rmdir)
 *                        ├─► Store (entries, markers, held deletes, events; a download's
 *                        │   entry marked pending); a removed video's sidecar poster and a
 *                        │   removed folder's posters go with them (posterRemovals.ts)
 *                        ├─► mirror events (events/): local_moved, local_removed, deletion_held,
 *                        │   each after the store recorded it
 *                        └─► report.downloads
 *
 * Invariants:
 * - The caller has checked the root (sync/pass.ts); a root that goes missing midway stops
 *   the pass with RootUnavailable.
 * - Actions run in plan order; a failed action is recorded (with its reason) and the pass
 *   goes on: an action that depended on it fails on its own checks, never blindly.
 * - The store changes only after the disk did. A rename, conflict copy, trash or delete is
 *   recorded in `pending_op` first and cleared with the store update that follows it; after a
 *   crash in between, `recoverInterrupted` (run before the next scan) finds by inode whether
 *   the operation happened and completes the store, so a moved file is never taken for one
 *   the user deleted.
 * - Downloads are only returned here; the entry keeps describing what is on disk until the
 *   transfer step records the landed file.
 */
import { Effect, Option } from "effect"
import type { FileId } from "../domain/FileId.ts"
import {
  type LocalEntry,
  type LocalStat,
  movedVersion,
  remoteVersionOf,
  type WrittenStat
} from "../domain/LocalEntry.ts"
import type { RemoteItem } from "../domain/RemoteItem.ts"
import { type MirrorEvents, publishEvent } from "../events/MirrorEvents.ts"
import type { Database } from "../store/Database.ts"
import { inOneCommit } from "../store/oneCommit.ts"
import { type PendingOp, Store } from "../store/Store.ts"
import { type LocalOpError, LocalOps, type RootUnavailable } from "./localOps.ts"
import { type Action, type ActionTag, MOVING_DIR } from "./planner.ts"
import { postersIn, postersOfForgotten, sidecarAlong } from "./posterRemovals.ts"

export type DownloadAction = Extract<Action, { readonly _tag: "Download" }>

export type OutcomeResult = "done" | "queued" | "failed" | "held" | "skipped"

export interface Outcome {
  readonly action: Action
  readonly result: OutcomeResult
  readonly detail: string | null
}

export interface ExecutionReport {
  readonly outcomes: ReadonlyArray<Outcome>
  readonly failed: ReadonlyArray<Outcome>
  readonly counts: Readonly<Partial<Record<ActionTag, number>>>
  /** Trash days purged at the end of the pass. */
  readonly purged: ReadonlyArray<string>
  /** The downloads the plan needs, in plan order (their entries are marked pending). */
  readonly downloads: ReadonlyArray<DownloadAction>
}

export interface ExecuteOptions {
  /** The pass's time: dates trash folders and drives the purge. */
  readonly now: Date
  readonly trashDays: number
}

export const executePlan = Effect.fn("executePlan")(function* (
  actions: ReadonlyArray<Action>,
  options: ExecuteOptions
): Effect.fn.Return<ExecutionReport, RootUnavailable | LocalOpError, Store | LocalOps | MirrorEvents | Database> {
  const store = yield* Store
  const ops = yield* LocalOps
  const today = options.now.toISOString().slice(0, 10)
  const outcomes: Array<Outcome> = []
  let held = false
  // Consecutive downloads are only marked pending: one store commit for each such run, not
  // one per file (an fsync each), before anything else of the plan happens.
  const downloads: Array<DownloadAction> = []
  const markDownloads = Effect.suspend(() =>
    inOneCommit(
      Effect.forEach(
        downloads.splice(0),
        (action) => Effect.map(markPending(action), (result) => void outcomes.push({ action, ...result })),
        { discard: true }
      )
    )
  )

  for (const action of actions) {
    if (action._tag === "Download") {
      downloads.push(action)
      continue
    }
    if (downloads.length > 0) yield* markDownloads
    const result = yield* perform(action, today).pipe(
      Effect.catchTag("LocalOpError", (e) =>
        Effect.as(
          store.events.append({
            level: "error",
            kind: `${action._tag.toLowerCase()}_failed`,
            message: `${action.reason}: ${e.message}`,
            path: e.path,
            remoteId: remoteIdOf(action)
          }),
          { result: "failed" as const, detail: e.message }
        )
      )
    )
    if (action._tag === "HoldDeletes") held = true
    outcomes.push({ action, ...result })
    // The marker going away midway means the root went away: stop before reading more into it.
    if (result.result === "failed") yield* ops.checkRoot(true)
  }
  if (downloads.length > 0) yield* markDownloads
  if (!held) yield* store.held.replace([])
  const purged = yield* ops.purgeTrash(today, options.trashDays)
  const counts: Partial<Record<ActionTag, number>> = {}
  for (const o of outcomes) if (o.result !== "failed") counts[o.action._tag] = (counts[o.action._tag] ?? 0) + 1
  return {
    outcomes,
    failed: outcomes.filter((o) => o.result === "failed"),
    counts,
    purged,
    downloads: outcomes.flatMap((o) => (o.result === "queued" && o.action._tag === "Download" ? [o.action] : []))
  }
})

/**
 * Settles a local operation a crash interrupted between the disk and the store: if what it
 * moved or removed (known by inode) is no longer at its source, the operation happened and
 * the store catches up; otherwise it did not and nothing changes. Run before scanning.
 */
export const recoverInterrupted = Effect.fn("recoverInterrupted")(function* (): Effect.fn.Return<
  void,
  LocalOpError,
  Store | LocalOps
> {
  const store = yield* Store
  const ops = yield* LocalOps
  const pending = yield* store.pendingOp.get
  if (Option.isNone(pending)) return
  const op = pending.value
  const atSource = yield* ops.lstat(op.from)
  if (atSource === undefined || atSource.ino !== op.ino) {
    if (op.op === "rename" && op.to !== null) {
      const atTarget = yield* ops.lstat(op.to)
      if (atTarget?.ino === op.ino) yield* store.local.move(op.from, op.to)
    } else yield* store.local.remove(op.from)
    yield* store.events.append({
      level: "warn",
      kind: "recovered",
      message: `completed the record of an interrupted ${op.op.replace("_", " ")} of ${op.from}`,
      path: op.from,
      remoteId: op.remoteId
    })
  }
  yield* store.pendingOp.clear
})

// ---------------------------------------------------------------------------------------

interface Done {
  readonly result: OutcomeResult
  readonly detail: string | null
}

const done: Done = { result: "done", detail: null }

const perform = Effect.fnUntraced(function* (
  action: Action,
  today: string
): Effect.fn.Return<Done, LocalOpError, Store | LocalOps | MirrorEvents> {
  const store = yield* Store
  const ops = yield* LocalOps
  const log = (message: string, path: string | null) =>
    store.events.append({ level: "info", kind: action._tag.toLowerCase(), message, path, remoteId: remoteIdOf(action) })
  switch (action._tag) {
    case "Mkdir": {
      const stat = yield* ops.mkdirp(action.path)
      yield* store.local.put(synced(action.path, action.item, stat))
      return done
    }
    case "Rename": {
      if (action.to.startsWith(`${MOVING_DIR}/`)) yield* ops.mkdirp(MOVING_DIR)
      const pending = pendingOf("rename", action.remoteId, action.from, action.to, action.expected)
      yield* guarded(pending, ops.rename(action.from, action.to, action.expected))
      yield* store.local.move(action.from, action.to)
      if (action.item !== null) yield* refresh(action.to, action.item, "moved")
      yield* store.pendingOp.clear
      yield* log(`${action.from} → ${action.to}: ${action.reason}`, action.to)
      yield* publishEvent({ _tag: "local_moved", from: action.from, to: action.to })
      return done
    }
    case "ConflictCopy": {
      const pending = pendingOf("conflict_copy", action.remoteId, action.from, action.to, action.expected)
      yield* guarded(pending, ops.rename(action.from, action.to, action.expected))
      yield* store.local.remove(action.from)
      yield* store.pendingOp.clear
      yield* log(`kept your version as ${action.to}: ${action.reason}`, action.from)
      yield* publishEvent({ _tag: "local_moved", from: action.from, to: action.to })
      return done
    }
    case "Trash": {
      const pending = pendingOf("trash", action.remoteId, action.path, null, action.expected)
      const to = yield* guarded(pending, ops.trash(action.path, action.expected, today))
      yield* store.local.remove(action.path)
      yield* store.pendingOp.clear
      yield* log(`moved to ${to}: ${action.reason}`, action.path)
      yield* sidecarAlong(action.remoteId, "trash", today)
      yield* publishEvent({ _tag: "local_removed", path: action.path, how: "trash" })
      return done
    }
    case "Delete": {
      const pending = pendingOf("delete", action.remoteId, action.path, null, action.expected)
      yield* guarded(pending, ops.remove(action.path, action.expected))
      yield* store.local.remove(action.path)
      yield* store.pendingOp.clear
      yield* log(`deleted: ${action.reason}`, action.path)
      yield* sidecarAlong(action.remoteId, "delete", today)
      yield* publishEvent({ _tag: "local_removed", path: action.path, how: "delete" })
      return done
    }
    case "RemoveFolder": {
      yield* postersIn(action.path)
      const removed = yield* ops.removeFolderIfEmpty(action.path, action.expected)
      yield* store.local.remove(action.path)
      if (!removed) {
        yield* log("folder deleted on the remote still holds files dlsync did not write: kept", action.path)
        return { result: "skipped", detail: "not empty: kept" }
      }
      yield* publishEvent({ _tag: "local_removed", path: action.path, how: "delete" })
      return done
    }
    case "Adopt": {
      yield* store.local.put(synced(action.path, action.item, action.stat))
      yield* log(`adopted: ${action.reason}`, action.path)
      return done
    }
    case "Refresh":
      yield* refresh(action.path, action.item, "same_content")
      return done
    case "MarkLocallyDeleted":
      yield* store.local.markDeleted({ remoteId: action.remoteId, path: action.path })
      yield* log(action.reason, action.path)
      return done
    case "Forget":
      if (action.what === "marker") yield* store.local.forgetMarker(action.remoteId)
      else {
        yield* store.local.remove(action.path)
        yield* postersOfForgotten(action.remoteId, action.path)
      }
      return done
    case "HoldDeletes": {
      // Published when the hold is new or other paths are held, not at every pass it stays.
      const before = (yield* store.held.list).map((h) => h.path)
      yield* store.held.replace(action.paths)
      yield* store.events.append({
        level: "warn",
        kind: "big_delete_held",
        message: action.reason,
        path: null,
        remoteId: null
      })
      if (!samePaths(before, action.paths)) {
        const { count, mirrored, limit, paths, reason } = action
        yield* publishEvent({ _tag: "deletion_held", count, mirrored, limit, paths, reason })
      }
      return { result: "held", detail: action.reason }
    }
    case "Skip":
      return { result: "skipped", detail: action.reason }
    case "Download":
      return yield* markPending(action)
  }
})

/**
 * Runs a local operation between `pendingOp.begin` and the caller's store update; a refused
 * or failed operation touched nothing (LocalOps checks first, undoes a half-done link), so
 * its record is cleared at once.
 */
const guarded = <A>(pending: PendingOp, op: Effect.Effect<A, LocalOpError>): Effect.Effect<A, LocalOpError, Store> =>
  Store.use((store) =>
    store.pendingOp.begin(pending).pipe(
      Effect.andThen(op),
      Effect.tapError(() => store.pendingOp.clear)
    )
  )

const pendingOf = (
  op: PendingOp["op"],
  remoteId: FileId,
  from: string,
  to: string | null,
  expected: LocalStat
): PendingOp => ({ op, remoteId, from, to, ino: expected.ino })

const markPending = Effect.fnUntraced(function* (action: DownloadAction): Effect.fn.Return<Done, never, Store> {
  const store = yield* Store
  yield* store.local.put(pendingEntry(action, Option.getOrUndefined(yield* store.local.byRemoteId(action.item.id))))
  return { result: "queued", detail: null }
})

/**
 * The entry of a file while its download runs: it keeps describing what is on disk now (the
 * old copy when replacing, nothing for a new file), so a pass in between destroys nothing.
 */
const pendingEntry = (action: DownloadAction, previous: LocalEntry | undefined): LocalEntry => ({
  path: action.path,
  remoteId: action.item.id,
  type: "file",
  written: action.replace === null || previous === undefined ? null : previous.written,
  remote: previous !== undefined && action.replace !== null ? previous.remote : remoteVersionOf(action.item),
  state: "pending",
  attempts: previous?.attempts ?? 0,
  lastError: previous?.lastError ?? null
})

/** Records a landed download: the entry now describes the file the transfer engine wrote. */
export const recordLanded = (action: DownloadAction, written: WrittenStat): Effect.Effect<void, never, Store> =>
  Store.use((store) => store.local.put(syncedFile(action.path, action.item, written)))

/** Records a download that gave up for now; the reason is shown by `status`. */
export const recordFailed = Effect.fnUntraced(function* (
  action: DownloadAction,
  reason: string
): Effect.fn.Return<void, never, Store> {
  const store = yield* Store
  const current = Option.getOrUndefined(yield* store.local.byRemoteId(action.item.id))
  yield* store.local.put({
    ...(current ?? pendingEntry(action, undefined)),
    state: "failed",
    attempts: (current?.attempts ?? 0) + 1,
    lastError: reason
  })
  yield* store.events.append({
    level: "error",
    kind: "download_failed",
    message: reason,
    path: action.path,
    remoteId: action.item.id
  })
})

/** Records the remote fields of `item` on the entry at `path`; after a move, the size stays that of the content on disk. */
const refresh = Effect.fnUntraced(function* (path: string, item: RemoteItem, how: "moved" | "same_content") {
  const store = yield* Store
  const entry = yield* store.local.byPath(path)
  if (Option.isNone(entry)) return
  const remote = how === "moved" ? movedVersion(entry.value.remote, item) : remoteVersionOf(item)
  yield* store.local.put({ ...entry.value, remote })
})

const synced = (path: string, item: RemoteItem, stat: WrittenStat): LocalEntry => ({
  path,
  remoteId: item.id,
  type: item.type,
  written: { size: item.type === "folder" ? 0 : stat.size, mtimeNs: stat.mtimeNs, ino: stat.ino },
  remote: remoteVersionOf(item),
  state: "synced",
  attempts: 0,
  lastError: null
})

const syncedFile = (path: string, item: RemoteItem, written: WrittenStat): LocalEntry => ({
  ...synced(path, item, written),
  type: "file",
  written
})

const samePaths = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a.length !== b.length) return false
  const set = new Set(a)
  return b.every((p) => set.has(p))
}

const remoteIdOf = (action: Action): string | null => {
  switch (action._tag) {
    case "Mkdir":
    case "Download":
    case "Adopt":
    case "Refresh":
      return action.item.id
    case "HoldDeletes":
      return null
    default:
      return action.remoteId
  }
}
