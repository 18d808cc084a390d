/**
 * The planner's deletions phase: entries whose remote item is gone are removed (trashed or
 * deleted), forgotten, or wait; files go before the structure, folders after it, deepest
 * first. Nothing is removed unless the listing is complete, none in adopt-only mode, and
 * none beyond the big-delete limit unless allowed (one `HoldDeletes` instead). An item
 * dlsync deleted on the service itself (remote cleanup, `cleanedUp`) is never removed
 * locally: its entry is forgotten, the file stays, and it does not count towards the limit.
 */
import type { LocalEntry, LocalStat } from "../domain/LocalEntry.ts"
import { isIntact } from "../domain/LocalEntry.ts"
import { describeHidden } from "./namespace.ts"
import type { PlanState } from "./planState.ts"

/** The default big-delete rule: hold above 50 files AND above 10 % of the mirror. */
export const DEFAULT_MAX_DELETE_FILES = 50
export const DEFAULT_MAX_DELETE_RATIO = 0.1

/** Whether a pass removing `count` of `mirrored` files exceeds the limit. */
export const exceedsDeleteLimit = (count: number, mirrored: number, maxDelete: number | null): boolean =>
  maxDelete === null
    ? count > DEFAULT_MAX_DELETE_FILES && count > mirrored * DEFAULT_MAX_DELETE_RATIO
    : count > maxDelete

/** Why the entry of a file remote cleanup deleted on the service is forgotten. */
export const CLEANED_UP =
  "deleted on the service by remote cleanup ([cleanup]); the local copy stays, no longer tracked"

/** The big-delete limit in words, for the hold's message and `status`. */
export const deleteLimitText = (maxDelete: number | null): string =>
  maxDelete === null
    ? `more than ${DEFAULT_MAX_DELETE_FILES} files and more than ${DEFAULT_MAX_DELETE_RATIO * 100} % of the mirror`
    : `more than ${maxDelete} files`

/** An entry to remove, with the stat it must still have when it is removed. */
export interface Removal {
  readonly entry: LocalEntry
  readonly stat: LocalStat
}

/** Removals for entries whose remote item is gone; returns the folders to remove after the structure. */
export const planRemovals = (p: PlanState, remoteIds: ReadonlySet<string>): Array<Removal> => {
  const { config, listingComplete, adoptOnly } = p.input
  if (!listingComplete || adoptOnly) return []
  for (const marker of p.input.locallyDeleted) {
    if (!remoteIds.has(marker.remoteId)) {
      p.forgets.push({
        _tag: "Forget",
        what: "marker",
        path: marker.path,
        remoteId: marker.remoteId,
        reason: "deleted on the remote"
      })
    }
  }
  const files: Array<Removal> = []
  const folders: Array<Removal> = []
  for (const entry of p.input.local) {
    if (remoteIds.has(entry.remoteId)) continue
    const stat = p.disk.get(p.key(entry.path))
    const forget = (reason: string) =>
      p.forgets.push({ _tag: "Forget", what: "entry", path: entry.path, remoteId: entry.remoteId, reason })
    // A deletion that cannot be applied now (its path is out of sight behind a symlink, or
    // our folder is replaced) keeps its entry: it is applied once the path is back.
    const wait = (why: string) =>
      p.skip("parent_blocked", entry.path, entry.remoteId, `deleted on the remote; waits until ${why}`)
    if (p.input.cleanedUp?.has(entry.remoteId) === true) forget(CLEANED_UP)
    else if (config.onRemoteDelete === "keep") forget("deleted on the remote; kept (on_remote_delete = keep)")
    else if (entry.written === null) forget("deleted on the remote; nothing left on disk")
    else if (stat === undefined) {
      const hidden = p.hiddenBy(entry.path)
      if (hidden === null) forget("deleted on the remote; nothing left on disk")
      else wait(describeHidden(hidden))
    } else if (entry.type === "folder") {
      if (stat.type === "folder") folders.push({ entry, stat })
      else wait(`${entry.path} is our folder again, or is removed (it is now a ${stat.type})`)
    } else if (isIntact(stat, entry.written)) files.push({ entry, stat })
    else forget("deleted on the remote, but changed locally: kept")
  }
  const mirrored = p.input.local.filter((e) => e.type === "file" && e.written !== null).length
  if (files.length > 0 && !p.input.allowBigDelete && exceedsDeleteLimit(files.length, mirrored, config.maxDelete)) {
    const limit = deleteLimitText(config.maxDelete)
    p.removals.push({
      _tag: "HoldDeletes",
      count: files.length,
      mirrored,
      limit,
      paths: files.map((f) => f.entry.path).sort(),
      reason: `big delete held: ${files.length} of ${mirrored} files would be removed (limit: ${limit})`
    })
    return []
  }
  for (const { entry } of folders) p.removedFolders.add(entry.remoteId)
  for (const { entry, stat } of files) {
    p.vacated.add(p.key(entry.path))
    p.removals.push({
      _tag: config.onRemoteDelete === "trash" ? "Trash" : "Delete",
      path: entry.path,
      remoteId: entry.remoteId,
      expected: stat,
      reason: "deleted on the remote"
    })
  }
  return folders
}

/** The folder removals, deepest first, at the folders' places after this pass's renames. */
export const removeFolders = (p: PlanState, folders: ReadonlyArray<Removal>): void => {
  for (const { entry, stat } of [...folders].sort((a, b) => depth(b.entry.path) - depth(a.entry.path))) {
    p.folderRemovals.push({
      _tag: "RemoveFolder",
      path: p.forward(entry.path),
      remoteId: entry.remoteId,
      expected: stat,
      reason: "deleted on the remote"
    })
  }
}

const depth = (path: string): number => path.split("/").length
