/**
 * A category is a folder path below the mirror root (and the `directory` of the service's
 * download): `/`-separated segments, none empty, `.` or `..`, no control characters, and
 * never dlsync's own `.dlsync` folder. Empty = no category (the root itself).
 */
import { DLSYNC_DIR } from "../fs/dlsyncDir.ts"

/** The problem with `name` as a category, or undefined when it is one. */
export const categoryProblem = (name: string): string | undefined => {
  if (name === "") return undefined
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the rule rejects
  if (/[\u0000-\u001f\u007f\\]/.test(name))
    return `category ${JSON.stringify(name)} holds a control character or a backslash`
  const segments = name.split("/")
  if (segments.some((s) => s === "" || s === "." || s === ".." || s.trim() !== s)) {
    return `category ${JSON.stringify(name)} is not a folder path (no empty, '.' or '..' segments, no leading or trailing spaces)`
  }
  if (segments[0] === DLSYNC_DIR) return `category ${JSON.stringify(name)} names dlsync's own folder`
  return undefined
}
