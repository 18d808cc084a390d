/**
 * What dlsync wrote on disk: local entries (table `local_entries`), the user's deletions it
 * keeps (table `locally_deleted`) and the local operation under way (table `pending_op`),
 * see migrations.ts.
 *
 * Invariants:
 * - A remote id has at most one local entry; putting an entry drops any other of its id.
 * - Moving a folder entry moves all entries below it, in one statement.
 * - At most one pending operation: the executor records it before touching the disk and
 *   clears it after, so a crash between the two is found and finished on the next start.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Option, Schema, SchemaTransformation } from "effect"
import { FileId } from "../domain/FileId.ts"
import { type LocalEntry, LocalEntryState, LocallyDeleted } from "../domain/LocalEntry.ts"
import { ItemType } from "../domain/RemoteItem.ts"
import { decodeCount, nowIso, rowTo } from "./columns.ts"
import { writeTransaction } from "./writeTransaction.ts"

/** A local operation the executor started; `ino` identifies what it moves or removes. */
export const PendingOp = Schema.Struct({
  op: Schema.Literals(["rename", "conflict_copy", "trash", "delete"]),
  remoteId: FileId,
  from: Schema.String,
  /** The destination of a rename or conflict copy; null for trash and delete. */
  to: Schema.NullOr(Schema.String),
  ino: Schema.BigInt
})
export type PendingOp = typeof PendingOp.Type

export interface LocalTables {
  readonly local: {
    readonly all: Effect.Effect<ReadonlyArray<LocalEntry>>
    readonly count: Effect.Effect<number>
    readonly byPath: (path: string) => Effect.Effect<Option.Option<LocalEntry>>
    readonly byRemoteId: (remoteId: FileId) => Effect.Effect<Option.Option<LocalEntry>>
    /** Records an entry, replacing the one at its path and any other entry of its remote id. */
    readonly put: (entry: LocalEntry) => Effect.Effect<void>
    readonly remove: (path: string) => Effect.Effect<void>
    /**
     * Re-keys the entry at `from` and every entry below it to `to` (a rename on disk). Entries
     * already at or below `to` are stale (the executor saw nothing there) and are dropped.
     */
    readonly move: (from: string, to: string) => Effect.Effect<void>
    /** Drops the entry of `remoteId` and remembers the item as deleted by the user. */
    readonly markDeleted: (marker: LocallyDeleted) => Effect.Effect<void>
    readonly locallyDeleted: Effect.Effect<ReadonlyArray<LocallyDeleted>>
    /** Forgets the deletion markers at or below `path` (dlsync restore); returns how many. */
    readonly restore: (path: string) => Effect.Effect<number>
    /** Forgets every deletion marker (dlsync restore . : the whole mirror); returns how many. */
    readonly restoreAll: Effect.Effect<number>
    readonly forgetMarker: (remoteId: FileId) => Effect.Effect<void>
  }
  /** The local operation under way (see migrations.ts, pending_op). */
  readonly pendingOp: {
    readonly get: Effect.Effect<Option.Option<PendingOp>>
    readonly begin: (op: PendingOp) => Effect.Effect<void>
    readonly clear: Effect.Effect<void>
  }
}

