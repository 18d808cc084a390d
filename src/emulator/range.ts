/**
 * HTTP Range and If-Range for the CDN (RFC 9110 §14). One range per request; a header
 * with several ranges, another unit or bad syntax is ignored (the whole file, 200), which
 * the RFC allows.
 */
export type RangeDecision =
  | { readonly kind: "full" }
  | { readonly kind: "partial"; readonly start: number; readonly end: number }
  | { readonly kind: "unsatisfiable" }

export const parseRange = (header: string | undefined, size: number): RangeDecision => {
  if (header === undefined) return { kind: "full" }
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!match) return { kind: "full" }
  const [, first = "", last = ""] = match
  if (first === "" && last === "") return { kind: "full" }
  if (first === "") {
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return { kind: "unsatisfiable" }
    return { kind: "partial", start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === "" ? size - 1 : Number(last)
  if (last !== "" && end < start) return { kind: "full" }
  if (start >= size) return { kind: "unsatisfiable" }
  return { kind: "partial", start, end: Math.min(end, size - 1) }
}

/**
 * Whether a Range may be honoured under `If-Range`: an entity tag must equal the current
 * one by the strong comparison (weak tags never match); a date must equal Last-Modified.
 */
export const ifRangeHolds = (header: string | undefined, etag: string, lastModified: string): boolean => {
  if (header === undefined) return true
  const value = header.trim()
  if (value.startsWith('"') || value.startsWith("W/")) return value === etag && !etag.startsWith("W/")
  const date = Date.parse(value)
  return !Number.isNaN(date) && date === Date.parse(lastModified)
}

/** If-None-Match against the current tag (weak comparison; `*` matches). */
export const noneMatch = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false
  const bare = (tag: string) => tag.trim().replace(/^W\//, "")
  return header.split(",").some((tag) => tag.trim() === "*" || bare(tag) === bare(etag))
}
