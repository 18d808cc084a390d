/**
 * Downloads and selections. The spec names their fields but does not show the records,
 * so only the named fields are decoded (optional where the spec does not say they are
 * always present) and every other field is kept verbatim.
 */
import { Schema } from "effect"
import { DownloadId, FileId, SafeInt, SelectionId, Timestamp } from "./common.ts"

/** Named download statuses; the full list is not shown, so others pass as strings. */
export const DOWNLOAD_STATUSES = ["queued", "processing", "downloading", "finalizing", "completed", "blocked"] as const

const opt = Schema.optionalKey
const rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

export const Download = Schema.StructWithRest(
  Schema.Struct({
    id: DownloadId,
    /** Increases on explicit retry; `id` stays. */
    attempt: opt(SafeInt),
    status: opt(Schema.String),
    can_cancel: opt(Schema.Boolean),
    can_retry: opt(Schema.Boolean),
    /** The resulting file, once completed. */
    file_id: opt(Schema.NullOr(FileId)),
    /** e.g. `seeding` for a completed torrent. */
    activity: opt(Schema.NullOr(Schema.String)),
    /** The download's own failure description (not a request error envelope). */
    error: opt(Schema.Unknown),
    client_reference: opt(Schema.NullOr(Schema.String)),
    webhook_url: opt(Schema.NullOr(Schema.String)),
    directory: opt(Schema.NullOr(Schema.String))
  }),
  rest
)
export type Download = typeof Download.Type

export const SelectionItem = Schema.StructWithRest(
  Schema.Struct({
    item_id: Schema.String,
    parent_id: opt(Schema.NullOr(Schema.String)),
    selectable: Schema.Boolean
  }),
  rest
)
export type SelectionItem = typeof SelectionItem.Type

export const Selection = Schema.StructWithRest(
  Schema.Struct({
    id: SelectionId,
    expires_at: opt(Schema.NullOr(Timestamp)),
    items: Schema.Array(SelectionItem)
  }),
  rest
)
export type Selection = typeof Selection.Type

/**
 * What download creation, upload and a selection choice answer: either a selection stage
 * that needs a choice (200) or an accepted download (201). Other `kind` values fail
 * decoding: the caller could not act on them.
 */
export const DownloadOutcome = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("selection"), selection: Selection }),
  Schema.Struct({ kind: Schema.Literal("download"), download: Download })
])
export type DownloadOutcome = typeof DownloadOutcome.Type
