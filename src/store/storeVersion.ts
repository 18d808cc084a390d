/**
 * A version of the whole store: it changes whenever any table changes, through this
 * connection (SQLite's `total_changes()`) or another process's (`PRAGMA data_version`), so a
 * reader can keep what it derived from the store until it does (the status document's summary
 * of the mirror, engine/mirrorSummary.ts). Two reads, no table scanned.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"

export interface StoreVersionRead {
  /** Equal texts: nothing in the store changed in between. */
  readonly version: Effect.Effect<string>
}

export const makeStoreVersion = (db: BetterSqlite3.Database): StoreVersionRead => {
  const dataVersion = db.prepare("PRAGMA data_version").pluck()
  const totalChanges = db.prepare("SELECT total_changes()").pluck()
  return {
    version: Effect.sync(() => `${decodeInt(dataVersion.get())}:${decodeInt(totalChanges.get())}`)
  }
}

const decodeInt = Schema.decodeUnknownSync(Schema.Int)
