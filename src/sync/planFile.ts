/**
 * The planner's walk over a remote file: downloaded, replaced by a new version, moved,
 * refreshed, adopted, kept as a conflict copy, marked deleted locally, or skipped.
 */
import { hasNewContent, isIntact, type LocalEntry, looksLanded, remoteVersionOf } from "../domain/LocalEntry.ts"
import type { RemoteItem } from "../domain/RemoteItem.ts"
import { describeOccupant } from "./namespace.ts"
import { inheritBlock, waitForHidden } from "./planFolder.ts"
import { download, makeRoom, move } from "./planRoom.ts"
import type { PlanState } from "./planState.ts"

export const planFile = (p: PlanState, item: RemoteItem, desired: string): void => {
  if (inheritBlock(p, item)) return
  const entry = p.entriesById.get(item.id)
  const { adoptOnly } = p.input
  const respect = p.input.config.onLocalDelete === "respect" && !adoptOnly
  if (entry !== undefined && entry.written !== null) {
    const stat = p.disk.get(p.key(entry.path))
    const current = p.forward(entry.path)
    if (stat === undefined && waitForHidden(p, entry, item)) return
    if (stat === undefined) {
      if (respect) p.markDeleted(current, item.id, "deleted locally; kept deleted (on_local_delete = respect)")
      else if (item.locked) p.skip("locked", desired, item.id, "deleted locally; locked on the remote")
      else download(p, item, desired, "deleted locally; fetched again (on_local_delete = redownload)")
      return
    }
    if (stat.type !== "file") {
      p.skip("occupied", current, item.id, `our file was replaced by a ${stat.type}: left alone`)
      return
    }
    const intact = isIntact(stat, entry.written)
    const newContent = hasNewContent(entry.remote, item)
    if (current !== desired && !move(p, entry.path, desired, item, "file", stat)) return
    const moved = current !== desired
    if (!newContent) {
      if (!intact) p.skip("modified_locally", desired, item.id, "changed locally; the remote has no new version")
      else if (!moved && !sameVersion(entry, item)) {
        p.structure.push({
          _tag: "Refresh",
          path: desired,
          item,
          reason: "remote details changed, not its content"
        })
      }
      return
    }
    if (item.locked) {
      p.skip("locked", desired, item.id, "a new version is locked on the remote; the current copy stays")
      return
    }
    if (intact) {
      p.downloads.push({
        _tag: "Download",
        path: desired,
        item,
        replace: stat,
        reason: "new version on the remote"
      })
      return
    }
    p.conflictCopy(desired, item.id, stat, "changed locally while the remote has a new version")
    p.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason: "new version on the remote" })
    return
  }
  if (respect && p.markers.has(item.id)) {
    p.skip("locally_deleted", desired, item.id, "deleted locally; kept deleted (dlsync restore brings it back)")
    return
  }
  if (item.locked) {
    p.skip("locked", desired, item.id, "locked on the remote; fetched once unlocked")
    return
  }
  const occupant = p.occupant(desired, item.id)
  if (makeRoom(p, occupant)) {
    p.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason: "new on the remote" })
    p.claimed.add(p.key(desired))
    return
  }
  if (occupant._tag === "Foreign" && adoptOnly && occupant.stat.type === "file") {
    if (looksLanded(occupant.stat, item)) {
      p.structure.push({
        _tag: "Adopt",
        path: desired,
        item,
        stat: occupant.stat,
        reason: "adopt-only: same path, size and the mtime dlsync sets"
      })
    } else {
      const differs = occupant.stat.size === item.size ? "mtime" : "size"
      p.conflictCopy(desired, item.id, occupant.stat, `adopt-only: same path, different ${differs}`)
      p.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason: "adopt-only: fetched" })
    }
    return
  }
  p.skip("occupied", desired, item.id, describeOccupant(occupant))
}

/** Whether the entry records the remote item's version as it is now (size, date, name, folder). */
const sameVersion = (entry: LocalEntry, item: RemoteItem): boolean => {
  const now = remoteVersionOf(item)
  return (
    entry.remote.size === now.size &&
    entry.remote.updatedAt === now.updatedAt &&
    entry.remote.name === now.name &&
    entry.remote.parentId === now.parentId
  )
}
