/**
 * Remote cleanup (opt-in, `[cleanup]`): a file of the configured folders that has stayed
 * verified on disk for `after` is deleted on the service; the mirror keeps its copy.
 *
 *   after each reconcile ─► verify (synced entry, fresh lstat matches what dlsync wrote,
 *   │                        this device's queued app state not short of complete)
 *   │                        → remote_cleanup.verified_since (reset when not verified)
 *   ├─► old enough ─► big-delete gate ─(over)─► held like a local big delete (status;
 *   │                                            `run --once --allow-big-delete` releases it)
 *   └─► mark deleting (committed) ─► POST /files/delete, batches of 100
 *                                     deleted · not_found → done
 *                                     resource_locked · other · failed request → retry later
 *
 * The invariant that keeps the local copy: a file's row is marked (`deleting_at`) in a
 * committed transaction BEFORE any POST names it, and the mark stays until the remote item
 * and the local entry are both gone. So whenever the service's deletion reaches the store
 * (through the feed or a listing, however long after, across crashes), the planner finds the
 * mark and forgets the entry instead of trashing the file (sync/planRemovals.ts, `cleanedUp`).
 * A SIGKILL between the mark and the POST's result leaves a marked row: the next run posts it
 * again (the service answers `deleted` or `not_found`, both done) or finds the item already
 * gone. The worst a crash can do is keep a file locally that the service still has, never
 * the reverse.
 *
 * Time is Effect's Clock. The daemon spaces retries with backoff; `run --once` (cron's own
 * schedule) retries what is marked at every run.
 */
import { Clock, Context, Effect, Layer, Random, Ref } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import { RunKind } from "../appstate/mirrorAppState.ts"
import type { CleanupSettings } from "../config/cleanupSettings.ts"
import type { FileId } from "../domain/FileId.ts"
import { isIntact } from "../domain/LocalEntry.ts"
import { type MirrorEvents, publishEvent } from "../events/MirrorEvents.ts"
import { type CleanupRow, Store } from "../store/Store.ts"
import { LocalOps } from "../sync/localOps.ts"
import { deleteLimitText, exceedsDeleteLimit } from "../sync/planner.ts"
import { batches, inCleanupFolders, isOldEnough, retryAt } from "./cleanupRules.ts"

export interface CleanupReport {
  /** Files the service answered deleted (or not_found) in this step. */
  readonly deleted: number
  /** Files marked for deletion still waiting for the service (locked, failed request). */
  readonly waiting: number
  readonly held: { readonly count: number; readonly mirrored: number; readonly limit: string } | null
}

export const NO_CLEANUP: CleanupReport = { deleted: 0, waiting: 0, held: null }

export interface RemoteCleanupShape {
  readonly run: (options: { readonly allowBigDelete: boolean }) => Effect.Effect<CleanupReport>
  /**
   * When the next file comes of age or the next refused deletion may be retried (epoch ms);
   * null: nothing waits. The daemon reconciles then, even when nothing else changed.
   */
  readonly dueAt: Effect.Effect<number | null>
}

/** Remote cleanup, required by the pass and the daemon: `off` when `[cleanup]` names nothing. */
export class RemoteCleanup extends Context.Service<RemoteCleanup, RemoteCleanupShape>()(
  "dlsync/cleanup/RemoteCleanup"
) {
  /** No `[cleanup]`: nothing is deleted on the service and nothing is ever due. */
  static readonly off: Layer.Layer<RemoteCleanup> = Layer.succeed(
    RemoteCleanup,
    RemoteCleanup.of({ run: () => Effect.succeed(NO_CLEANUP), dueAt: Effect.succeed(null) })
  )
}

/** The live cleanup when `[cleanup]` names folders; RemoteCleanup.off otherwise. */
export const remoteCleanupLayer = (
  settings: CleanupSettings | null,
  maxDelete: number | null
): Layer.Layer<RemoteCleanup, never, Store | LocalOps | ApiClient | MirrorEvents | RunKind> =>
  settings === null
    ? RemoteCleanup.off
    : Layer.effect(
        RemoteCleanup,
        Effect.gen(function* () {
          const context = yield* Effect.context<Store | LocalOps | ApiClient | MirrorEvents | RunKind>()
          const store = yield* Store
          // The paths of the hold last announced, so that a hold staying in place is announced once.
          const announced = yield* Ref.make("")
          return {
            run: (options) => cleanupStep(settings, maxDelete, { ...options, announced }).pipe(Effect.provide(context)),
            dueAt: Effect.map(store.cleanup.all, (rows) => nextDue(rows, settings.after))
          }
        })
      )

