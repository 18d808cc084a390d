/**
 * This device's entry in a file's app state:
 *
 *   { "dlsync": { "<device id>": { state, bytes, size, path, updated_at, error } }, …other apps' keys }
 *
 * Entries stay small (a path and an error are capped) so a value with many devices stays
 * far below the service's 64 KiB per file.
 */
import { Schema } from "effect"

/** The top-level key dlsync owns in every file's app state. */
export const APP_STATE_KEY = "dlsync"

export const PROGRESS_STATES = ["queued", "downloading", "complete", "failed", "locked", "skipped"] as const
export type ProgressState = (typeof PROGRESS_STATES)[number]

/** Longest `path` and `error` stored (characters); longer ones keep their end / start. */
export const MAX_PATH_LENGTH = 512
export const MAX_ERROR_LENGTH = 300

export const ProgressEntry = Schema.Struct({
  state: Schema.Literals(PROGRESS_STATES),
  /** Bytes of the file this device has. */
  bytes: Schema.Number,
  /** The remote size in bytes. */
  size: Schema.Number,
  /** The mirror path, relative to the mirror root. */
  path: Schema.String,
  /** RFC 3339 time of this entry. */
  updated_at: Schema.String,
  error: Schema.NullOr(Schema.String)
})
export type ProgressEntry = typeof ProgressEntry.Type

/** Builds an entry, capping `path` (keeping its end) and `error` (keeping its start). */
export const progressEntry = (fields: {
  readonly state: ProgressState
  readonly bytes: number
  readonly size: number
  readonly path: string
  readonly updatedAtMs: number
  readonly error?: string | undefined
}): ProgressEntry => ({
  state: fields.state,
  bytes: Math.max(0, Math.floor(fields.bytes)),
  size: Math.max(0, Math.floor(fields.size)),
  path: fields.path.length > MAX_PATH_LENGTH ? `…${fields.path.slice(-(MAX_PATH_LENGTH - 1))}` : fields.path,
  updated_at: new Date(fields.updatedAtMs).toISOString(),
  error:
    fields.error === undefined
      ? null
      : fields.error.length > MAX_ERROR_LENGTH
        ? `${fields.error.slice(0, MAX_ERROR_LENGTH - 1)}…`
        : fields.error
})

/** States after which nothing more happens to the file on this device until it changes remotely. */
export const isFinal = (state: ProgressState): boolean => state !== "queued" && state !== "downloading"
