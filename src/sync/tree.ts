/**
 * Remote items → local relative paths, with the mirror's filters applied. Pure.
 *
 * Invariants:
 * - Every path is relative, `/`-separated, made of `sanitizeName` components only, so it
 *   never names `..`, never starts with `/` and never leaves the mirror root; no item takes
 *   the reserved root-level name `.dlsync`.
 * - Two items never share a path (nor a folded path when the file system ignores case).
 * - Names are assigned to all placeable items, filtered or not, so changing a filter never
 *   renames a file that stays in scope.
 * - An item whose parent chain is broken (parent unknown, parent is a file, or a cycle) gets
 *   no path and is reported as a problem, never guessed at: during a listing a parent may
 *   simply not have arrived yet.
 * - Every path fits `maxPathBytes` (so `<root>/<path>` fits PATH_MAX with room to spare):
 *   where the full names would not, the deepest long names are shortened to
 *   `stem… [tag].ext` (see `shortenDeepest`); an item too deep even then is a `too_deep`
 *   problem. Filters see the full names, so shortening never changes what is in scope.
 */
import { Glob } from "effect"
import type { RemoteItem } from "../domain/RemoteItem.ts"
import { DLSYNC_DIR } from "../fs/dlsyncDir.ts"
import {
  assignNames,
  foldName,
  SHORT_NAME_BYTES,
  type SiblingNameOptions,
  utf8Length,
  withShortNames
} from "./names.ts"

export { DLSYNC_DIR }

/** PATH_MAX on Linux: a path given to the kernel has at most 4095 bytes and its NUL. */
export const MAX_PATH_BYTES = 4096

/**
 * Room kept beyond every mapped path for dlsync's own longer spellings of it: the trash
 * (`.dlsync/trash/<date>/` and ` (n)`, 32 bytes), a folder waiting in `.dlsync/moving/<tag>`
 * (31 bytes in place of its name) and conflict copies (`.conflict-<date>-n`, 24 bytes).
 */
export const RESERVED_PATH_BYTES = 64

export interface TreeConfig {
  /** Remote folders to mirror, as paths below the root (`TV/Shows`); empty = everything. */
  readonly folders: ReadonlyArray<string>
  /** File kinds to mirror; empty = all kinds. Folders are not filtered by kind. */
  readonly kinds: ReadonlyArray<string>
  /**
   * Globs on the relative path (`*`, `**`, `?`, `[…]`, `{a,b}`; a trailing `/` matches
   * folders only). A pattern without `/` matches a name at any depth (`*.nfo`); one with `/`
   * is anchored at the root (`Movies/**`). Matching is case-sensitive and `*` also matches
   * names starting with a dot. `include` applies to files; `exclude` to files and folders
   * (an excluded folder excludes everything below it).
   */
  readonly include: ReadonlyArray<string>
  readonly exclude: ReadonlyArray<string>
  /** Files larger than this many bytes are skipped; null = no limit. */
  readonly maxFileSize: number | null
  readonly portableNames: boolean
  readonly caseInsensitive: boolean
  /** The longest relative path, in UTF-8 bytes, the mapping may give (`maxPathBytesUnder`). */
  readonly maxPathBytes: number
  /**
   * Remote ids mirrored whatever the filters say, with everything below them; their
   * folders' ancestors are placed too so they have a place (the intake queue's downloads,
   * see src/store/intakeTables.ts `mirroredIds`). Absent = none.
   */
  readonly alwaysMirror?: ReadonlySet<string>
}

export type FilterReason = "folder_not_selected" | "kind" | "excluded" | "not_included" | "too_big"

export interface Placed {
  readonly item: RemoteItem
  /** The local path relative to the root. */
  readonly path: string
  /** The path with every name in full (`path` unless a name on it is shortened): what the filters see. */
  readonly fullPath: string
  /** Null when the item is in scope; else why the filters leave it out. */
  readonly filtered: FilterReason | null
  /** Its own name is shortened (`shortName`) so that a path below it fits PATH_MAX. */
  readonly shortened: boolean
}