/** One cleanup step over the store as the last reconcile left it. */
export const cleanupStep = Effect.fn("RemoteCleanup.step")(function* (
  settings: CleanupSettings,
  maxDelete: number | null,
  options: { readonly allowBigDelete: boolean; readonly announced?: Ref.Ref<string> }
): Effect.fn.Return<CleanupReport, never, Store | LocalOps | ApiClient | MirrorEvents | RunKind> {
  const store = yield* Store
  const ops = yield* LocalOps
  const now = yield* Clock.currentTimeMillis
  const entries = yield* store.local.all
  const entryById = new Map(entries.map((e) => [e.remoteId, e]))
  const remoteIds = new Set((yield* store.remote.all).map((item) => item.id))
  const rows = new Map((yield* store.cleanup.all).map((row) => [row.remoteId, row]))

  // Rows whose file is gone on both sides are finished; unmarked rows of files no longer here restart.
  for (const row of rows.values()) {
    if (entryById.has(row.remoteId)) continue
    if (row.deletingAt === null) yield* store.cleanup.reset(row.remoteId)
    else if (!remoteIds.has(row.remoteId)) yield* store.cleanup.drop(row.remoteId)
  }

  const due: Array<{ readonly id: FileId; readonly path: string }> = []
  for (const entry of entries) {
    const row = rows.get(entry.remoteId)
    if (row?.deletingAt != null) continue
    const synced = entry.type === "file" && entry.state === "synced" && entry.written !== null
    if (!synced || !inCleanupFolders(entry.path, settings.folders) || !remoteIds.has(entry.remoteId)) {
      if (row !== undefined) yield* store.cleanup.reset(entry.remoteId)
      continue
    }
    const stat = yield* Effect.orElseSucceed(ops.lstat(entry.path), () => undefined)
    const progress = yield* store.cleanup.queuedProgress(entry.remoteId)
    const verified =
      stat !== undefined &&
      entry.written !== null &&
      isIntact(stat, entry.written) &&
      (progress === null || progress === "complete")
    if (!verified) {
      if (row !== undefined) yield* store.cleanup.reset(entry.remoteId)
      continue
    }
    if (row === undefined) yield* store.cleanup.verified(entry.remoteId, entry.path, now)
    else if (row.path !== entry.path) yield* store.cleanup.verified(entry.remoteId, entry.path, now)
    if (isOldEnough(row?.verifiedSince ?? now, now, settings.after)) due.push({ id: entry.remoteId, path: entry.path })
  }

  let held: CleanupReport["held"] = null
  if (due.length > 0) {
    const mirrored = entries.filter((e) => e.type === "file" && e.written !== null).length
    if (!options.allowBigDelete && exceedsDeleteLimit(due.length, mirrored, maxDelete)) {
      const limit = `${deleteLimitText(maxDelete)} (remote cleanup)`
      held = { count: due.length, mirrored, limit }
      yield* holdCleanup(due.map((d) => d.path).sort(), held, options.announced ?? (yield* Ref.make("")))
    } else
      yield* store.cleanup.markDeleting(
        due.map((d) => d.id),
        now
      )
  }

  const { once } = yield* RunKind
  const marked = (yield* store.cleanup.all).filter((row) => row.deletingAt !== null && row.doneAt === null)
  let deleted = 0
  const toPost: Array<FileId> = []
  for (const row of marked) {
    // Gone from the service already (its deletion, or the POST a crash cut short, reached the store).
    if (!remoteIds.has(row.remoteId)) {
      yield* store.cleanup.done(row.remoteId, now)
      continue
    }
    if (once || row.nextTryAt <= now) toPost.push(row.remoteId)
  }
  const pathOf = new Map(marked.map((row) => [row.remoteId, row.path]))
  for (const batch of batches(toPost)) deleted += yield* postBatch(batch, pathOf, now)
  const waiting = marked.length - deleted - marked.filter((r) => !remoteIds.has(r.remoteId)).length
  return { deleted, waiting: Math.max(0, waiting), held }
})

