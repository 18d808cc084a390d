/**
 * The app-state outbox's table (`app_state_outbox`, created by migration 2 in migrations.ts,
 * which states its invariants): one queued entry per file, in the order last enqueued.
 * better-sqlite3 is synchronous: each call is one short statement, durable on return (the
 * store opens the database with synchronous=FULL). The entry is JSON text here: its shape
 * belongs to appstate/, which encodes and decodes it.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Schema } from "effect"
import { FileId } from "../domain/FileId.ts"
import { decodeCount } from "./columns.ts"

/** One queued entry as stored: `seq` orders the queue and tells a newer enqueue of the same file. */
export const QueuedRow = Schema.Struct({ fileId: FileId, seq: Schema.Number, entry: Schema.String })
export type QueuedRow = typeof QueuedRow.Type

export interface AppStateOutboxTable {
  /** Queues `entry` for `fileId`, replacing the one queued for it, as the newest. */
  readonly upsert: (fileId: FileId, entry: string, enqueuedAtMs: number) => void
  /** The oldest `limit` rows; rows that are not even a file id and a sequence number are skipped. */
  readonly oldest: (limit: number) => ReadonlyArray<QueuedRow>
  /** Removes the row of `fileId` if it is still the one numbered `seq`. */
  readonly remove: (fileId: FileId, seq: number) => void
  readonly count: () => number
}

export const makeAppStateOutboxTable = (db: BetterSqlite3.Database): AppStateOutboxTable => {
  const upsert = db.prepare(
    `INSERT INTO app_state_outbox (file_id, seq, entry, enqueued_at)
     VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM app_state_outbox), ?, ?)
     ON CONFLICT (file_id) DO UPDATE SET
       seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM app_state_outbox),
       entry = excluded.entry,
       enqueued_at = excluded.enqueued_at`
  )
  const select = db.prepare("SELECT file_id, seq, entry FROM app_state_outbox ORDER BY seq LIMIT ?")
  const remove = db.prepare("DELETE FROM app_state_outbox WHERE file_id = ? AND seq = ?")
  const count = db.prepare("SELECT COUNT(*) AS n FROM app_state_outbox")
  return {
    upsert: (fileId, entry, enqueuedAtMs) => void upsert.run(fileId, entry, enqueuedAtMs),
    oldest: (limit) =>
      select.all(limit).flatMap((raw) => {
        const row = decodeRow(raw)
        return row._tag === "Some" ? [row.value] : []
      }),
    remove: (fileId, seq) => void remove.run(fileId, seq),
    count: () => decodeCount(count.get())
  }
}

// ---------------------------------------------------------------------------------------

const decodeRow = Schema.decodeUnknownOption(QueuedRow.pipe(Schema.encodeKeys({ fileId: "file_id" })))
