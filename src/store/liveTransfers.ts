/**
 * The live transfers (table `live_transfers`, see migrations.ts): what the running dlsync is
 * transferring, published about once a second so that `dlsync status`, another process,
 * can show it. One row, replaced by one statement, so a reader sees one whole snapshot.
 *
 * The store keeps whatever was published last, also by a process that was killed since;
 * whether it is live is the reader's call (src/engine/transfersStatus.ts).
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Option, Schema } from "effect"

/** Ten publish intervals: a snapshot older than this is not live (the publisher stopped: SIGSTOP, a blocked loop…). */
export const LIVE_TRANSFERS_MAX_AGE_MS = 10_000

export interface LiveTransferFile {
  readonly fileId: string
  /** The mirror path the file lands at. */
  readonly path: string
  readonly size: number
  /** Bytes of the file present so far (resumed bytes included). */
  readonly bytes: number
  readonly bytesPerSecond: number
  /** Connections fetching it now (absent in a row published by an earlier dlsync). */
  readonly connections?: number
  /** While it waits for the service's rate limit: until when (ISO 8601); absent otherwise. */
  readonly rateLimitedUntil?: string
  /** Its failed attempts so far, once it had one (absent: none, or a row of an earlier dlsync). */
  readonly attempts?: number
}

export interface LiveTransfers {
  /** The publishing process, the holder of the instance lock. */
  readonly pid: number
  /** When it was published (ISO 8601). */
  readonly updatedAt: string
  /** Files completed and parked since the publisher started. */
  readonly completed: number
  readonly parked: number
  /** The rate of all transfers together. */
  readonly bytesPerSecond: number
  readonly files: ReadonlyArray<LiveTransferFile>
  /** Files held back until the disk has `transfers.min_free_space` to spare. */
  readonly waitingForSpace: number
}

export interface LiveTransfersStore {
  /** Replaces what was published before. */
  readonly publish: (live: LiveTransfers) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
  /** The last snapshot published, by this process or another, live or not. */
  readonly read: Effect.Effect<Option.Option<LiveTransfers>>
}

/** SQLite failures are defects, as everywhere in the store. */
export const makeLiveTransfers = (db: BetterSqlite3.Database): LiveTransfersStore => {
  const q = {
    put: db.prepare(
      `INSERT OR REPLACE INTO live_transfers
         (id, pid, updated_at, completed, parked, bytes_per_second, files, waiting_for_space)
       VALUES (1, @pid, @updated_at, @completed, @parked, @bytes_per_second, @files, @waiting_for_space)`
    ),
    clear: db.prepare("DELETE FROM live_transfers"),
    get: db.prepare("SELECT * FROM live_transfers WHERE id = 1")
  }
  return {
    publish: (live) =>
      Effect.sync(() => {
        q.put.run({
          pid: live.pid,
          updated_at: live.updatedAt,
          completed: live.completed,
          parked: live.parked,
          bytes_per_second: Math.round(live.bytesPerSecond),
          files: JSON.stringify(live.files.map((f) => ({ ...f, bytesPerSecond: Math.round(f.bytesPerSecond) }))),
          waiting_for_space: live.waitingForSpace
        })
      }),
    clear: Effect.sync(() => void q.clear.run()),
    read: Effect.sync(() => Option.map(Option.fromNullishOr(q.get.get()), (raw) => decodeRow(raw)))
  }
}

// ---------------------------------------------------------------------------------------

const Count = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

const FileEntry = Schema.Struct({
  fileId: Schema.String,
  path: Schema.String,
  size: Count,
  bytes: Count,
  bytesPerSecond: Count,
  connections: Schema.optionalKey(Count),
  attempts: Schema.optionalKey(Count),
  rateLimitedUntil: Schema.optionalKey(Schema.String)
})

/** The single `live_transfers` row; `files` is a JSON array. */
const decodeRow = Schema.decodeUnknownSync(
  Schema.Struct({
    pid: Schema.Int,
    updatedAt: Schema.String,
    completed: Count,
    parked: Count,
    bytesPerSecond: Count,
    files: Schema.fromJsonString(Schema.Array(FileEntry)),
    waitingForSpace: Count
  }).pipe(
    Schema.encodeKeys({
      updatedAt: "updated_at",
      bytesPerSecond: "bytes_per_second",
      waitingForSpace: "waiting_for_space"
    })
  )
)
