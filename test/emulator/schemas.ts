/**
 * The spec's response shapes, for decoding emulator answers in tests: a decode failure is
 * a conformance failure (a missing field, a wrong type). `strict` also refuses extra keys.
 */
import { Schema } from "effect"

const Timestamp = Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/))

export const MediaSummary = Schema.Struct({
  status: Schema.Literals(["pending", "ready", "unavailable"]),
  title: Schema.String,
  duration_ms: Schema.Number,
  width: Schema.Number,
  height: Schema.Number
})

export const MediaFull = Schema.Struct({
  ...MediaSummary.fields,
  chapters: Schema.Array(Schema.Struct({ start_ms: Schema.Number, end_ms: Schema.Number, title: Schema.String })),
  video_streams: Schema.Array(Schema.Struct({ index: Schema.Number, codec: Schema.String, hdr: Schema.Boolean })),
  audio_streams: Schema.Array(
    Schema.Struct({ index: Schema.Number, language: Schema.String, channels: Schema.Number })
  ),
  subtitle_streams: Schema.Array(
    Schema.Struct({ index: Schema.Number, language: Schema.String, forced: Schema.Boolean })
  )
})

export const Poster = Schema.Struct({
  url: Schema.String,
  expires_at: Schema.Null,
  width: Schema.Number,
  height: Schema.Number,
  mime_type: Schema.Literal("image/webp"),
  dominant_color: Schema.String
})

export const FileRecord = Schema.Struct({
  id: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  download_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  type: Schema.Literals(["file", "folder"]),
  kind: Schema.Literals(["folder", "video", "audio", "image", "document", "archive", "subtitle", "other"]),
  size_bytes: Schema.Number,
  mime_type: Schema.String,
  locked: Schema.Boolean,
  expires_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  media: Schema.optionalKey(Schema.Unknown),
  poster: Schema.optionalKey(Schema.NullOr(Poster)),
  app_state: Schema.optionalKey(Schema.Unknown)
})
export type FileRecord = typeof FileRecord.Type

export const PageMeta = Schema.Struct({ next_cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean })

export const FilePage = Schema.Struct({ data: Schema.Array(FileRecord), meta: PageMeta })

export const Tombstone = Schema.Struct({
  id: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  deleted: Schema.Literal(true)
})

export const LiveChange = Schema.Struct({ ...FileRecord.fields, deleted: Schema.Literal(false) })

export const Change = Schema.Union([LiveChange, Tombstone])
export type Change = typeof Change.Type

export const ChangePage = Schema.Struct({
  data: Schema.Array(Change),
  meta: Schema.Struct({ next_cursor: Schema.String, has_more: Schema.Boolean })
})

export const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    details: Schema.optionalKey(Schema.Struct({ fields: Schema.Record(Schema.String, Schema.Array(Schema.String)) }))
  })
})

export const Single = <S extends Schema.Top>(data: S) => Schema.Struct({ data })

export const decode = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, value: unknown): S["Type"] =>
  Schema.decodeUnknownSync(schema)(value)

/** Decoding that also refuses keys the schema does not list. */
export const decodeStrict = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, value: unknown): S["Type"] =>
  Schema.decodeUnknownSync(schema)(value, { onExcessProperty: "error" })
