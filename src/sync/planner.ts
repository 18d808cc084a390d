/**
 * The planner: (remote items, local entries, fresh lstats, policy) → actions. Pure: no I/O,
 * no clock (`now` is an input), no config reads.
 *
 * Invariants (ARCHITECTURE.md, safety invariants 4–7):
 * - Only a path the store says dlsync wrote AND whose fresh lstat (size, mtime, inode) still
 *   matches is ever replaced, trashed or deleted; every such action carries that `expected`
 *   stat so the executor re-checks it right before acting.
 * - A path neither in the store nor created by this plan is never written, renamed or
 *   removed (adopt-only mode aside, where a non-matching file is kept as a conflict copy).
 * - No removal unless the listing is complete; none in adopt-only mode; none beyond the
 *   big-delete limit unless `allowBigDelete` (one `HoldDeletes` instead).
 * - A remote rename or move is a `Rename` on disk, never a new download; a moved folder is
 *   one `Rename`, its contents follow without actions of their own.
 * - Every path in an action is relative to the root and made of sanitized components (see
 *   tree.ts), or lies under `.dlsync/`.
 * - A path out of sight (a folder above it is now a symlink or a file) is not taken for
 *   gone: a remote deletion or move there waits (`Skip parent_blocked`, the entry kept) and is
 *   applied once the folder is back.
 * - Nothing is silent: whatever is left undone gets a `Skip` with a code and a reason.
 *
 * Order of the returned actions, which the executor keeps:
 *   forgets · file removals (or one HoldDeletes) · structure (mkdir, rename, conflict copy,
 *   adopt, refresh, mark) in parents-first order · folder removals (deepest first) ·
 *   downloads · skips
 * File removals come first so that a new item may take the name of a removed one; downloads
 * come last so that they land in the final structure.
 *
 * Names passed on within one pass (swaps, a folder taking a removed folder's name) go through
 * `.dlsync/moving/<tag>`: the item in the way is moved there first and on to its own place
 * when its turn comes. Files dlsync wrote whose item is now filtered out stay where they are
 * (and may keep a name an in-scope item wants: that item is skipped as `occupied`).
 */
import type { FileId } from "../domain/FileId.ts"
import {
  hasNewContent,
  isIntact,
  type LocalEntry,
  type LocallyDeleted,
  type LocalStat,
  looksLanded,
  remoteVersionOf
} from "../domain/LocalEntry.ts"
import type { ItemType, RemoteItem } from "../domain/RemoteItem.ts"
import { idTag, withInfix } from "./names.ts"
import { describeHidden, describeOccupant, isWithinPath, Namespace, type Occupant } from "./namespace.ts"
import type { Action, PlanInput, SkipCode } from "./planTypes.ts"
import { DLSYNC_DIR, type FilterReason, mapTree } from "./tree.ts"

export type { Action, ActionTag, PlanConfig, PlanInput, SkipCode } from "./planTypes.ts"

/** Where a folder or file waits while another item takes its place (see `stageOccupant`). */
export const MOVING_DIR = `${DLSYNC_DIR}/moving`

/** The default big-delete rule: hold above 50 files AND above 10 % of the mirror. */
export const DEFAULT_MAX_DELETE_FILES = 50
export const DEFAULT_MAX_DELETE_RATIO = 0.1

export const plan = (input: PlanInput): ReadonlyArray<Action> => new Planner(input).run()

/** Whether a pass removing `count` of `mirrored` files exceeds the limit. */
export const exceedsDeleteLimit = (count: number, mirrored: number, maxDelete: number | null): boolean =>
  maxDelete === null
    ? count > DEFAULT_MAX_DELETE_FILES && count > mirrored * DEFAULT_MAX_DELETE_RATIO
    : count > maxDelete

/** `dir/name.conflict-<date>[-n].ext` for `path`. */
export const conflictPath = (path: string, date: string, n: number): string => {
  const slash = path.lastIndexOf("/")
  const dir = slash < 0 ? "" : path.slice(0, slash + 1)
  const name = path.slice(slash + 1)
  return dir + withInfix(name, `.conflict-${date}${n > 1 ? `-${n}` : ""}`)
}

// ---------------------------------------------------------------------------------------

type Block = "locally_deleted" | "blocked"

