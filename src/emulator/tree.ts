/**
 * One user's files and folders, with the change log behind GET /files/changes.
 *
 * Invariants:
 * - Every mutation of a visible field gives the item a new `seq` (strictly increasing per
 *   tree) and a new `updatedAt` (strictly increasing across the emulator), and appends
 *   `(seq, id)` to the change log (changeLog.ts).
 * - Adding an item to, or removing one from, a folder also touches that folder (feed rule 5).
 * - A removed item leaves a tombstone `(id, parentId, seq)`; removing a folder removes its
 *   descendants too, each with its own tombstone.
 */
import { type Change, ChangeLog, type ChangePage } from "./changeLog.ts"
import type { EmulatorClock } from "./clock.ts"
import {
  compareIds,
  type DeleteOutcome,
  type Item,
  type ItemPatch,
  type NewItem,
  newItem,
  type Tombstone,
  TreeError
} from "./item.ts"

export class FileTree {
  readonly #clock: EmulatorClock
  readonly #newId: () => string
  readonly #onRemoved: (ids: ReadonlyArray<string>) => void
  readonly #items = new Map<string, Item>()
  readonly #children = new Map<string, Set<string>>()
  readonly #byDownload = new Map<string, Set<string>>()
  readonly #tombstones = new Map<string, Tombstone>()
  readonly #log = new ChangeLog()
  #seq = 0
  #structureVersion = 0
  #sortedIds: Array<string> | undefined
  #nextExpiry = Number.POSITIVE_INFINITY
  #byUpdate: Array<Item> | undefined
  #byUpdateSeq = -1

  constructor(clock: EmulatorClock, newId: () => string, onRemoved: (ids: ReadonlyArray<string>) => void) {
    this.#clock = clock
    this.#newId = newId
    this.#onRemoved = onRemoved
  }

  get size(): number {
    return this.#items.size
  }

  /** The latest seq; a cursor at this seq has seen everything. */
  get seq(): number {
    return this.#seq
  }

  /** Changes whenever an item is added or removed (listing caches key on it). */
  get structureVersion(): number {
    return this.#structureVersion
  }

  get(id: string): Item | undefined {
    return this.#items.get(id)
  }

  values(): IterableIterator<Item> {
    return this.#items.values()
  }

  /** Direct children of a folder (null = account root), in no particular order. */
  childIds(parentId: string | null): ReadonlySet<string> {
    return this.#children.get(parentId ?? "") ?? EMPTY
  }

  downloadItemIds(downloadId: string): ReadonlySet<string> {
    return this.#byDownload.get(downloadId) ?? EMPTY
  }

