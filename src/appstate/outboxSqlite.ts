/**
 * The app-state outbox in the state database (table `app_state_outbox`, created by
 * migration 2 in src/store/migrations.ts, which states its invariants).
 * better-sqlite3 is synchronous: each call is one short statement, durable on return
 * (the store opens the database with synchronous=FULL). SQLite failures are defects.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Clock, Effect, Layer, Schema } from "effect"
import { FileId } from "../api/schemas/common.ts"
import { Database } from "../store/Database.ts"
import { V2_APP_STATE_OUTBOX } from "../store/migrations.ts"
import { AppStateOutbox } from "./AppStateOutbox.ts"
import { ProgressEntry } from "./ProgressEntry.ts"

/** The table's definition: migration 2 of the state database, which creates it. */
export const APP_STATE_OUTBOX_DDL = V2_APP_STATE_OUTBOX

/** The outbox over an open better-sqlite3 handle whose schema has the table. */
export const makeSqliteOutbox = (db: BetterSqlite3.Database): AppStateOutbox["Service"] => {
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
  return AppStateOutbox.of({
    enqueue: (fileId, entry) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          upsert.run(fileId, JSON.stringify(entry), now)
        })
      ),
    take: (limit) =>
      Effect.sync(() =>
        select.all(limit).flatMap((row) => {
          const decoded = Schema.decodeUnknownOption(Row)(row)
          if (decoded._tag === "Some") {
            return [{ fileId: decoded.value.file_id, entry: decoded.value.entry, seq: decoded.value.seq }]
          }
          // Written by another version and unusable here: drop it rather than block the queue.
          const raw = Schema.decodeUnknownOption(RawRow)(row)
          if (raw._tag === "Some") remove.run(raw.value.file_id, raw.value.seq)
          return []
        })
      ),
    ack: (item) =>
      Effect.sync(() => {
        remove.run(item.fileId, item.seq)
      }),
    size: Effect.sync(() => Schema.decodeUnknownSync(CountRow)(count.get()).n)
  })
}

export const SqliteOutbox = {
  layer: (db: BetterSqlite3.Database): Layer.Layer<AppStateOutbox> =>
    Layer.sync(AppStateOutbox, () => makeSqliteOutbox(db)),
  /** Over the state database's handle (the Store's), migrated to include the table. */
  layerDatabase: Layer.effect(
    AppStateOutbox,
    Effect.gen(function* () {
      const { db } = yield* Database
      return makeSqliteOutbox(db)
    })
  )
}

// ---------------------------------------------------------------------------------------

const Row = Schema.Struct({
  file_id: FileId,
  seq: Schema.Number,
  entry: Schema.fromJsonString(ProgressEntry)
})

const RawRow = Schema.Struct({ file_id: Schema.String, seq: Schema.Number })

const CountRow = Schema.Struct({ n: Schema.Number })
