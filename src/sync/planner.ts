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
 *
 * The phases, each in a file of its own, share one `PlanState` (planState.ts: the simulated
 * namespace and the action lists): the remote deletions (planRemovals.ts), then the remote
 * tree parents first, each folder (planFolder.ts) and file (planFile.ts) taking its place
 * (planRoom.ts), then the folder removals.
 */
import type { RemoteItem } from "../domain/RemoteItem.ts"
import { planFile } from "./planFile.ts"
import { planFolder } from "./planFolder.ts"
import { planRemovals, removeFolders } from "./planRemovals.ts"
import { PlanState } from "./planState.ts"
import type { Action, PlanInput, SkipCode } from "./planTypes.ts"
import { type FilterReason, mapTree } from "./tree.ts"

export {
  DEFAULT_MAX_DELETE_FILES,
  DEFAULT_MAX_DELETE_RATIO,
  deleteLimitText,
  exceedsDeleteLimit
} from "./planRemovals.ts"
export { conflictPath, MOVING_DIR } from "./planState.ts"
export type { Action, ActionTag, PlanConfig, PlanInput, SkipCode } from "./planTypes.ts"

export const plan = (input: PlanInput): ReadonlyArray<Action> => {
  const p = new PlanState(input)
  const tree = mapTree(input.remote, input.config)
  const remoteIds = new Set<string>()
  for (const placed of tree.placed) {
    remoteIds.add(placed.item.id)
    if (placed.filtered === null) p.desiredById.set(placed.item.id, placed.path)
  }
  for (const problem of tree.problems) {
    remoteIds.add(problem.item.id)
    const entry = p.entriesById.get(problem.item.id)
    const code = problem.problem === "too_deep" ? "too_deep" : "broken_parent"
    p.skip(code, entry?.path ?? null, problem.item.id, `${problem.problem}: ${problem.detail}`)
  }
  const folderRemovals = planRemovals(p, remoteIds)
  for (const placed of tree.placed) {
    if (placed.filtered !== null) skipFiltered(p, placed.item, placed.path, placed.filtered)
    else if (placed.item.type === "folder") planFolder(p, placed.item, placed.path)
    else planFile(p, placed.item, placed.path)
    p.processed.add(placed.item.id)
  }
  removeFolders(p, folderRemovals)
  return p.actions()
}

const skipFiltered = (p: PlanState, item: RemoteItem, path: string, filtered: FilterReason): void => {
  const code: SkipCode = filtered === "too_big" ? "too_big" : "filtered"
  p.skip(code, path, item.id, FILTER_REASONS[filtered])
}

const FILTER_REASONS: Readonly<Record<FilterReason, string>> = {
  folder_not_selected: "outside the folders selected by mirror.folders",
  kind: "kind not selected by mirror.kinds",
  excluded: "excluded by mirror.exclude",
  not_included: "not matched by mirror.include",
  too_big: "larger than mirror.max_file_size"
}
