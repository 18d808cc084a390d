/**
 * The `[cleanup]` section: remote cleanup, opt-in (src/cleanup/). A file verified on disk for
 * `after` in one of `folders` or `categories` is deleted on the service; the mirror keeps it.
 * Without the section (or with neither folders nor categories) nothing is deleted remotely.
 * The keys' schemas are `sections.cleanup` in fields.ts; config.example.toml documents them.
 */
import { Duration, Schema } from "effect"
import { HumanDuration } from "./units.ts"

export interface CleanupSettings {
  /** Milliseconds a file must stay verified on disk before it is deleted on the service. */
  readonly after: number
  /**
   * Mirror folders (relative to the root, `/`-separated) whose files are cleaned up:
   * `folders` and `categories` together (a category is a folder the intake files into).
   */
  readonly folders: ReadonlyArray<string>
}

/** A week: long enough to notice a bad copy before the service's is gone. */
export const CLEANUP_AFTER_DEFAULT_MS = 7 * 24 * 3_600_000

const NonEmpty = Schema.String.pipe(Schema.check(Schema.isMinLength(1)))

/** The section's keys (fields.ts adds them to the reference table). */
export const cleanupFields = {
  after: { schema: Schema.optionalKey(HumanDuration), env: "string" },
  folders: { schema: Schema.optionalKey(Schema.Array(NonEmpty)), env: "list" },
  categories: { schema: Schema.optionalKey(Schema.Array(NonEmpty)), env: "list" }
} as const

/** Null (no cleanup) unless some folder or category is named. */
export const cleanupSettings = (
  raw:
    | {
        readonly after?: Duration.Duration
        readonly folders?: ReadonlyArray<string>
        readonly categories?: ReadonlyArray<string>
      }
    | undefined
): CleanupSettings | null => {
  const folders = [...(raw?.folders ?? []), ...(raw?.categories ?? [])]
    .map((f) => f.replace(/^\/+|\/+$/g, ""))
    .filter((f) => f !== "")
  if (folders.length === 0) return null
  return {
    after: raw?.after === undefined ? CLEANUP_AFTER_DEFAULT_MS : Duration.toMillis(raw.after),
    folders: [...new Set(folders)]
  }
}
