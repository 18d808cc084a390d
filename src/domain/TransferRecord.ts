/**
 * The durable progress of an unfinished transfer, one record per file: what the transfer
 * journal keeps so that a download resumes after a crash (see transfer/TransferJournal.ts).
 */
import { Schema } from "effect"

/** A byte range [start, end) assigned to one parallel segment; `durable` = bytes from start known fsynced. */
export const TransferSegment = Schema.Struct({ start: Schema.Int, end: Schema.Int, durable: Schema.Int })
export type TransferSegment = typeof TransferSegment.Type

export const TransferRecord = Schema.Struct({
  fileId: Schema.String,
  size: Schema.Int,
  etag: Schema.NullOr(Schema.String),
  lastModified: Schema.NullOr(Schema.String),
  /** Relative to the mirror root. */
  partialPath: Schema.String,
  segments: Schema.Array(TransferSegment),
  attempts: Schema.Int,
  lastError: Schema.NullOr(Schema.String)
})
export type TransferRecord = typeof TransferRecord.Type
