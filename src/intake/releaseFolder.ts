/**
 * Where a release lives: the service folder it is created in, and the one path (its content
 * root) that covers its files and nothing of another release's. Pure.
 *
 *   a torrent or a URL ─► directory <category>: the service makes the torrent's root folder
 *                          <category>/<name>, or the URL's one file <category>/<name>
 *   an NZB ─► directory <category>/<name>: its files come loose, so it gets a folder
 *   that path already taken (an item on the service, another release's) ─► <name> (2), (3)…
 *
 * Invariants:
 * - Two releases never get the same directory-and-name, nor one another's folder: a name is
 *   taken when the service already holds an item at that path or another live release's
 *   content root is there (case-insensitively, as a case-insensitive mirror would merge them).
 *   A torrent that would collide gets a folder of its own, inside which the service makes
 *   its root folder.
 * - The content root of files is the file itself for one file, else the deepest folder that
 *   holds them all; it is never the category folder (that would cover other releases).
 */
import type { SourceKind } from "../store/intakeTables.ts"

/** A release name as one folder name: no "/", not empty, ".", or "..". */
export const releaseFolderName = (name: string): string => {
  const cleaned = name.replaceAll("/", "_").trim()
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "_" : cleaned
}

/**
 * The service folder a release is created in: its category, or a folder of its own there.
 * `taken` holds the paths (lower case) already used: the service's items in the category
 * folder and other live releases' content roots.
 */
export const releaseDirectory = (
  kind: SourceKind,
  category: string,
  name: string,
  taken: ReadonlySet<string> = NOTHING_TAKEN
): string => {
  const folder = releaseFolderName(name)
  const isTaken = (path: string) => taken.has(path.toLowerCase())
  const own = kind === "nzb"
  if (!own && !isTaken(join(category, folder))) return category
  for (let n = 1; ; n++) {
    const candidate = join(category, n === 1 ? folder : `${folder} (${n})`)
    if (!isTaken(candidate)) return candidate
  }
}

/** Where the release's files are expected before any is known: the torrent's root folder, or its own folder. */
export const expectedContentRoot = (directory: string, category: string, name: string): string =>
  directory === category ? join(category, releaseFolderName(name)) : directory

/**
 * The content root of a release's file paths (relative, "/"-separated): the file for one
 * file, else the deepest folder that holds them all; undefined when that would be `category`
 * or above (loose files in a shared folder have no root of their own).
 */
export const contentRootOf = (paths: ReadonlyArray<string>, category: string): string | undefined => {
  const [first] = paths
  if (first === undefined) return undefined
  const root = paths.length === 1 ? first : commonFolder(paths)
  const depth = category === "" ? 0 : category.split("/").length
  return root.split("/").filter((s) => s !== "").length > depth && isWithin(root, category) ? root : undefined
}

/** `path` below `folder` ("" = everywhere), or equal to it. */
export const isWithin = (path: string, folder: string): boolean =>
  folder === "" || path === folder || path.startsWith(`${folder}/`)

export const join = (folder: string, name: string): string => (folder === "" ? name : `${folder}/${name}`)

// ---------------------------------------------------------------------------------------

const NOTHING_TAKEN: ReadonlySet<string> = new Set()

const commonFolder = (paths: ReadonlyArray<string>): string => {
  const split = paths.map((p) => p.split("/").slice(0, -1))
  const shortest = Math.min(...split.map((s) => s.length))
  const common: Array<string> = []
  for (let i = 0; i < shortest; i++) {
    const segment = split[0]?.[i]
    if (segment === undefined || split.some((s) => s[i] !== segment)) break
    common.push(segment)
  }
  return common.join("/")
}