export interface TreeProblem {
  readonly item: RemoteItem
  readonly problem: "orphan" | "parent_is_file" | "cycle" | "too_deep"
  readonly detail: string
}

export interface MappedTree {
  /** Placeable items by id, parents before children (by depth, then path). */
  readonly placed: ReadonlyArray<Placed>
  readonly byId: ReadonlyMap<string, Placed>
  readonly problems: ReadonlyArray<TreeProblem>
}

export const mapTree = (items: Iterable<RemoteItem>, config: TreeConfig): MappedTree => {
  const byId = new Map<string, RemoteItem>()
  for (const item of items) byId.set(item.id, item)
  const children = new Map<string | null, Array<RemoteItem>>()
  for (const item of byId.values()) {
    const key = item.parentId
    const list = children.get(key)
    if (list === undefined) children.set(key, [item])
    else list.push(item)
  }
  const filters = compileFilters(config)
  const always = config.alwaysMirror ?? NONE
  const alwaysAncestors = ancestorsOf(always, byId)
  // Breadth-first from the root, with every name in full: what is not reached has a broken
  // parent chain. Filters see these full paths, so shortening never changes what is in scope.
  const nodes: Array<Node> = []
  const groups: Array<Group> = []
  let level: Array<Node | null> = [null]
  while (level.length > 0) {
    const next: Array<Node | null> = []
    for (const parent of level) {
      const siblings = children.get(parent === null ? null : parent.item.id) ?? []
      if (siblings.length === 0) continue
      const options = {
        portable: config.portableNames,
        caseInsensitive: config.caseInsensitive,
        reserved: parent === null ? [DLSYNC_DIR] : []
      }
      const names = assignNames(siblings, options)
      groups.push({ siblings, names, options })
      for (const item of [...siblings].sort((a, b) => compare(names.get(a.id) ?? "", names.get(b.id) ?? ""))) {
        const name = names.get(item.id) ?? "_"
        const fullPath = parent === null ? name : `${parent.fullPath}/${name}`
        const bytes = utf8Length(name)
        const forced = always.has(item.id) || parent?.forced === true
        const placesForced = item.type === "folder" && alwaysAncestors.has(item.id)
        const node: Node = {
          item,
          parent,
          name,
          fullPath,
          forced,
          filtered: forced || placesForced ? null : filters(item, fullPath, parent),
          bytes,
          fullBytes: (parent === null ? -1 : parent.fullBytes) + 1 + bytes,
          // A name no longer than a short one gains nothing from shortening: it stays.
          saving: Math.max(0, bytes - SHORT_NAME_BYTES),
          shortened: false,
          path: ""
        }
        nodes.push(node)
        if (item.type === "folder") next.push(node)
      }
    }
    level = next
  }
  const nodeById = new Map(nodes.map((n) => [n.item.id, n]))
  const fits = shortenDeepest(nodes, config.maxPathBytes)
  for (const { siblings, names, options } of groups) {
    const shortened = siblings.filter((s) => nodeById.get(s.id)?.shortened === true)
    if (shortened.length === 0) continue
    const spelled = withShortNames(names, shortened, options)
    for (const s of shortened) nodeById.get(s.id)!.name = spelled.get(s.id) ?? "_"
  }
  const placed: Array<Placed> = []
  const placedById = new Map<string, Placed>()
  const problems: Array<TreeProblem> = []
  for (const node of nodes) {
    if (!fits.has(node)) {
      problems.push({
        item: node.item,
        problem: "too_deep",
        detail:
          `its path would be longer than the ${config.maxPathBytes} bytes left below this mirror root ` +
          `(PATH_MAX ${MAX_PATH_BYTES}) even with shortened names: mirror it to a shorter root or flatten the folders`
      })
      continue
    }
    // Most paths have nothing short on them: they are their full paths (one string, not two).
    node.path =
      node.parent === null
        ? node.name
        : node.parent.path === node.parent.fullPath && !node.shortened
          ? node.fullPath
          : `${node.parent.path}/${node.name}`
    const entry: Placed = {
      item: node.item,
      path: node.path,
      fullPath: node.fullPath,
      filtered: node.filtered,
      shortened: node.shortened
    }
    placed.push(entry)
    placedById.set(node.item.id, entry)
  }
  const reached = new Set(nodes.map((n) => n.item.id))
  for (const item of byId.values()) {
    if (!reached.has(item.id)) problems.push(diagnose(item, byId))
  }
  problems.sort((a, b) => compare(a.item.id, b.item.id))
  return { placed, byId: placedById, problems }
}

