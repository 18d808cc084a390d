/**
 * The app-state outbox in the state database, over the store's table (store/appStateOutboxTable.ts,
 * which holds the SQL): this side turns entries into JSON and back. SQLite failures are defects.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Clock, Effect, Layer, Schema } from "effect"
import { makeAppStateOutboxTable } from "../store/appStateOutboxTable.ts"
import { Database } from "../store/Database.ts"
import { V2_APP_STATE_OUTBOX } from "../store/migrations.ts"
import { AppStateOutbox } from "./AppStateOutbox.ts"
import { ProgressEntry } from "./ProgressEntry.ts"

/** The table's definition: migration 2 of the state database, which creates it. */
export const APP_STATE_OUTBOX_DDL = V2_APP_STATE_OUTBOX

/** The outbox over an open better-sqlite3 handle whose schema has the table. */
export const makeSqliteOutbox = (db: BetterSqlite3.Database): AppStateOutbox["Service"] => {
  const table = makeAppStateOutboxTable(db)
  return AppStateOutbox.of({
    enqueue: (fileId, entry) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => table.upsert(fileId, JSON.stringify(entry), now))
      ),
    take: (limit) =>
      Effect.sync(() =>
        table.oldest(limit).flatMap((row) => {
          const entry = decodeEntry(row.entry)
          if (entry._tag === "Some") return [{ fileId: row.fileId, entry: entry.value, seq: row.seq }]
          // Written by another version and unusable here: drop it rather than block the queue.
          table.remove(row.fileId, row.seq)
          return []
        })
      ),
    ack: (item) => Effect.sync(() => table.remove(item.fileId, item.seq)),
    size: Effect.sync(table.count)
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

const decodeEntry = Schema.decodeUnknownOption(Schema.fromJsonString(ProgressEntry))
