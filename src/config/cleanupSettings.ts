/**
 * The `[cleanup]` section: remote cleanup, opt-in (src/cleanup/). A file verified on disk for
 * `after` in one of `folders` or `categories` is deleted on the service; the mirror keeps it.
 * Without the section (or with neither folders nor categories) nothing is deleted remotely.
 * config.example.toml documents the keys.
 */
import { Schema } from "effect"
import { defaulted, NonEmpty } from "./keySchemas.ts"
import { HumanMillis } from "./units.ts"

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
const WEEK_MS = 7 * 24 * 3_600_000

/** The section's keys and their defaults (fields.ts adds them to the reference table). */
export const cleanupFields = {
  after: { schema: defaulted(HumanMillis, WEEK_MS), env: "string" },
  folders: { schema: defaulted(Schema.Array(NonEmpty), []), env: "list" },
  categories: { schema: defaulted(Schema.Array(NonEmpty), []), env: "list" }
} as const

/** Null (no cleanup) unless some folder or category is named. */
export const cleanupSettings = (raw: {
  readonly after: number
  readonly folders: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
}): CleanupSettings | null => {
  const folders = [...raw.folders, ...raw.categories].map((f) => f.replace(/^\/+|\/+$/g, "")).filter((f) => f !== "")
  if (folders.length === 0) return null
  return { after: raw.after, folders: [...new Set(folders)] }
}
