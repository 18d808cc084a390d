/**
 * The file or folder record and its optional parts (media, poster, app_state), as
 * returned by GET /files, GET /files/{file}, POST /files/folder and GET /files/changes.
 *
 * Optional includes are `optionalKey`: absent when not requested, null when requested but
 * unavailable. Listings carry a media summary and file detail the full stream metadata;
 * one schema serves both, with every media field optional.
 */
import { Schema } from "effect"
import { DownloadId, FileId, Json, NonNegativeInt, SafeInt, Timestamp } from "./common.ts"

/** Known values of `type`; others pass as strings. */
export const ITEM_TYPES = ["file", "folder"] as const

/** Known values of `kind`; others pass as strings. */
export const FILE_KINDS = ["folder", "video", "audio", "image", "document", "archive", "subtitle", "other"] as const

/** Known values of `media.status` (readiness of media metadata only). */
export const MEDIA_STATUSES = ["pending", "ready", "unavailable"] as const

const opt = Schema.optionalKey

export const Chapter = Schema.Struct({
  start_ms: opt(NonNegativeInt),
  end_ms: opt(NonNegativeInt),
  title: opt(Schema.String)
})

export const VideoStream = Schema.Struct({
  index: opt(SafeInt),
  codec: opt(Schema.String),
  codec_tag: opt(Schema.String),
  profile: opt(Schema.String),
  level: opt(SafeInt),
  width: opt(SafeInt),
  height: opt(SafeInt),
  display_aspect_ratio: opt(Schema.String),
  sample_aspect_ratio: opt(Schema.String),
  pixel_format: opt(Schema.String),
  frame_rate: opt(Schema.String),
  bitrate: opt(SafeInt),
  color_range: opt(Schema.String),
  color_space: opt(Schema.String),
  color_transfer: opt(Schema.String),
  color_primaries: opt(Schema.String),
  hdr: opt(Schema.Boolean),
  rotation: opt(SafeInt),
  default: opt(Schema.Boolean)
})

export const AudioStream = Schema.Struct({
  index: opt(SafeInt),
  codec: opt(Schema.String),
  profile: opt(Schema.String),
  channels: opt(SafeInt),
  channel_layout: opt(Schema.String),
  sample_rate: opt(SafeInt),
  bitrate: opt(SafeInt),
  language: opt(Schema.String),
  title: opt(Schema.String),
  default: opt(Schema.Boolean),
  original: opt(Schema.Boolean),
  commentary: opt(Schema.Boolean),
  hearing_impaired: opt(Schema.Boolean),
  visual_impaired: opt(Schema.Boolean)
})

export const SubtitleStream = Schema.Struct({
  index: opt(SafeInt),
  codec: opt(Schema.String),
  language: opt(Schema.String),
  title: opt(Schema.String),
  default: opt(Schema.Boolean),
  forced: opt(Schema.Boolean),
  original: opt(Schema.Boolean),
  commentary: opt(Schema.Boolean),
  hearing_impaired: opt(Schema.Boolean)
})

/** Media metadata: a summary in listings, full stream detail from GET /files/{file}. */
export const Media = Schema.Struct({
  status: Schema.String,
  title: opt(Schema.String),
  description: opt(Schema.String),
  creation_time: opt(Schema.String),
  format_names: opt(Schema.Array(Schema.String)),
  duration_ms: opt(NonNegativeInt),
  bitrate: opt(SafeInt),
  width: opt(SafeInt),
  height: opt(SafeInt),
  chapters: opt(Schema.Array(Chapter)),
  video_streams: opt(Schema.Array(VideoStream)),
  audio_streams: opt(Schema.Array(AudioStream)),
  subtitle_streams: opt(Schema.Array(SubtitleStream))
})
export type Media = typeof Media.Type

/** A content-addressed poster image; it never expires (`expires_at` is always null). */
export const Poster = Schema.Struct({
  url: Schema.String,
  expires_at: opt(Schema.Null),
  width: opt(SafeInt),
  height: opt(SafeInt),
  mime_type: opt(Schema.String),
  dominant_color: opt(Schema.String),
  size_bytes: opt(NonNegativeInt)
})
export type Poster = typeof Poster.Type

/** The calling application's private state on a file or folder. */
export const AppState = Schema.Struct({
  value: Schema.Record(Schema.String, Json),
  version: SafeInt.check(Schema.isGreaterThanOrEqualTo(1)),
  /** Quoted validator, copied whole into If-Match. */
  etag: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type AppState = typeof AppState.Type

/** Fields every live record carries. */
const recordFields = {
  id: FileId,
  parent_id: Schema.NullOr(FileId),
  download_id: Schema.NullOr(DownloadId),
  name: Schema.String,
  type: Schema.String,
  kind: Schema.String,
  size_bytes: NonNegativeInt,
  mime_type: Schema.String,
  locked: Schema.Boolean,
  expires_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  media: opt(Schema.NullOr(Media)),
  poster: opt(Schema.NullOr(Poster)),
  app_state: opt(Schema.NullOr(AppState))
}

/** A file or folder as listed, created or detailed. */
export const FileRecord = Schema.Struct(recordFields)
export type FileRecord = typeof FileRecord.Type

/** A live item of the change feed: the full record with `deleted: false`. */
export const ChangedItem = Schema.Struct({ ...recordFields, deleted: Schema.Literal(false) })
export type ChangedItem = typeof ChangedItem.Type

/**
 * A tombstone of the change feed: deleted, queued for deletion, or no longer matching the
 * feed's `kind`. It carries only `id`, `parent_id` and `deleted: true`.
 */
export const Tombstone = Schema.Struct({
  id: FileId,
  parent_id: Schema.NullOr(FileId),
  deleted: Schema.Literal(true)
})
export type Tombstone = typeof Tombstone.Type

/** One entry of GET /files/changes, told apart by `deleted`. */
export const ChangeItem = Schema.Union([ChangedItem, Tombstone])
export type ChangeItem = typeof ChangeItem.Type

/** Known per-identifier results of POST /files/delete. */
export const BULK_DELETE_RESULTS = ["deleted", "not_found", "resource_locked"] as const

/** One identifier's outcome in POST /files/delete (HTTP 200 even on partial failure). */
export const BulkDeleteResult = Schema.StructWithRest(Schema.Struct({ id: FileId, result: Schema.String }), [
  Schema.Record(Schema.String, Schema.Unknown)
])
export type BulkDeleteResult = typeof BulkDeleteResult.Type

/** A signed link (download link or ZIP). `expires_at` null means no time-based expiry. */
export const SignedLink = Schema.StructWithRest(
  Schema.Struct({ url: Schema.String, expires_at: opt(Schema.NullOr(Timestamp)) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type SignedLink = typeof SignedLink.Type
