/** What every table group of the store shares: the time it stamps rows with, and counts. */
import { DateTime, Effect, Schema } from "effect"

/** Rows are stamped with ISO-8601 UTC instants, taken from Effect's clock. */
export const nowIso = Effect.map(DateTime.now, DateTime.formatIso)

/** The single row of a `SELECT count(*) AS n`. */
export const decodeCount = (raw: unknown): number => decodeCountRow(raw).n

const decodeCountRow = Schema.decodeUnknownSync(Schema.Struct({ n: Schema.Int }))
