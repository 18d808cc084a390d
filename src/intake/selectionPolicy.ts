/**
 * Which item answers a selection stage, by the category's policy. Pure.
 *
 * A stage takes one item. Items name themselves with `name` and may give `size_bytes`
 * (fields the spec does not show, read when present):
 * - `all` (default): the first selectable top-level item (the whole release, or the first
 *   variant the service lists); when every selectable item sits below another (a file
 *   list), the largest.
 * - `largest`: the selectable item with the most bytes (the first one when none gives a size).
 * - `video`: the largest selectable item with a video extension.
 * - globs: the first selectable item whose name matches the first pattern that matches any.
 * No match: a reason, and the intake is parked.
 */
import { Glob } from "effect"
import type { SelectionItem } from "../api/schemas/downloads.ts"
import type { SelectionPolicy } from "../config/categoriesSettings.ts"

export const VIDEO_EXTENSIONS: ReadonlySet<string> = new Set([
  "mkv",
  "mp4",
  "avi",
  "m4v",
  "mov",
  "wmv",
  "ts",
  "m2ts",
  "webm",
  "mpg",
  "mpeg"
])

export const chooseItem = (
  items: ReadonlyArray<SelectionItem>,
  policy: SelectionPolicy
): { readonly itemId: string } | { readonly problem: string } => {
  const selectable = items.filter((i) => i.selectable)
  if (selectable.length === 0) return { problem: "the selection offers no selectable item" }
  if (policy === "all") {
    const top = selectable.find((i) => i.parent_id === undefined || i.parent_id === null)
    return { itemId: (top ?? largest(selectable)).item_id }
  }
  if (policy === "largest") return { itemId: largest(selectable).item_id }
  if (policy === "video") {
    const videos = selectable.filter((i) => VIDEO_EXTENSIONS.has(extension(nameOf(i))))
    return videos.length === 0
      ? { problem: 'no video item in the selection (selection = "video")' }
      : { itemId: largest(videos).item_id }
  }
  for (const pattern of policy) {
    const glob = Glob.make(pattern.includes("/") ? pattern : `**/${pattern}`, { dot: true })
    const hit = selectable.find((i) => Glob.match(glob, nameOf(i)))
    if (hit !== undefined) return { itemId: hit.item_id }
  }
  return { problem: `no item matches selection = ${JSON.stringify(policy)}` }
}

const nameOf = (item: SelectionItem): string => (typeof item.name === "string" ? item.name : item.item_id)

const sizeOf = (item: SelectionItem): number => (typeof item.size_bytes === "number" ? item.size_bytes : -1)

const largest = (items: ReadonlyArray<SelectionItem>): SelectionItem =>
  items.reduce((best, item) => (sizeOf(item) > sizeOf(best) ? item : best))

const extension = (name: string): string => {
  const dot = name.lastIndexOf(".")
  return dot < 0 ? "" : name.slice(dot + 1).toLowerCase()
}