export const makeLocalTables = (db: BetterSqlite3.Database): LocalTables => {
  const q = {
    allLocal: db.prepare("SELECT * FROM local_entries ORDER BY path"),
    countLocal: db.prepare("SELECT count(*) AS n FROM local_entries"),
    localByPath: db.prepare("SELECT * FROM local_entries WHERE path = ?"),
    localById: db.prepare("SELECT * FROM local_entries WHERE remote_id = ?"),
    deleteLocalById: db.prepare("DELETE FROM local_entries WHERE remote_id = ?"),
    putLocal: db.prepare(
      `INSERT OR REPLACE INTO local_entries (path, remote_id, type, size_bytes, mtime_ns, inode, remote_size,
         remote_updated_at, remote_name, remote_parent_id, state, attempts, last_error, updated_at)
       VALUES (@path, @remote_id, @type, @size_bytes, @mtime_ns, @inode, @remote_size, @remote_updated_at,
         @remote_name, @remote_parent_id, @state, @attempts, @last_error, @updated_at)`
    ),
    deleteLocal: db.prepare("DELETE FROM local_entries WHERE path = ?"),
    deleteLocalTree: db.prepare(
      "DELETE FROM local_entries WHERE path = @path OR substr(path, 1, length(@path) + 1) = @path || '/'"
    ),
    moveLocalTree: db.prepare(
      `UPDATE local_entries SET path = @to || substr(path, length(@from) + 1), updated_at = @now
       WHERE path = @from OR substr(path, 1, length(@from) + 1) = @from || '/'`
    ),
    putMarker: db.prepare("INSERT OR REPLACE INTO locally_deleted (remote_id, path, deleted_at) VALUES (?, ?, ?)"),
    allMarkers: db.prepare("SELECT remote_id, path FROM locally_deleted ORDER BY path"),
    deleteAllMarkers: db.prepare("DELETE FROM locally_deleted"),
    deleteMarkerTree: db.prepare(
      "DELETE FROM locally_deleted WHERE path = @path OR substr(path, 1, length(@path) + 1) = @path || '/'"
    ),
    deleteMarker: db.prepare("DELETE FROM locally_deleted WHERE remote_id = ?"),
    getPending: db.prepare("SELECT * FROM pending_op WHERE id = 1"),
    putPending: db.prepare(
      `INSERT OR REPLACE INTO pending_op (id, op, remote_id, from_path, to_path, inode, started_at)
       VALUES (1, @op, @remote_id, @from_path, @to_path, @inode, @started_at)`
    ),
    clearPending: db.prepare("DELETE FROM pending_op")
  }

  const putEntry = writeTransaction(db, (entry: LocalEntry, now: string) => {
    const existing = q.localById.get(entry.remoteId)
    if (existing !== undefined && decodeEntry(existing).path !== entry.path) q.deleteLocalById.run(entry.remoteId)
    q.putLocal.run({ ...encodeEntry(entry), updated_at: now })
  })

  const moveEntries = writeTransaction(db, (from: string, to: string, now: string) => {
    // Nothing recorded at `from` (a move already applied): nothing to do, nothing to drop.
    if (from === to || q.localByPath.get(from) === undefined) return
    q.deleteLocalTree.run({ path: to })
    q.moveLocalTree.run({ from, to, now })
  })

  const markDeleted = writeTransaction(db, (marker: LocallyDeleted, now: string) => {
    q.deleteLocalById.run(marker.remoteId)
    q.putMarker.run(marker.remoteId, marker.path, now)
  })

  return {
    local: {
      all: Effect.sync(() => q.allLocal.all().map((raw) => decodeEntry(raw))),
      count: Effect.sync(() => decodeCount(q.countLocal.get())),
      byPath: (path) => Effect.sync(() => Option.map(Option.fromNullishOr(q.localByPath.get(path)), decodeEntry)),
      byRemoteId: (id) => Effect.sync(() => Option.map(Option.fromNullishOr(q.localById.get(id)), decodeEntry)),
      put: (entry) => Effect.flatMap(nowIso, (now) => Effect.sync(() => putEntry(entry, now))),
      remove: (path) => Effect.sync(() => void q.deleteLocal.run(path)),
      move: (from, to) => Effect.flatMap(nowIso, (now) => Effect.sync(() => moveEntries(from, to, now))),
      markDeleted: (marker) => Effect.flatMap(nowIso, (now) => Effect.sync(() => markDeleted(marker, now))),
      locallyDeleted: Effect.sync(() => q.allMarkers.all().map((raw) => decodeMarker(raw))),
      restore: (path) => Effect.sync(() => q.deleteMarkerTree.run({ path }).changes),
      restoreAll: Effect.sync(() => q.deleteAllMarkers.run().changes),
      forgetMarker: (remoteId) => Effect.sync(() => void q.deleteMarker.run(remoteId))
    },
    pendingOp: {
      get: Effect.sync(() => Option.map(Option.fromNullishOr(q.getPending.get()), decodePending)),
      begin: (op) =>
        Effect.flatMap(nowIso, (now) =>
          Effect.sync(() => void q.putPending.run({ ...encodePending(op), started_at: now }))
        ),
      clear: Effect.sync(() => void q.clearPending.run())
    }
  }
}

// ---------------------------------------------------------------------------------------

/** An integer SQLite keeps as decimal text (it has no 64-bit unsigned type for inodes). */
const Decimal = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^-?\d+$/)),
  Schema.decodeTo(
    Schema.BigInt,
    SchemaTransformation.transform({ decode: (text) => BigInt(text), encode: (n) => n.toString() })
  )
)

/**
 * A `local_entries` row: flat columns, `written` null unless all three of its columns are set.
 */
const LocalEntryRow = rowTo<LocalEntry>()(
  Schema.Struct({
    path: Schema.String,
    remote_id: FileId,
    type: ItemType,
    size_bytes: Schema.NullOr(Schema.Int),
    mtime_ns: Schema.NullOr(Decimal),
    inode: Schema.NullOr(Decimal),
    remote_size: Schema.Int,
    remote_updated_at: Schema.String,
    remote_name: Schema.String,
    remote_parent_id: Schema.NullOr(FileId),
    state: LocalEntryState,
    attempts: Schema.Int,
    last_error: Schema.NullOr(Schema.String)
  }),
  {
    decode: (row) => ({
      path: row.path,
      remoteId: row.remote_id,
      type: row.type,
      written:
        row.size_bytes === null || row.mtime_ns === null || row.inode === null
          ? null
          : { size: row.size_bytes, mtimeNs: row.mtime_ns, ino: row.inode },
      remote: {
        size: row.remote_size,
        updatedAt: row.remote_updated_at,
        name: row.remote_name,
        parentId: row.remote_parent_id
      },
      state: row.state,
      attempts: row.attempts,
      lastError: row.last_error
    }),
    encode: (entry) => ({
      path: entry.path,
      remote_id: entry.remoteId,
      type: entry.type,
      size_bytes: entry.written?.size ?? null,
      mtime_ns: entry.written?.mtimeNs ?? null,
      inode: entry.written?.ino ?? null,
      remote_size: entry.remote.size,
      remote_updated_at: entry.remote.updatedAt,
      remote_name: entry.remote.name,
      remote_parent_id: entry.remote.parentId,
      state: entry.state,
      attempts: entry.attempts,
      last_error: entry.lastError
    })
  }
)

const LocallyDeletedRow = LocallyDeleted.pipe(Schema.encodeKeys({ remoteId: "remote_id" }))

const PendingOpRow = PendingOp.pipe(
  Schema.fieldsAssign({ ino: Decimal }),
  Schema.encodeKeys({ remoteId: "remote_id", from: "from_path", to: "to_path", ino: "inode" })
)

const decodeEntry = Schema.decodeUnknownSync(LocalEntryRow)
const encodeEntry = Schema.encodeSync(LocalEntryRow)
const decodeMarker = Schema.decodeUnknownSync(LocallyDeletedRow)
const decodePending = Schema.decodeUnknownSync(PendingOpRow)
const encodePending = Schema.encodeSync(PendingOpRow)
