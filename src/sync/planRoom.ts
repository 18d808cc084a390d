/**
 * Taking a place in the namespace: a new folder or download takes its path, a moved item
 * is renamed there, if the path is free or can be freed. An entry in the way that moves on
 * later in this pass (swaps, a name passed on) or a removed folder that empties out waits
 * in `.dlsync/moving/` meanwhile; anything else in the way is left alone and the item skipped.
 */
import type { LocalStat } from "../domain/LocalEntry.ts"
import type { ItemType, RemoteItem } from "../domain/RemoteItem.ts"
import { idTag } from "./names.ts"
import { describeOccupant, isWithinPath, type Occupant } from "./namespace.ts"
import { MOVING_DIR, type PlanState } from "./planState.ts"

/** Whether the place of `occupant` is free, or freed by staging the entry that stands there. */
export const makeRoom = (p: PlanState, occupant: Occupant): boolean =>
  occupant._tag === "Free" || (occupant._tag === "Entry" && stageOccupant(p, occupant))

export const createFolder = (p: PlanState, item: RemoteItem, desired: string, reason: string): void => {
  const occupant = p.occupant(desired, item.id)
  if (makeRoom(p, occupant)) {
    p.structure.push({ _tag: "Mkdir", path: desired, item, reason })
    p.claimed.add(p.key(desired))
    return
  }
  if (occupant._tag === "Foreign" && occupant.stat.type === "folder") {
    p.structure.push({ _tag: "Adopt", path: desired, item, stat: occupant.stat, reason: "folder already there" })
    return
  }
  p.skip("occupied", desired, item.id, describeOccupant(occupant))
  p.blocked.set(item.id, "blocked")
}

export const download = (p: PlanState, item: RemoteItem, desired: string, reason: string): void => {
  const occupant = p.occupant(desired, item.id)
  if (makeRoom(p, occupant)) {
    p.downloads.push({ _tag: "Download", path: desired, item, replace: null, reason })
    p.claimed.add(p.key(desired))
  } else p.skip("occupied", desired, item.id, describeOccupant(occupant))
}

/** Renames `current` to `desired` if the place is free (or can be freed); else skips. */
export const move = (
  p: PlanState,
  original: string,
  desired: string,
  item: RemoteItem,
  type: ItemType,
  stat: LocalStat
): boolean => {
  const current = p.forward(original)
  if (isWithinPath(p.key(desired), p.key(current)) && p.key(desired) !== p.key(current)) {
    p.skip("occupied", current, item.id, `cannot move ${current} into itself (${desired})`)
    return false
  }
  const occupant = p.occupant(desired, item.id)
  if (!makeRoom(p, occupant)) {
    p.skip("occupied", current, item.id, `cannot move to ${desired}: ${describeOccupant(occupant)}`)
    return false
  }
  // Staging the occupant may have carried this item along (it was inside it).
  p.rename(p.forward(original), desired, item.id, type, item, stat, "renamed or moved on the remote")
  return true
}

/**
 * Moves an entry that stands in the way into `.dlsync/moving/` when it is itself going
 * elsewhere later in this pass (swaps, a name passed on). Returns false when it stays.
 */
const stageOccupant = (p: PlanState, occupant: Extract<Occupant, { _tag: "Entry" }>): boolean => {
  const { entry, stat, current } = occupant
  const desired = p.desiredById.get(entry.remoteId)
  const movesOn = desired !== undefined && !p.processed.has(entry.remoteId) && p.key(desired) !== p.key(current)
  if (!movesOn && !(p.removedFolders.has(entry.remoteId) && emptiesOut(p, entry.path))) return false
  const staging = `${MOVING_DIR}/${idTag(entry.remoteId, 16)}`
  p.rename(current, staging, entry.remoteId, entry.type, null, stat, "making room; moved on below")
  return true
}

/**
 * Whether everything below a removed folder is ours and leaves it in this pass (removed
 * files, removed folders, items moving elsewhere), so that moving the folder aside hides
 * nothing of the user's.
 */
const emptiesOut = (p: PlanState, folderPath: string): boolean => {
  const prefix = p.key(folderPath) + "/"
  const here = p.key(p.forward(folderPath))
  for (const k of p.disk.keys()) {
    if (!k.startsWith(prefix) || p.vacated.has(k)) continue
    const entry = p.entriesByKey.get(k)
    if (entry === undefined || entry.written === null) return false
    if (p.removedFolders.has(entry.remoteId)) continue
    // In scope, so placed elsewhere (a removed folder holds nothing placed) and moved out
    // when its turn comes; one already handled must already be out.
    if (!p.desiredById.has(entry.remoteId)) return false
    if (p.processed.has(entry.remoteId) && isWithinPath(p.key(p.forward(entry.path)), here)) return false
  }
  return true
}