/** One pass of planning; holds the simulated namespace while actions are emitted in order. */
class Planner extends Namespace {
  readonly input: PlanInput
  readonly entriesById = new Map<string, LocalEntry>()
  readonly markers = new Map<string, LocallyDeleted>()
  readonly processed = new Set<string>()
  readonly blocked = new Map<string, Block>()
  readonly desiredById = new Map<string, string>()
  /** Remote ids of folder entries removed in this pass (RemoveFolder after the structure). */
  readonly removedFolders = new Set<string>()
  readonly date: string

  readonly forgets: Array<Action> = []
  readonly removals: Array<Action> = []
  readonly structure: Array<Action> = []
  readonly folderRemovals: Array<Action> = []
  readonly downloads: Array<Action> = []
  readonly skips: Array<Action> = []

  constructor(input: PlanInput) {
    super(input.local, input.disk, input.config.caseInsensitive)
    this.input = input
    for (const e of input.local) this.entriesById.set(e.remoteId, e)
    for (const m of input.locallyDeleted) this.markers.set(m.remoteId, m)
    this.date = input.now.toISOString().slice(0, 10)
  }

  run(): ReadonlyArray<Action> {
    const tree = mapTree(this.input.remote, this.input.config)
    const remoteIds = new Set<string>()
    for (const p of tree.placed) {
      remoteIds.add(p.item.id)
      if (p.filtered === null) this.desiredById.set(p.item.id, p.path)
    }
    for (const problem of tree.problems) {
      remoteIds.add(problem.item.id)
      const entry = this.entriesById.get(problem.item.id)
      const code = problem.problem === "too_deep" ? "too_deep" : "broken_parent"
      this.skip(code, entry?.path ?? null, problem.item.id, `${problem.problem}: ${problem.detail}`)
    }
    const folderCandidates = this.planRemovals(remoteIds)
    for (const placed of tree.placed) {
      if (placed.filtered !== null) this.skipFiltered(placed.item, placed.path, placed.filtered)
      else if (placed.item.type === "folder") this.planFolder(placed.item, placed.path)
      else this.planFile(placed.item, placed.path)
      this.processed.add(placed.item.id)
    }
    for (const { entry, stat } of folderCandidates.sort((a, b) => depth(b.entry.path) - depth(a.entry.path))) {
      this.folderRemovals.push({
        _tag: "RemoveFolder",
        path: this.forward(entry.path),
        remoteId: entry.remoteId,
        expected: stat,
        reason: "deleted on the remote"
      })
    }
    return [
      ...this.forgets,
      ...this.removals,
      ...this.structure,
      ...this.folderRemovals,
      ...this.downloads,
      ...this.skips
    ]
  }

  /** Removals for entries whose remote item is gone; returns the folder candidates. */
  planRemovals(remoteIds: ReadonlySet<string>): Array<{ entry: LocalEntry; stat: LocalStat }> {
    const { config, listingComplete, adoptOnly } = this.input
    if (!listingComplete || adoptOnly) return []
    for (const marker of this.input.locallyDeleted) {
      if (!remoteIds.has(marker.remoteId)) {
        this.forgets.push({
          _tag: "Forget",
          what: "marker",
          path: marker.path,
          remoteId: marker.remoteId,
          reason: "deleted on the remote"
        })
      }
    }
    const files: Array<{ entry: LocalEntry; stat: LocalStat }> = []
    const folders: Array<{ entry: LocalEntry; stat: LocalStat }> = []
    for (const entry of this.input.local) {
      if (remoteIds.has(entry.remoteId)) continue
      const stat = this.disk.get(this.key(entry.path))
      const forget = (reason: string) =>
        this.forgets.push({ _tag: "Forget", what: "entry", path: entry.path, remoteId: entry.remoteId, reason })
      // A deletion that cannot be applied now (its path is out of sight behind a symlink, or
      // our folder is replaced) keeps its entry: it is applied once the path is back.
      const wait = (why: string) =>
        this.skip("parent_blocked", entry.path, entry.remoteId, `deleted on the remote; waits until ${why}`)
      if (config.onRemoteDelete === "keep") forget("deleted on the remote; kept (on_remote_delete = keep)")
      else if (entry.written === null) forget("deleted on the remote; nothing left on disk")
      else if (stat === undefined) {
        const hidden = this.hiddenBy(entry.path)
        if (hidden === null) forget("deleted on the remote; nothing left on disk")
        else wait(describeHidden(hidden))
      } else if (entry.type === "folder") {
        if (stat.type === "folder") folders.push({ entry, stat })
        else wait(`${entry.path} is our folder again, or is removed (it is now a ${stat.type})`)
      } else if (isIntact(stat, entry.written)) files.push({ entry, stat })
      else forget("deleted on the remote, but changed locally: kept")
    }
    const mirrored = this.input.local.filter((e) => e.type === "file" && e.written !== null).length
    if (
      files.length > 0 &&
      !this.input.allowBigDelete &&
      exceedsDeleteLimit(files.length, mirrored, config.maxDelete)
    ) {
      const limit =
        config.maxDelete === null
          ? `more than ${DEFAULT_MAX_DELETE_FILES} files and more than ${DEFAULT_MAX_DELETE_RATIO * 100} % of the mirror`
          : `more than ${config.maxDelete} files`
      this.removals.push({
        _tag: "HoldDeletes",
        count: files.length,
        mirrored,
        limit,
        paths: files.map((f) => f.entry.path).sort(),
        reason: `big delete held: ${files.length} of ${mirrored} files would be removed (limit: ${limit})`
      })
      return []
    }
    for (const { entry } of folders) this.removedFolders.add(entry.remoteId)
    for (const { entry, stat } of files) {
      this.vacated.add(this.key(entry.path))
      this.removals.push({
        _tag: config.onRemoteDelete === "trash" ? "Trash" : "Delete",
        path: entry.path,
        remoteId: entry.remoteId,
        expected: stat,
        reason: "deleted on the remote"
      })
    }
    return folders
  }

