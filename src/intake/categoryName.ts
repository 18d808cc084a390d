/**
 * A category is a folder path below the mirror root (and the `directory` of the service's
 * download), one rule for every surface: `/`-separated segments (qBittorrent's
 * subcategories), none empty, `.` or `..`, none with leading or trailing spaces, no
 * backslash, no control character, not absolute, at most MAX_CATEGORY_LENGTH characters,
 * and never dlsync's own `.dlsync` folder. Empty = no category (the root itself). Pure.
 */
import { DLSYNC_DIR } from "../fs/dlsyncDir.ts"

/** The most characters a category name may have. */
export const MAX_CATEGORY_LENGTH = 200

/** Why `name` cannot be a category, or undefined when it can. */
export const categoryProblem = (name: string): string | undefined => {
  if (name === "") return undefined
  const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name)
  if (name.length > MAX_CATEGORY_LENGTH) return `category ${shown} is longer than ${MAX_CATEGORY_LENGTH} characters`
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the rule rejects
  if (/[\u0000-\u001f\u007f]/.test(name)) return `category ${shown} holds a control character`
  if (name.includes("\\")) return `category ${shown} holds a backslash; separate subcategories with "/"`
  if (name.startsWith("/") || /^[a-z]:/i.test(name)) {
    return `category ${shown} is an absolute path; a category is a folder name under the mirror root`
  }
  const segments = name.split("/")
  if (segments.some((s) => s.trim() === "")) return `category ${shown} has an empty part`
  if (segments.some((s) => s === "." || s === "..")) {
    return `category ${shown} holds "." or ".."; a category is a folder name under the mirror root`
  }
  if (segments.some((s) => s.trim() !== s)) return `category ${shown} has a part with leading or trailing spaces`
  if (segments[0] === DLSYNC_DIR) return `category ${shown} names dlsync's own folder`
  return undefined
}
