/**
 * Remote cleanup's progress (table `remote_cleanup`, see migrations.ts): since when each
 * file of the cleaned-up folders is verified on disk, and its deletion on the service.
 *
 * Invariant (the one the planner relies on): `markDeleting` commits before the POST
 * /files/delete that names the file, and the mark is never cleared while the row lives; a
 * row goes only once the remote item and the local entry are both gone.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"
import { FileId } from "../domain/FileId.ts"
import { rowTo } from "./columns.ts"
import { writeTransaction } from "./writeTransaction.ts"

export interface CleanupRow {
  readonly remoteId: FileId
  readonly path: string
  /** Epoch ms since the file is verified without a break. */
  readonly verifiedSince: number
  /** Epoch ms the deletion was decided (marked before the first POST); null: not decided. */
  readonly deletingAt: number | null
  /** Epoch ms the service answered deleted or not_found; null: not yet. */
  readonly doneAt: number | null
  readonly attempts: number
  /** Epoch ms before which the POST is not tried again. */
  readonly nextTryAt: number
  readonly lastError: string | null
}

export interface RemoteCleanupTable {
  readonly cleanup: {
    readonly all: Effect.Effect<ReadonlyArray<CleanupRow>>
    /** Remote ids whose deletion on the service dlsync decided (see the invariant). */
    readonly marked: Effect.Effect<ReadonlySet<string>>
    /** Records a file seen verified at `now`: a new row starts its age; an existing one keeps it. */
    readonly verified: (remoteId: FileId, path: string, now: number) => Effect.Effect<void>
    /** Forgets a row not marked for deletion (the file is no longer verified: its age restarts). */
    readonly reset: (remoteId: FileId) => Effect.Effect<void>
    /** Marks the files for deletion in one transaction, before any POST names them. */
    readonly markDeleting: (remoteIds: ReadonlyArray<FileId>, now: number) => Effect.Effect<void>
    readonly done: (remoteId: FileId, now: number) => Effect.Effect<void>
    readonly retryLater: (remoteId: FileId, nextTryAt: number, error: string) => Effect.Effect<void>
    /** Drops a row whatever its state: only once the remote item and the local entry are gone. */
    readonly drop: (remoteId: FileId) => Effect.Effect<void>
    /** This device's queued app-state progress for the file (`state` of the outbox entry), if any. */
    readonly queuedProgress: (remoteId: FileId) => Effect.Effect<string | null>
  }
}

export const makeRemoteCleanupTable = (db: BetterSqlite3.Database): RemoteCleanupTable => {
  const q = {
    all: db.prepare("SELECT * FROM remote_cleanup ORDER BY path"),
    marked: db.prepare("SELECT remote_id FROM remote_cleanup WHERE deleting_at IS NOT NULL"),
    verified: db.prepare(
      `INSERT INTO remote_cleanup (remote_id, path, verified_since) VALUES (?, ?, ?)
       ON CONFLICT (remote_id) DO UPDATE SET path = excluded.path`
    ),
    reset: db.prepare("DELETE FROM remote_cleanup WHERE remote_id = ? AND deleting_at IS NULL"),
    mark: db.prepare("UPDATE remote_cleanup SET deleting_at = ? WHERE remote_id = ? AND deleting_at IS NULL"),
    done: db.prepare("UPDATE remote_cleanup SET done_at = ?, last_error = NULL WHERE remote_id = ?"),
    retry: db.prepare(
      "UPDATE remote_cleanup SET attempts = attempts + 1, next_try_at = ?, last_error = ? WHERE remote_id = ?"
    ),
    drop: db.prepare("DELETE FROM remote_cleanup WHERE remote_id = ?"),
    progress: db.prepare("SELECT json_extract(entry, '$.state') AS state FROM app_state_outbox WHERE file_id = ?")
  }
  const markDeleting = writeTransaction(db, (ids: ReadonlyArray<FileId>, now: number) => {
    for (const id of ids) q.mark.run(now, id)
  })
  return {
    cleanup: {
      all: Effect.sync(() => q.all.all().map((raw) => decodeRow(raw))),
      marked: Effect.sync(() => new Set(q.marked.all().map((raw) => decodeMarked(raw).remote_id))),
      verified: (id, path, now) => Effect.sync(() => void q.verified.run(id, path, now)),
      reset: (id) => Effect.sync(() => void q.reset.run(id)),
      markDeleting: (ids, now) => Effect.sync(() => markDeleting(ids, now)),
      done: (id, now) => Effect.sync(() => void q.done.run(now, id)),
      retryLater: (id, at, error) => Effect.sync(() => void q.retry.run(at, error, id)),
      drop: (id) => Effect.sync(() => void q.drop.run(id)),
      queuedProgress: (id) =>
        Effect.sync(() => {
          const raw = q.progress.get(id)
          return raw === undefined ? null : decodeProgress(raw).state
        })
    }
  }
}

// ---------------------------------------------------------------------------------------

const CleanupRowSchema = rowTo<CleanupRow>()(
  Schema.Struct({
    remote_id: FileId,
    path: Schema.String,
    verified_since: Schema.Int,
    deleting_at: Schema.NullOr(Schema.Int),
    done_at: Schema.NullOr(Schema.Int),
    attempts: Schema.Int,
    next_try_at: Schema.Int,
    last_error: Schema.NullOr(Schema.String)
  }),
  {
    decode: (row) => ({
      remoteId: row.remote_id,
      path: row.path,
      verifiedSince: row.verified_since,
      deletingAt: row.deleting_at,
      doneAt: row.done_at,
      attempts: row.attempts,
      nextTryAt: row.next_try_at,
      lastError: row.last_error
    }),
    encode: (row) => ({
      remote_id: row.remoteId,
      path: row.path,
      verified_since: row.verifiedSince,
      deleting_at: row.deletingAt,
      done_at: row.doneAt,
      attempts: row.attempts,
      next_try_at: row.nextTryAt,
      last_error: row.lastError
    })
  }
)

const decodeRow = Schema.decodeUnknownSync(CleanupRowSchema)
const decodeMarked = Schema.decodeUnknownSync(Schema.Struct({ remote_id: Schema.String }))
const decodeProgress = Schema.decodeUnknownSync(Schema.Struct({ state: Schema.String }))
