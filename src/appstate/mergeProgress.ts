/**
 * Merging this device's entry into a file's app state (pure).
 *
 * Invariants (property-tested):
 * - Every top-level key other than `dlsync` is kept exactly as read.
 * - Every other device's entry under `dlsync` is kept exactly as read.
 * - After a Write, `dlsync[deviceId]` is the given entry.
 * - Idempotent: merging the same entry into the result is Unchanged.
 * - Entries of different devices commute: the order two devices merge in does not matter.
 * - An entry older than the one stored for this device (by `updated_at`) is Unchanged: a
 *   replayed outbox row never rolls progress back.
 * - An entry that differs from the stored one only in `updated_at` is Unchanged: the same
 *   state reported again (a locked file at every run) costs no write, and `updated_at`
 *   tells since when the file is in that state.
 * - A `dlsync` value that is not an object (no dlsync writes one) is replaced.
 */
import { Equal, Predicate } from "effect"
import type { Json } from "../api/schemas/common.ts"
import { APP_STATE_KEY, type ProgressEntry } from "./ProgressEntry.ts"

/** The service's limit on one file's state, in encoded UTF-8 bytes. */
export const STATE_VALUE_LIMIT_BYTES = 65_536

export type MergeResult =
  | { readonly _tag: "Write"; readonly value: Readonly<Record<string, Json>> }
  | { readonly _tag: "Unchanged" }
  /** The merged value would exceed the service's limit (other apps' keys fill it). */
  | { readonly _tag: "TooLarge"; readonly bytes: number }

export const mergeProgress = (
  current: Readonly<Record<string, Json>> | null,
  deviceId: string,
  entry: ProgressEntry
): MergeResult => {
  const base = current ?? {}
  const section = base[APP_STATE_KEY]
  const devices: Readonly<Record<string, Json>> = isJsonObject(section) ? section : {}
  const mine = devices[deviceId]
  if (mine !== undefined && Equal.equals(toJson(entry), mine)) return { _tag: "Unchanged" }
  if (isJsonObject(mine) && Equal.equals(withoutTime(toJson(entry)), withoutTime(mine))) return { _tag: "Unchanged" }
  if (isJsonObject(mine) && Predicate.isString(mine.updated_at)) {
    const stored = Date.parse(mine.updated_at)
    if (!Number.isNaN(stored) && stored > Date.parse(entry.updated_at)) return { _tag: "Unchanged" }
  }
  const value = { ...base, [APP_STATE_KEY]: { ...devices, [deviceId]: toJson(entry) } }
  const bytes = Buffer.byteLength(JSON.stringify(value), "utf8")
  return bytes > STATE_VALUE_LIMIT_BYTES ? { _tag: "TooLarge", bytes } : { _tag: "Write", value }
}

// ---------------------------------------------------------------------------------------

const isJsonObject = (v: Json | undefined): v is { readonly [key: string]: Json } =>
  Predicate.isObject(v) && !Array.isArray(v)

const withoutTime = (value: { readonly [key: string]: Json }): { readonly [key: string]: Json } => {
  const { updated_at: _, ...rest } = value
  return rest
}

const toJson = (entry: ProgressEntry): { readonly [key: string]: Json } => ({
  state: entry.state,
  bytes: entry.bytes,
  size: entry.size,
  path: entry.path,
  updated_at: entry.updated_at,
  error: entry.error
})
