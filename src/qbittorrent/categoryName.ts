/**
 * A category is a folder under the mirror root (`<root>/<category>`), so its name must
 * stay a relative path inside it: segments separated by "/" (qBittorrent's subcategories),
 * none empty, "." or "..", no backslash, no control character. Pure.
 */

/** The most characters a category name may have. */
export const MAX_CATEGORY_LENGTH = 200

/** Why `name` cannot be a category, or undefined when it can. "" (no category) is valid. */
export const categoryNameProblem = (name: string): string | undefined => {
  if (name === "") return undefined
  const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name)
  if (name.length > MAX_CATEGORY_LENGTH) return `category ${shown} is longer than ${MAX_CATEGORY_LENGTH} characters`
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
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
  return undefined
}