  /** Every live id, sorted ascending by code unit (cached until the next add or remove). */
  sortedIds(): ReadonlyArray<string> {
    if (this.#sortedIds === undefined) this.#sortedIds = [...this.#items.keys()].sort(compareIds)
    return this.#sortedIds
  }

  /**
   * Every live item by `updatedAt` ascending (cached until the next change). Within one
   * tree `updatedAt` and `seq` rise together, so this is the current log entries in order.
   */
  itemsByUpdate(): ReadonlyArray<Item> {
    if (this.#byUpdate === undefined || this.#byUpdateSeq !== this.#seq) {
      this.#compactLog()
      const items: Array<Item> = []
      this.#log.scanAfter(0, (seq, id) => {
        const item = this.#items.get(id)
        if (item !== undefined && item.seq === seq) items.push(item)
        return true
      })
      this.#byUpdate = items
      this.#byUpdateSeq = this.#seq
    }
    return this.#byUpdate
  }

  /** The folder path of an item's parent, "" at the root ("a/b" for an item in /a/b). */
  pathOf(id: string): ReadonlyArray<string> {
    const names: Array<string> = []
    let current = this.#items.get(id)
    while (current) {
      names.push(current.name)
      current = current.parentId === null ? undefined : this.#items.get(current.parentId)
    }
    return names.reverse()
  }

  /** Descendants of a folder, depth first (not including the folder itself). */
  descendants(id: string): Array<Item> {
    const out: Array<Item> = []
    const walk = (folder: string) => {
      for (const childId of this.childIds(folder)) {
        const child = this.#items.get(childId)
        if (!child) continue
        out.push(child)
        if (child.type === "folder") walk(child.id)
      }
    }
    walk(id)
    return out
  }

  /** Adds an item under an existing folder (or the root) and touches that folder. */
  add(spec: NewItem): Item {
    this.#requireFolder(spec.parentId)
    const now = this.#clock.tick()
    const item = newItem(spec, this.#newId(), now)
    this.#items.set(item.id, item)
    this.#nextExpiry = Math.min(this.#nextExpiry, item.expiresAt)
    this.#link(item)
    this.#record(item, now)
    this.#touch(spec.parentId)
    this.#structureChanged()
    return item
  }

  /** Edits fields of a live item; renames and edits count as changes (rule 3). */
  update(id: string, patch: ItemPatch): Item {
    const item = this.#require(id)
    if (patch.name !== undefined) item.name = patch.name
    if (patch.locked !== undefined) item.locked = patch.locked
    if (patch.expiresAt !== undefined) {
      item.expiresAt = patch.expiresAt
      this.#nextExpiry = Math.min(this.#nextExpiry, item.expiresAt)
    }
    if (patch.downloadId !== undefined && patch.downloadId !== item.downloadId) {
      this.#unlinkDownload(item)
      item.downloadId = patch.downloadId
      this.#linkDownload(item)
    }
    if (item.type === "file") {
      if (patch.kind !== undefined) item.kind = patch.kind
      if (patch.mimeType !== undefined) item.mimeType = patch.mimeType
      if (patch.media !== undefined) item.media = patch.media
      if (patch.poster !== undefined) item.poster = patch.poster
    }
    const now = this.#clock.tick()
    if (
      item.type === "file" &&
      (patch.touchContent === true || (patch.sizeBytes !== undefined && patch.sizeBytes !== item.sizeBytes))
    ) {
      if (patch.sizeBytes !== undefined) item.sizeBytes = patch.sizeBytes
      item.contentVersion += 1
      item.contentModifiedAt = now
    }
    this.#record(item, now)
    return item
  }

  /** Moves an item into another folder (or the root); both folders are touched. */
  move(id: string, parentId: string | null): Item {
    const item = this.#require(id)
    this.#requireFolder(parentId)
    if (parentId !== null && (parentId === id || this.#isAncestor(id, parentId))) {
      throw new TreeError("cycle", `cannot move ${id} into itself`)
    }
    if (item.parentId === parentId) return item
    const from = item.parentId
    this.#unlinkParent(item)
    item.parentId = parentId
    this.#link(item)
    this.#record(item, this.#clock.tick())
    this.#touch(from)
    this.#touch(parentId)
    return item
  }

  /** Marks a folder as changed (a new updated_at and a feed entry) without editing it. */
  touch(id: string): void {
    this.#require(id)
    this.#touch(id)
  }

  /**
   * Deletes items with their descendants. An item that is, or contains, a locked item is
   * refused as a whole. Ids inside an already deleted folder of the same request count as
   * deleted (the spec: "deleted or already scheduled").
   */
  remove(ids: ReadonlyArray<string>): Array<{ readonly id: string; readonly result: DeleteOutcome }> {
    const removed: Array<string> = []
    const removedSet = new Set<string>()
    const results = ids.map((id) => {
      if (removedSet.has(id)) return { id, result: "deleted" as const }
      const item = this.#items.get(id)
      // Deleting again is idempotent: an item this account already deleted counts as deleted.
      if (!item) return { id, result: this.#tombstones.has(id) ? ("deleted" as const) : ("not_found" as const) }
      const subtree = item.type === "folder" ? [item, ...this.descendants(id)] : [item]
      if (subtree.some((entry) => entry.locked)) return { id, result: "resource_locked" as const }
      this.#dropSubtree(item, subtree, removed, removedSet)
      return { id, result: "deleted" as const }
    })
    this.#afterRemoval(removed)
    return results
  }

  /**
   * Expiry cleanup: removes every item whose `expiresAt` has passed, with its descendants,
   * locked or not. O(1) until the earliest expiry is due. Returns the removed ids.
   */
  expireDue(nowMicros: number): ReadonlyArray<string> {
    if (nowMicros < this.#nextExpiry) return []
    const removed: Array<string> = []
    const removedSet = new Set<string>()
    for (const item of [...this.#items.values()]) {
      if (item.expiresAt > nowMicros || removedSet.has(item.id)) continue
      const subtree = item.type === "folder" ? [item, ...this.descendants(item.id)] : [item]
      this.#dropSubtree(item, subtree, removed, removedSet)
    }
    this.#nextExpiry = Number.POSITIVE_INFINITY
    for (const item of this.#items.values()) this.#nextExpiry = Math.min(this.#nextExpiry, item.expiresAt)
    this.#afterRemoval(removed)
    return removed
  }

  #dropSubtree(item: Item, subtree: Array<Item>, removed: Array<string>, removedSet: Set<string>): void {
    // Children first, so every tombstone names a parent that existed when it was written.
    for (const entry of subtree.reverse()) {
      this.#drop(entry)
      removed.push(entry.id)
      removedSet.add(entry.id)
    }
    if (item.parentId !== null && !removedSet.has(item.parentId)) this.#touch(item.parentId)
  }

  #afterRemoval(removed: ReadonlyArray<string>): void {
    if (removed.length === 0) return
    this.#structureChanged()
    this.#onRemoved(removed)
  }

  /**
   * Current log entries after `after`, at most `limit` of them passing `filter` (which
   * turns a live item into an emitted change, a tombstone, or nothing). Tombstones with
   * seq ≤ `tombstonesAfter` are skipped: a first sync lists what exists, not what was.
   */
  changesAfter(
    after: number,
    limit: number,
    tombstonesAfter: number,
    emit: (item: Item) => "item" | "tombstone" = () => "item"
  ): ChangePage {
    this.#compactLog()
    const changes: Array<Change> = []
    let nextAfter = after
    let hasMore = false
    this.#log.scanAfter(after, (seq, id) => {
      const change = this.#changeAt(seq, id, tombstonesAfter, emit)
      if (change === undefined) return true
      if (changes.length === limit) {
        hasMore = true
        return false
      }
      changes.push(change)
      nextAfter = seq
      return true
    })
    return hasMore ? { changes, nextAfter, hasMore } : { changes, nextAfter: Math.max(nextAfter, this.#seq), hasMore }
  }

  #changeAt(
    seq: number,
    id: string,
    tombstonesAfter: number,
    emit: (item: Item) => "item" | "tombstone"
  ): Change | undefined {
    const item = this.#items.get(id)
    if (item !== undefined) {
      if (item.seq !== seq) return undefined
      if (emit(item) === "item") return { deleted: false, item }
      if (seq <= tombstonesAfter) return undefined
      return { deleted: true, tombstone: { id, parentId: item.parentId, seq } }
    }
    const tombstone = this.#tombstones.get(id)
    if (tombstone === undefined || tombstone.seq !== seq || seq <= tombstonesAfter) return undefined
    return { deleted: true, tombstone }
  }

  #record(item: Item, now: number): void {
    item.seq = ++this.#seq
    item.updatedAt = now
    this.#log.append(item.seq, item.id)
  }

  #touch(folderId: string | null): void {
    if (folderId === null) return
    const folder = this.#items.get(folderId)
    if (folder) this.#record(folder, this.#clock.tick())
  }

  #drop(item: Item): void {
    this.#items.delete(item.id)
    this.#unlinkParent(item)
    this.#unlinkDownload(item)
    this.#children.delete(item.id)
    const seq = ++this.#seq
    this.#tombstones.set(item.id, { id: item.id, parentId: item.parentId, seq })
    this.#log.append(seq, item.id)
  }

  #link(item: Item): void {
    addToSet(this.#children, item.parentId ?? "", item.id)
    this.#linkDownload(item)
  }

  #linkDownload(item: Item): void {
    if (item.downloadId !== null) addToSet(this.#byDownload, item.downloadId, item.id)
  }

  #unlinkParent(item: Item): void {
    this.#children.get(item.parentId ?? "")?.delete(item.id)
  }

  #unlinkDownload(item: Item): void {
    if (item.downloadId !== null) this.#byDownload.get(item.downloadId)?.delete(item.id)
  }

  #require(id: string): Item {
    const item = this.#items.get(id)
    if (!item) throw new TreeError("not_found", `no item ${id}`)
    return item
  }

  #requireFolder(id: string | null): void {
    if (id === null) return
    const folder = this.#require(id)
    if (folder.type !== "folder") throw new TreeError("not_a_folder", `${id} is not a folder`)
  }

  #isAncestor(ancestorId: string, id: string): boolean {
    let current = this.#items.get(id)
    while (current && current.parentId !== null) {
      if (current.parentId === ancestorId) return true
      current = this.#items.get(current.parentId)
    }
    return false
  }

  #structureChanged(): void {
    this.#structureVersion++
    this.#sortedIds = undefined
  }

  #compactLog(): void {
    this.#log.compact(this.#items.size + this.#tombstones.size, (seq, id) => {
      const owner = this.#items.get(id) ?? this.#tombstones.get(id)
      return owner?.seq === seq
    })
  }
}

const EMPTY: ReadonlySet<string> = new Set()

/** Adds `id` to the set under `key`, creating the set on first use. */
const addToSet = (sets: Map<string, Set<string>>, key: string, id: string): void => {
  const set = sets.get(key)
  if (set === undefined) sets.set(key, new Set([id]))
  else set.add(id)
}
