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
 */
import { Glob } from "effect"
import type { RemoteItem } from "./model.ts"
import { assignNames, foldName } from "./names.ts"

/** The name dlsync keeps its own files under, at the root of the mirror. */
export const DLSYNC_DIR = ".dlsync"

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
}

export type FilterReason = "folder_not_selected" | "kind" | "excluded" | "not_included" | "too_big"

export interface Placed {
  readonly item: RemoteItem
  /** The local path relative to the root. */
  readonly path: string
  /** Null when the item is in scope; else why the filters leave it out. */
  readonly filtered: FilterReason | null
}

export interface TreeProblem {
  readonly item: RemoteItem
  readonly problem: "orphan" | "parent_is_file" | "cycle"
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
  const placed: Array<Placed> = []
  const placedById = new Map<string, Placed>()
  // Breadth-first from the root: what is not reached has a broken parent chain.
  let level: Array<{ readonly parent: Placed | null; readonly id: string | null }> = [{ parent: null, id: null }]
  while (level.length > 0) {
    const next: Array<{ readonly parent: Placed | null; readonly id: string | null }> = []
    for (const { parent, id } of level) {
      const siblings = children.get(id) ?? []
      if (siblings.length === 0) continue
      const names = assignNames(siblings, {
        portable: config.portableNames,
        caseInsensitive: config.caseInsensitive,
        reserved: id === null ? [DLSYNC_DIR] : []
      })
      for (const item of [...siblings].sort((a, b) => compare(names.get(a.id) ?? "", names.get(b.id) ?? ""))) {
        const name = names.get(item.id) ?? "_"
        const path = parent === null ? name : `${parent.path}/${name}`
        const entry: Placed = { item, path, filtered: filters(item, path, parent) }
        placed.push(entry)
        placedById.set(item.id, entry)
        if (item.type === "folder") next.push({ parent: entry, id: item.id })
      }
    }
    level = next
  }
  const problems: Array<TreeProblem> = []
  for (const item of byId.values()) {
    if (!placedById.has(item.id)) problems.push(diagnose(item, byId))
  }
  problems.sort((a, b) => compare(a.item.id, b.item.id))
  return { placed, byId: placedById, problems }
}

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
    if (!tree.placed.some((p) => p.item.type === "folder" && fold(p.path) === wanted)) {
      unmatched.push(`mirror.folders: ${JSON.stringify(folder)} names no folder of the account`)
    }
  }
  for (const pattern of config.include) {
    const glob = compileGlob(pattern)
    if (!tree.placed.some((p) => p.item.type === "file" && Glob.match(glob, p.path))) {
      unmatched.push(`mirror.include: ${JSON.stringify(pattern)} matches no file of the account`)
    }
  }
  for (const pattern of config.exclude) {
    const glob = compileGlob(pattern)
    if (!tree.placed.some((p) => Glob.match(glob, p.item.type === "folder" ? `${p.path}/` : p.path))) {
      unmatched.push(`mirror.exclude: ${JSON.stringify(pattern)} matches nothing in the account`)
    }
  }
  return unmatched
}

/** Whether `path` is `prefix` itself or lies below it. */
export const isWithin = (path: string, prefix: string): boolean => path === prefix || path.startsWith(prefix + "/")

// ---------------------------------------------------------------------------------------

type Filter = (item: RemoteItem, path: string, parent: Placed | null) => FilterReason | null

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
