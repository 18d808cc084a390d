/**
 * The planner's walk over a remote folder: created, adopted, moved, marked deleted locally,
 * or blocked; a folder that is blocked or deleted locally takes its contents with it
 * (`inheritBlock`), and an entry out of sight waits (`waitForHidden`).
 */
import type { LocalEntry } from "../domain/LocalEntry.ts"
import type { RemoteItem } from "../domain/RemoteItem.ts"
import { describeHidden } from "./namespace.ts"
import { createFolder, move } from "./planRoom.ts"
import type { PlanState } from "./planState.ts"

export const planFolder = (p: PlanState, item: RemoteItem, desired: string): void => {
  if (inheritBlock(p, item)) return
  const entry = p.entriesById.get(item.id)
  const respect = p.input.config.onLocalDelete === "respect" && !p.input.adoptOnly
  if (entry !== undefined && entry.written !== null) {
    const stat = p.disk.get(p.key(entry.path))
    const current = p.forward(entry.path)
    if (stat === undefined && waitForHidden(p, entry, item)) {
      p.blocked.set(item.id, "blocked")
      return
    }
    if (stat === undefined) {
      if (respect) {
        p.markDeleted(current, item.id, "folder deleted locally; kept deleted (on_local_delete = respect)")
        p.blocked.set(item.id, "locally_deleted")
      } else createFolder(p, item, desired, "folder deleted locally; recreated (on_local_delete = redownload)")
      return
    }
    if (stat.type !== "folder") {
      p.skip("occupied", current, item.id, "our folder was replaced by something else: left alone")
      p.blocked.set(item.id, "blocked")
      return
    }
    if (current !== desired && !move(p, entry.path, desired, item, "folder", stat)) {
      p.blocked.set(item.id, "blocked")
    }
    return
  }
  if (respect && p.markers.has(item.id)) {
    p.skip("locally_deleted", desired, item.id, "deleted locally; kept deleted (dlsync restore brings it back)")
    p.blocked.set(item.id, "locally_deleted")
    return
  }
  createFolder(p, item, desired, "new on the remote")
}

/** Skips an entry whose path is out of sight (see `hiddenBy`) rather than take it as deleted locally. */
export const waitForHidden = (p: PlanState, entry: LocalEntry, item: RemoteItem): boolean => {
  const hidden = p.hiddenBy(entry.path)
  if (hidden === null) return false
  p.skip("parent_blocked", entry.path, item.id, `out of sight: waits until ${describeHidden(hidden)}`)
  return true
}

/** Children of a blocked folder are skipped (or marked deleted along with it). */
export const inheritBlock = (p: PlanState, item: RemoteItem): boolean => {
  const block = item.parentId === null ? undefined : p.blocked.get(item.parentId)
  if (block === undefined) return false
  if (item.type === "folder") p.blocked.set(item.id, block)
  const entry = p.entriesById.get(item.id)
  if (block === "locally_deleted") {
    if (entry !== undefined && entry.written !== null) {
      p.markDeleted(p.forward(entry.path), item.id, "inside a folder deleted locally; kept deleted")
    } else p.skip("locally_deleted", null, item.id, "inside a folder deleted locally")
  } else p.skip("parent_blocked", entry?.path ?? null, item.id, "its folder could not be placed")
  return true
}
