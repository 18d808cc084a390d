/**
 * The transfer journal's tables (`transfers` and `transfer_segments`, see migrations.ts):
 * `save` writes a record and all its segments in one transaction, so a crash leaves either
 * the previous record or the new one. transfer/TransferJournal.ts serves it as its port.
 *
 * A record that breaks the journal's invariants (segments overlapping, outside [0, size),
 * durable beyond the segment) is a programming error in the caller: it dies with a message
 * naming the problem instead of being stored.
 */
import type BetterSqlite3 from "better-sqlite3"
import { DateTime, Effect, Option, Schema, Struct } from "effect"
import { TransferRecord, TransferSegment } from "../domain/TransferRecord.ts"
import { writeTransaction } from "./writeTransaction.ts"

export interface TransferJournalTable {
  readonly load: (fileId: string) => Effect.Effect<Option.Option<TransferRecord>>
  readonly save: (record: TransferRecord) => Effect.Effect<void>
  readonly remove: (fileId: string) => Effect.Effect<void>
}

export const makeTransferJournalTable = (db: BetterSqlite3.Database): TransferJournalTable => {
  const q = {
    get: db.prepare("SELECT * FROM transfers WHERE file_id = ?"),
    segments: db.prepare('SELECT start, "end", durable FROM transfer_segments WHERE file_id = ? ORDER BY start'),
    put: db.prepare(
      `INSERT OR REPLACE INTO transfers (file_id, size_bytes, etag, last_modified, partial_path, attempts, last_error, updated_at)
       VALUES (@file_id, @size_bytes, @etag, @last_modified, @partial_path, @attempts, @last_error, @updated_at)`
    ),
    clearSegments: db.prepare("DELETE FROM transfer_segments WHERE file_id = ?"),
    putSegment: db.prepare('INSERT INTO transfer_segments (file_id, start, "end", durable) VALUES (?, ?, ?, ?)'),
    remove: db.prepare("DELETE FROM transfers WHERE file_id = ?")
  }
  const save = writeTransaction(db, (record: TransferRecord, now: string) => {
    q.put.run({ ...encodeTransfer(record), updated_at: now })
    q.clearSegments.run(record.fileId)
    for (const s of record.segments) q.putSegment.run(record.fileId, s.start, s.end, s.durable)
  })
  return {
    load: (fileId) =>
      Effect.sync(() => {
        const raw = q.get.get(fileId)
        if (raw === undefined) return Option.none()
        const segments = q.segments.all(fileId).map((s) => decodeSegment(s))
        return Option.some({ ...decodeTransfer(raw), segments })
      }),
    save: (record) => {
      const problem = recordProblem(record)
      if (problem !== null) return Effect.die(new Error(`transfer journal: refusing ${record.fileId}: ${problem}`))
      return Effect.flatMap(DateTime.now, (now) => Effect.sync(() => save(record, DateTime.formatIso(now))))
    },
    remove: (fileId) => Effect.sync(() => void q.remove.run(fileId))
  }
}

/** What is wrong with a record, or null when it keeps the journal's invariants. */
export const recordProblem = (record: TransferRecord): string | null => {
  if (!Number.isSafeInteger(record.size) || record.size < 0) return `size ${record.size} is not a byte count`
  if (record.partialPath === "" || record.partialPath.startsWith("/") || record.partialPath.split("/").includes("..")) {
    return `partial path ${JSON.stringify(record.partialPath)} is not inside the mirror root`
  }
  const sorted = [...record.segments].sort((a, b) => a.start - b.start)
  let end = 0
  for (const s of sorted) {
    if (![s.start, s.end, s.durable].every(Number.isSafeInteger)) return `segment ${s.start}-${s.end} is not integral`
    if (s.start < end) return `segment ${s.start}-${s.end} overlaps the previous one`
    if (s.end <= s.start || s.end > record.size) return `segment ${s.start}-${s.end} is outside [0, ${record.size})`
    if (s.durable < 0 || s.durable > s.end - s.start) return `segment ${s.start}-${s.end} has durable ${s.durable}`
    end = s.end
  }
  return null
}

// ---------------------------------------------------------------------------------------

/** A `transfers` row: the record without its segments, which have their own table. */
const TransferRow = TransferRecord.mapFields(Struct.omit(["segments"])).pipe(
  Schema.encodeKeys({
    fileId: "file_id",
    size: "size_bytes",
    lastModified: "last_modified",
    partialPath: "partial_path",
    lastError: "last_error"
  })
)

const decodeTransfer = Schema.decodeUnknownSync(TransferRow)
const encodeTransfer = Schema.encodeSync(TransferRow)
const decodeSegment = Schema.decodeUnknownSync(TransferSegment)