/**
 * The longest relative path (UTF-8 bytes) the mapping may give under `root` (absolute):
 * `<root>/<path>` stays below PATH_MAX with RESERVED_PATH_BYTES to spare.
 */
export const maxPathBytesUnder = (root: string): number =>
  MAX_PATH_BYTES - 1 - utf8Length(root) - 1 - RESERVED_PATH_BYTES

/**
 * The filters that select nothing in `tree`: a `folders` entry naming no folder, an
 * `include` pattern matching no file, an `exclude` pattern matching nothing. Meaningful on
 * a complete listing only; a likely typo, so the caller warns (an empty account is not an
 * error).
 */
export const unmatchedFilters = (tree: MappedTree, config: TreeConfig): ReadonlyArray<string> => {
  const fold = (p: string) => foldName(p, config.caseInsensitive)
  const unmatched: Array<string> = []
  for (const folder of config.folders) {
    const wanted = fold(folder.replace(/^\/+|\/+$/g, ""))
    if (wanted === "") continue
    if (!tree.placed.some((p) => p.item.type === "folder" && fold(p.fullPath) === wanted)) {
      unmatched.push(`mirror.folders: ${JSON.stringify(folder)} names no folder of the account`)
    }
  }
  for (const pattern of config.include) {
    const glob = compileGlob(pattern)
    if (!tree.placed.some((p) => p.item.type === "file" && Glob.match(glob, p.fullPath))) {
      unmatched.push(`mirror.include: ${JSON.stringify(pattern)} matches no file of the account`)
    }
  }
  for (const pattern of config.exclude) {
    const glob = compileGlob(pattern)
    if (!tree.placed.some((p) => Glob.match(glob, p.item.type === "folder" ? `${p.fullPath}/` : p.fullPath))) {
      unmatched.push(`mirror.exclude: ${JSON.stringify(pattern)} matches nothing in the account`)
    }
  }
  return unmatched
}

/** Whether `path` is `prefix` itself or lies below it. */
export const isWithin = (path: string, prefix: string): boolean => path === prefix || path.startsWith(prefix + "/")

// ---------------------------------------------------------------------------------------

/** An item reached from the root, while its final path is worked out. */
interface Node {
  readonly item: RemoteItem
  readonly parent: Node | null
  /** Its name in full, then as placed (short when `shortened`). */
  name: string
  /** The path with every name in full, which the filters see. */
  readonly fullPath: string
  /** In `alwaysMirror`, or below an item that is: in scope whatever the filters say. */
  readonly forced: boolean
  readonly filtered: FilterReason | null
  /** UTF-8 bytes of its full name, and of its full path. */
  readonly bytes: number
  readonly fullBytes: number
  /** Bytes its name loses when shortened (0: too short to gain anything). */
  readonly saving: number
  shortened: boolean
  path: string
}

/** One folder's children, as `assignNames` named them. */
interface Group {
  readonly siblings: ReadonlyArray<RemoteItem>
  readonly names: ReadonlyMap<string, string>
  readonly options: SiblingNameOptions
}

/**
 * Marks the names to shorten so that every path fits `budget` bytes, deepest first: for an
 * item whose full path is too long, its own name and then its ancestors' (bottom up) are
 * shortened until the path fits. A folder has one name for everything below it, so it is
 * short when any item below it needs that. The choice depends on the tree alone, so it is
 * the same at every pass. Returns the items that fit at all (nodes come parents first).
 */
