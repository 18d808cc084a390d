/**
 * What this mirror holds, summed from `local_entries` (one statement), for the device
 * record in app storage: files mirrored completely, files whose last attempt failed, and
 * the bytes of the mirrored files.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"

export interface LocalTotals {
  readonly complete: number
  readonly failed: number
  readonly bytes: number
}

/** The totals now; SQLite failures are defects. */
export const localTotals = (db: BetterSqlite3.Database): Effect.Effect<LocalTotals> => {
  const query = db.prepare(
    `SELECT
       coalesce(sum(state = 'synced' AND size_bytes IS NOT NULL), 0) AS complete,
       coalesce(sum(state = 'failed'), 0) AS failed,
       coalesce(sum(CASE WHEN state = 'synced' THEN size_bytes ELSE 0 END), 0) AS bytes
     FROM local_entries WHERE type = 'file'`
  )
  return Effect.sync(() => decodeTotals(query.get()))
}

// ---------------------------------------------------------------------------------------

const decodeTotals = Schema.decodeUnknownSync(
  Schema.Struct({ complete: Schema.Int, failed: Schema.Int, bytes: Schema.Int })
)