  planFolder(item: RemoteItem, desired: string): void {
    if (this.inheritBlock(item)) return
    const entry = this.entriesById.get(item.id)
    const respect = this.input.config.onLocalDelete === "respect" && !this.input.adoptOnly
    if (entry !== undefined && entry.written !== null) {
      const stat = this.disk.get(this.key(entry.path))
      const current = this.forward(entry.path)
      if (stat === undefined && this.waitForHidden(entry, item)) {
        this.blocked.set(item.id, "blocked")
        return
      }
      if (stat === undefined) {
        if (respect) {
          this.markDeleted(current, item.id, "folder deleted locally; kept deleted (on_local_delete = respect)")
          this.blocked.set(item.id, "locally_deleted")
        } else this.createFolder(item, desired, "folder deleted locally; recreated (on_local_delete = redownload)")
        return
      }
      if (stat.type !== "folder") {
        this.skip("occupied", current, item.id, "our folder was replaced by something else: left alone")
        this.blocked.set(item.id, "blocked")
        return
      }
      if (current !== desired && !this.move(entry.path, desired, item, "folder", stat)) {
        this.blocked.set(item.id, "blocked")
      }
      return
    }
    if (respect && this.markers.has(item.id)) {
      this.skip("locally_deleted", desired, item.id, "deleted locally; kept deleted (dlsync restore brings it back)")
      this.blocked.set(item.id, "locally_deleted")
      return
    }
    this.createFolder(item, desired, "new on the remote")
  }

