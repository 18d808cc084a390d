/**
 * Entity tags, versions and conditional requests (RFC 9110 §13) for file state and app storage.
 *
 * - ETags are strong, quoted and random: never derived from `version`, so a value deleted
 *   and recreated at the same version still gets a new one.
 * - `If-Match` uses the strong comparison: a weak `W/"…"` validator never matches; `*`
 *   matches any current value; with no current value nothing matches.
 * - `If-None-Match` uses the weak comparison; `*` matches any current value. A match fails
 *   a write with 412 and answers a read with 304.
 */
import { randomBytes } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"

export type Condition = "proceed" | "preconditionFailed" | "notModified"

/** A fresh strong ETag, e.g. `"Zx3…"`. */
export const newEtag = (): string => `"${randomBytes(18).toString("base64url")}"`

/** The version fields every stored value carries (file state and app storage alike). */
export interface Versioned {
  readonly version: number
  readonly etag: string
  readonly created_at: string
  readonly updated_at: string
}

/** The version fields of a value written at `at` over `current` (undefined: none yet): one version up, a new ETag. */
export const nextVersion = (current: Versioned | undefined, at: string): Versioned => ({
  version: (current?.version ?? 0) + 1,
  etag: newEtag(),
  created_at: current?.created_at ?? at,
  updated_at: at
})

/** Evaluates If-Match then If-None-Match against the current ETag (undefined: nothing stored). */
export const evaluateConditions = (
  headers: IncomingHttpHeaders,
  current: string | undefined,
  method: "read" | "write"
): Condition => {
  const ifMatch = headerText(headers["if-match"])
  if (ifMatch !== undefined) {
    const tags = entityTags(ifMatch)
    const ok = current !== undefined && (tags === "*" || tags.some((t) => !t.startsWith("W/") && t === current))
    if (!ok) return "preconditionFailed"
  }
  const ifNoneMatch = headerText(headers["if-none-match"])
  if (ifNoneMatch !== undefined && current !== undefined) {
    const tags = entityTags(ifNoneMatch)
    const matched = tags === "*" || tags.some((t) => stripWeak(t) === current)
    if (matched) return method === "read" ? "notModified" : "preconditionFailed"
  }
  return "proceed"
}

const headerText = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  value === undefined ? undefined : typeof value === "string" ? value : value.join(",")

/** `*`, or the comma-separated entity tags (malformed members are kept and simply never match). */
const entityTags = (text: string): "*" | ReadonlyArray<string> => {
  if (text.trim() === "*") return "*"
  return text
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")
}

const stripWeak = (tag: string): string => (tag.startsWith("W/") ? tag.slice(2) : tag)
