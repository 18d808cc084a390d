/**
 * The planner's simulated namespace: the disk as the plan found it, transformed by the
 * renames, claims and removals emitted so far, so that every action is judged against the
 * paths as they will be when it runs. Paths are compared by `key` (folded on a
 * case-insensitive root).
 */
import type { LocalEntry, LocalStat } from "../domain/LocalEntry.ts"
import { foldName } from "./names.ts"

/** What stands at a path in the namespace. */
export type Occupant =
  | { readonly _tag: "Free" }
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Entry"; readonly entry: LocalEntry; readonly stat: LocalStat; readonly current: string }
  | { readonly _tag: "Foreign"; readonly stat: LocalStat; readonly current: string }

/** The disk and the renames, claims and removals of one pass of planning (see `Planner`). */
export class Namespace {
  readonly key: (path: string) => string
  readonly entriesByKey = new Map<string, LocalEntry>()
  readonly disk = new Map<string, LocalStat>()
  /** Folded path → the path as it is spelled on disk. */
  readonly diskPaths = new Map<string, string>()
  /** Renames emitted so far, in order: the namespace is the disk transformed by them. */
  readonly renames: Array<Move> = []
  /** Folded paths this plan creates (mkdir, download, conflict copies). */
  readonly claimed = new Set<string>()
  /** Folded original paths of the files removed before the structure phase. */
  readonly vacated = new Set<string>()

  constructor(local: ReadonlyArray<LocalEntry>, disk: ReadonlyMap<string, LocalStat>, caseInsensitive: boolean) {
    // A case-sensitive root compares paths as they are (foldName is the identity there).
    this.key = caseInsensitive
      ? (path) =>
          path
            .split("/")
            .map((c) => foldName(c, true))
            .join("/")
      : (path) => path
    for (const e of local) this.entriesByKey.set(this.key(e.path), e)
    for (const [path, stat] of disk) {
      this.disk.set(this.key(path), stat)
      this.diskPaths.set(this.key(path), path)
    }
  }

  /**
   * The nearest folder above `path` that the disk shows as something else (a symlink, a
   * file): what lies below it is out of sight, not known to be gone. Null when every folder
   * above is a folder, or one is missing (then the path is really gone).
   */
  hiddenBy(path: string): { readonly path: string; readonly stat: LocalStat } | null {
    for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", slash + 1)) {
      const ancestor = path.slice(0, slash)
      const stat = this.disk.get(this.key(ancestor))
      if (stat === undefined) return null
      if (stat.type !== "folder") return { path: ancestor, stat }
    }
    return null
  }

  /** Where an original path is now, after the renames emitted so far. */
  forward(path: string): string {
    if (this.renames.length === 0) return path
    let current = path
    let k = this.key(path)
    for (const move of this.renames) {
      if (isWithinPath(k, move.fromKey)) {
        current = replacePrefix(current, move.from, move.to)
        k = this.key(current)
      }
    }
    return current
  }

  /** What stands at `path` now, in the namespace after the actions emitted so far. */
  occupant(path: string, self: string): Occupant {
    let k = this.key(path)
    if (this.claimed.has(k)) return { _tag: "Claimed" }
    let original = path
    for (let i = this.renames.length - 1; i >= 0; i--) {
      const move = this.renames[i]!
      if (isWithinPath(k, move.toKey)) {
        original = replacePrefix(original, move.to, move.from)
        k = this.key(original)
      } else if (isWithinPath(k, move.fromKey)) return { _tag: "Free" }
    }
    const stat = this.disk.get(k)
    if (stat === undefined || this.vacated.has(k)) return { _tag: "Free" }
    const entry = this.entriesByKey.get(k)
    if (entry?.remoteId === self) return { _tag: "Free" }
    // Spelled as on disk (it may differ in case from `path` on a case-insensitive root).
    const current = this.forward(this.diskPaths.get(k) ?? original)
    if (entry !== undefined && entry.written !== null) return { _tag: "Entry", entry, stat, current }
    return { _tag: "Foreign", stat, current }
  }
}

/** A rename emitted in this pass, with its folded paths for matching. */
export interface Move {
  readonly from: string
  readonly to: string
  readonly fromKey: string
  readonly toKey: string
}

/** `path` (known to lie at or below `from`, up to folding) with its leading components replaced by `to`. */
const replacePrefix = (path: string, from: string, to: string): string => {
  const depth = from.split("/").length
  const rest = path.split("/").slice(depth)
  return rest.length === 0 ? to : `${to}/${rest.join("/")}`
}

export const describeOccupant = (occupant: Occupant): string => {
  switch (occupant._tag) {
    case "Foreign":
      return `${occupant.current} holds a ${occupant.stat.type} dlsync did not write: left alone`
    case "Entry":
      return `${occupant.current} holds another mirrored item that stays there`
    case "Claimed":
      return "the path is taken by another item in this pass"
    case "Free":
      return "free"
  }
}

export const describeHidden = (hidden: { readonly path: string; readonly stat: LocalStat }): string =>
  `${hidden.path} is a folder again, or is removed (it is now a ${hidden.stat.type})`

/** Whether `path` is `prefix` or lies below it (no allocation: it runs once per item and rename). */
export const isWithinPath = (path: string, prefix: string): boolean =>
  path.length === prefix.length
    ? path === prefix
    : path.length > prefix.length && path.charCodeAt(prefix.length) === SLASH && path.startsWith(prefix)

const SLASH = 47