const shortenDeepest = (nodes: ReadonlyArray<Node>, budget: number): Set<Node> => {
  const fits = new Set<Node>()
  const leastBytes = new Map<Node, number>()
  for (const node of nodes) {
    const parentLeast = node.parent === null ? -1 : leastBytes.get(node.parent)
    if (parentLeast === undefined) continue
    const least = parentLeast + 1 + node.bytes - node.saving
    if (least > budget) continue
    fits.add(node)
    leastBytes.set(node, least)
    let excess = node.fullBytes - budget
    for (let n: Node | null = node; excess > 0 && n !== null; n = n.parent) {
      if (n.saving === 0) continue
      n.shortened = true
      excess -= n.saving
    }
  }
  return fits
}

type Filter = (
  item: RemoteItem,
  path: string,
  parent: { readonly filtered: FilterReason | null } | null
) => FilterReason | null

const NONE: ReadonlySet<string> = new Set()

/** The folders above the given items (by parent chain), so that those items have a place. */
const ancestorsOf = (ids: ReadonlySet<string>, byId: ReadonlyMap<string, RemoteItem>): ReadonlySet<string> => {
  const ancestors = new Set<string>()
  for (const id of ids) {
    let parentId = byId.get(id)?.parentId ?? null
    while (parentId !== null && !ancestors.has(parentId)) {
      ancestors.add(parentId)
      parentId = byId.get(parentId)?.parentId ?? null
    }
  }
  return ancestors
}

const compileFilters = (config: TreeConfig): Filter => {
  const fold = (p: string) => foldName(p, config.caseInsensitive)
  const selected = config.folders.map((f) => fold(f.replace(/^\/+|\/+$/g, ""))).filter((f) => f !== "")
  const include = config.include.map(compileGlob)
  const exclude = config.exclude.map(compileGlob)
  const kinds = new Set(config.kinds)
  return (item, path, parent) => {
    if (parent?.filtered === "excluded") return "excluded"
    if (exclude.some((g) => Glob.match(g, item.type === "folder" ? path + "/" : path))) return "excluded"
    if (selected.length > 0) {
      const folded = fold(path)
      if (!selected.some((s) => isWithin(folded, s))) {
        // An ancestor of a selected folder is created so the selection has a place; the
        // files directly in it are not mirrored.
        const ancestor = item.type === "folder" && selected.some((s) => s.startsWith(folded + "/"))
        return ancestor ? null : "folder_not_selected"
      }
    }
    if (item.type === "folder") return null
    if (kinds.size > 0 && !kinds.has(item.kind)) return "kind"
    if (include.length > 0 && !include.some((g) => Glob.match(g, path))) return "not_included"
    if (config.maxFileSize !== null && item.size > config.maxFileSize) return "too_big"
    return null
  }
}

const compileGlob = (pattern: string): Glob.Glob => {
  const trimmed = pattern.replace(/^\/+/, "")
  const anchored = trimmed.replace(/\/+$/, "").includes("/")
  return Glob.make(anchored ? trimmed : `**/${trimmed}`, { dot: true })
}

const diagnose = (item: RemoteItem, byId: ReadonlyMap<string, RemoteItem>): TreeProblem => {
  const seen = new Set<string>([item.id])
  let current = item
  while (current.parentId !== null) {
    const parent = byId.get(current.parentId)
    if (parent === undefined) {
      return { item, problem: "orphan", detail: `parent ${current.parentId} is not known` }
    }
    if (parent.type !== "folder") {
      return { item, problem: "parent_is_file", detail: `parent ${parent.id} is a file` }
    }
    if (seen.has(parent.id)) {
      return { item, problem: "cycle", detail: `parent chain loops through ${parent.id}` }
    }
    seen.add(parent.id)
    current = parent
  }
  // Unreachable for a consistent map; reported rather than thrown.
  return { item, problem: "orphan", detail: "not reachable from the root" }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