/** The earliest time a row comes of age (unmarked) or may be posted again (marked, not done). */
export const nextDue = (rows: ReadonlyArray<CleanupRow>, after: number): number | null => {
  let due: number | null = null
  for (const row of rows) {
    const at = row.deletingAt === null ? row.verifiedSince + after : row.doneAt === null ? row.nextTryAt : null
    if (at !== null && (due === null || at < due)) due = at
  }
  return due
}

// ---------------------------------------------------------------------------------------

/** One POST /files/delete; returns how many of the batch are done. */
const postBatch = Effect.fnUntraced(function* (
  ids: ReadonlyArray<FileId>,
  pathOf: ReadonlyMap<string, string>,
  now: number
): Effect.fn.Return<number, never, Store | ApiClient> {
  const store = yield* Store
  const api = yield* ApiClient
  const rows = new Map((yield* store.cleanup.all).map((row) => [row.remoteId, row]))
  const answer = yield* Effect.result(api.files.deleteMany(ids))
  if (answer._tag === "Failure") {
    const error = `POST /files/delete failed: ${answer.failure.message}`
    // Logged once while the same failure repeats, not at every retry.
    if (ids.some((id) => rows.get(id)?.lastError !== error)) {
      yield* Effect.logWarning(`remote cleanup: ${error}; retrying later`)
    }
    for (const id of ids) yield* retry(id, rows.get(id)?.attempts ?? 0, now, error, false)
    return 0
  }
  const results = new Map(answer.success.map((r) => [r.id, r.result]))
  let done = 0
  for (const id of ids) {
    const path = pathOf.get(id) ?? id
    const result = results.get(id)
    if (result === "deleted" || result === "not_found") {
      yield* store.cleanup.done(id, now)
      yield* store.events.append({
        level: "info",
        kind: "remote_cleanup",
        message:
          result === "deleted"
            ? "deleted on the service (remote cleanup); the local copy stays"
            : "already gone from the service (remote cleanup); the local copy stays",
        path,
        remoteId: id
      })
      done++
      continue
    }
    const error =
      result === "resource_locked"
        ? "locked on the service (resource_locked)"
        : `the service answered ${result === undefined ? "nothing" : JSON.stringify(result)} for it`
    const row = rows.get(id)
    // Logged once per kind of refusal, not at every retry.
    yield* retry(id, row?.attempts ?? 0, now, error, row?.lastError !== error)
    if (row?.lastError !== error) yield* Effect.logWarning(`remote cleanup: ${path}: ${error}; retrying later`)
  }
  return done
})

const retry = Effect.fnUntraced(function* (id: FileId, attempts: number, now: number, error: string, log: boolean) {
  const store = yield* Store
  const at = retryAt(now, attempts + 1, yield* Random.next)
  yield* store.cleanup.retryLater(id, at, error)
  if (log) {
    yield* store.events.append({
      level: "warn",
      kind: "remote_cleanup_retry",
      message: error,
      path: null,
      remoteId: id
    })
  }
})

/** Adds the held cleanup to the held deletes (the reconcile before set the table) and says so. */
const holdCleanup = Effect.fnUntraced(function* (
  paths: ReadonlyArray<string>,
  held: NonNullable<CleanupReport["held"]>,
  announced: Ref.Ref<string>
) {
  const store = yield* Store
  const before = (yield* store.held.list).map((h) => h.path)
  yield* store.held.replace([...new Set([...before, ...paths])])
  const reason = `remote cleanup held: ${held.count} of ${held.mirrored} files would be deleted on the service (limit: ${held.limit})`
  yield* store.events.append({ level: "warn", kind: "big_delete_held", message: reason, path: null, remoteId: null })
  yield* Effect.logWarning(`${reason}; nothing deleted. Run \`dlsync run --once --allow-big-delete\` to go ahead.`)
  // Published when the hold is new or holds other paths, not at every pass it stays (as the executor does).
  const key = paths.join("\n")
  if ((yield* Ref.getAndSet(announced, key)) !== key)
    yield* publishEvent({ _tag: "deletion_held", ...held, paths, reason })
})