  planFile(item: RemoteItem, desired: string): void {
    if (this.inheritBlock(item)) return
    const entry = this.entriesById.get(item.id)
    const { adoptOnly } = this.input
    const respect = this.input.config.onLocalDelete === "respect" && !adoptOnly
    if (entry !== undefined && entry.written !== null) {
      const stat = this.disk.get(this.key(entry.path))
      const current = this.forward(entry.path)
      if (stat === undefined && this.waitForHidden(entry, item)) return
      if (stat === undefined) {
        if (respect) this.markDeleted(current, item.id, "deleted locally; kept deleted (on_local_delete = respect)")
        else if (item.locked) this.skip("locked", desired, item.id, "deleted locally; locked on the remote")
        else this.download(item, desired, "deleted locally; fetched again (on_local_delete = redownload)")
        return
      }
      if (stat.type !== "file") {
        this.skip("occupied", current, item.id, `our file was replaced by a ${stat.type}: left alone`)
        return
      }
      const intact = isIntact(stat, entry.written)
      const newContent = hasNewContent(entry.remote, item)
      if (current !== desired && !this.move(entry.path, desired, item, "file", stat)) return
      const moved = current !== desired
      if (!newContent) {
        if (!intact) this.skip("modified_locally", desired, item.id, "changed locally; the remote has no new version")
        else if (!moved && !sameVersion(entry, item)) {
          this.structure.push({
            _tag: "Refresh",
            path: desired,
            item,
            reason: "remote details changed, not its content"
          })
        }
        return
      }
      if (item.locked) {
        this.skip("locked", desired, item.id, "a new version is locked on the remote; the current copy stays")
        return
      }
      if (intact) {
        this.downloads.push({
          _tag: "Download",
          path: desired,
          item,
          replace: stat,
          reason: "new version on the remote"
        })
        return
      }
      this.conflictCopy(desired, item.id, stat, "changed locally while the remote has a new version")
      this.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason: "new version on the remote" })
      return
    }
    if (respect && this.markers.has(item.id)) {
      this.skip("locally_deleted", desired, item.id, "deleted locally; kept deleted (dlsync restore brings it back)")
      return
    }
    if (item.locked) {
      this.skip("locked", desired, item.id, "locked on the remote; fetched once unlocked")
      return
    }
    const occupant = this.occupant(desired, item.id)
    if (occupant._tag === "Free" || (occupant._tag === "Entry" && this.stageOccupant(occupant))) {
      this.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason: "new on the remote" })
      this.claimed.add(this.key(desired))
      return
    }
    if (occupant._tag === "Foreign" && adoptOnly && occupant.stat.type === "file") {
      if (looksLanded(occupant.stat, item)) {
        this.structure.push({
          _tag: "Adopt",
          path: desired,
          item,
          stat: occupant.stat,
          reason: "adopt-only: same path, size and the mtime dlsync sets"
        })
      } else {
        const differs = occupant.stat.size === item.size ? "mtime" : "size"
        this.conflictCopy(desired, item.id, occupant.stat, `adopt-only: same path, different ${differs}`)
        this.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason: "adopt-only: fetched" })
      }
      return
    }
    this.skip("occupied", desired, item.id, describeOccupant(occupant))
  }

  /** Skips an entry whose path is out of sight (see `hiddenBy`) rather than take it as deleted locally. */
  waitForHidden(entry: LocalEntry, item: RemoteItem): boolean {
    const hidden = this.hiddenBy(entry.path)
    if (hidden === null) return false
    this.skip("parent_blocked", entry.path, item.id, `out of sight: waits until ${describeHidden(hidden)}`)
    return true
  }

  /** Children of a blocked folder are skipped (or marked deleted along with it). */
  inheritBlock(item: RemoteItem): boolean {
    const block = item.parentId === null ? undefined : this.blocked.get(item.parentId)
    if (block === undefined) return false
    if (item.type === "folder") this.blocked.set(item.id, block)
    const entry = this.entriesById.get(item.id)
    if (block === "locally_deleted") {
      if (entry !== undefined && entry.written !== null) {
        this.markDeleted(this.forward(entry.path), item.id, "inside a folder deleted locally; kept deleted")
      } else this.skip("locally_deleted", null, item.id, "inside a folder deleted locally")
    } else this.skip("parent_blocked", entry?.path ?? null, item.id, "its folder could not be placed")
    return true
  }

  createFolder(item: RemoteItem, desired: string, reason: string): void {
    const occupant = this.occupant(desired, item.id)
    if (occupant._tag === "Free" || (occupant._tag === "Entry" && this.stageOccupant(occupant))) {
      this.structure.push({ _tag: "Mkdir", path: desired, item, reason })
      this.claimed.add(this.key(desired))
      return
    }
    if (occupant._tag === "Foreign" && occupant.stat.type === "folder") {
      this.structure.push({ _tag: "Adopt", path: desired, item, stat: occupant.stat, reason: "folder already there" })
      return
    }
    this.skip("occupied", desired, item.id, describeOccupant(occupant))
    this.blocked.set(item.id, "blocked")
  }

  download(item: RemoteItem, desired: string, reason: string): void {
    const occupant = this.occupant(desired, item.id)
    if (occupant._tag === "Free" || (occupant._tag === "Entry" && this.stageOccupant(occupant))) {
      this.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason })
      this.claimed.add(this.key(desired))
    } else this.skip("occupied", desired, item.id, describeOccupant(occupant))
  }

  /** Renames `current` to `desired` if the place is free (or can be freed); else skips. */
  move(original: string, desired: string, item: RemoteItem, type: ItemType, stat: LocalStat): boolean {
    const current = this.forward(original)
    if (isWithinPath(this.key(desired), this.key(current)) && this.key(desired) !== this.key(current)) {
      this.skip("occupied", current, item.id, `cannot move ${current} into itself (${desired})`)
      return false
    }
    const occupant = this.occupant(desired, item.id)
    if (!(occupant._tag === "Free" || (occupant._tag === "Entry" && this.stageOccupant(occupant)))) {
      this.skip("occupied", current, item.id, `cannot move to ${desired}: ${describeOccupant(occupant)}`)
      return false
    }
    // Staging the occupant may have carried this item along (it was inside it).
    this.rename(this.forward(original), desired, item.id, type, item, stat, "renamed or moved on the remote")
    return true
  }

  /**
   * Moves an entry that stands in the way into `.dlsync/moving/` when it is itself going
   * elsewhere later in this pass (swaps, a name passed on). Returns false when it stays.
   */
  stageOccupant(occupant: Extract<Occupant, { _tag: "Entry" }>): boolean {
    const { entry, stat, current } = occupant
    const desired = this.desiredById.get(entry.remoteId)
    const movesOn =
      desired !== undefined && !this.processed.has(entry.remoteId) && this.key(desired) !== this.key(current)
    if (!movesOn && !(this.removedFolders.has(entry.remoteId) && this.emptiesOut(entry.path))) return false
    const staging = `${MOVING_DIR}/${idTag(entry.remoteId, 16)}`
    this.rename(current, staging, entry.remoteId, entry.type, null, stat, "making room; moved on below")
    return true
  }

  /**
   * Whether everything below a removed folder is ours and leaves it in this pass (removed
   * files, removed folders, items moving elsewhere), so that moving the folder aside hides
   * nothing of the user's.
   */
  emptiesOut(folderPath: string): boolean {
    const prefix = this.key(folderPath) + "/"
    const here = this.key(this.forward(folderPath))
    for (const k of this.disk.keys()) {
      if (!k.startsWith(prefix) || this.vacated.has(k)) continue
      const entry = this.entriesByKey.get(k)
      if (entry === undefined || entry.written === null) return false
      if (this.removedFolders.has(entry.remoteId)) continue
      // In scope, so placed elsewhere (a removed folder holds nothing placed) and moved out
      // when its turn comes; one already handled must already be out.
      if (!this.desiredById.has(entry.remoteId)) return false
      if (this.processed.has(entry.remoteId) && isWithinPath(this.key(this.forward(entry.path)), here)) return false
    }
    return true
  }

  rename(
    from: string,
    to: string,
    remoteId: FileId,
    type: ItemType,
    item: RemoteItem | null,
    expected: LocalStat,
    reason: string
  ): void {
    this.structure.push({ _tag: "Rename", from, to, remoteId, type, item, expected, reason })
    this.renames.push({ from, to, fromKey: this.key(from), toKey: this.key(to) })
  }

  conflictCopy(path: string, remoteId: FileId, expected: LocalStat, reason: string): void {
    let n = 1
    let to = conflictPath(path, this.date, n)
    while (this.occupant(to, remoteId)._tag !== "Free") to = conflictPath(path, this.date, ++n)
    this.claimed.add(this.key(to))
    this.structure.push({ _tag: "ConflictCopy", from: path, to, remoteId, expected, reason })
  }

  markDeleted(path: string, remoteId: FileId, reason: string): void {
    this.structure.push({ _tag: "MarkLocallyDeleted", path, remoteId, reason })
  }

  skip(code: SkipCode, path: string | null, remoteId: FileId, reason: string): void {
    this.skips.push({ _tag: "Skip", code, path, remoteId, reason })
  }

  skipFiltered(item: RemoteItem, path: string, filtered: FilterReason): void {
    const code: SkipCode = filtered === "too_big" ? "too_big" : "filtered"
    this.skip(code, path, item.id, FILTER_REASONS[filtered])
  }
}

const FILTER_REASONS: Readonly<Record<FilterReason, string>> = {
  folder_not_selected: "outside the folders selected by mirror.folders",
  kind: "kind not selected by mirror.kinds",
  excluded: "excluded by mirror.exclude",
  not_included: "not matched by mirror.include",
  too_big: "larger than mirror.max_file_size"
}

const sameVersion = (entry: LocalEntry, item: RemoteItem): boolean => {
  const now = remoteVersionOf(item)
  return (
    entry.remote.size === now.size &&
    entry.remote.updatedAt === now.updatedAt &&
    entry.remote.name === now.name &&
    entry.remote.parentId === now.parentId
  )
}

const depth = (path: string): number => path.split("/").length
