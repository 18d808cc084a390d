/**
 * The mirror engine's vocabulary: a remote item (one file or folder of the account, as the
 * feed last reported it) and a remote change (one record of a feed page).
 *
 * These are dlsync's own types, independent of the API client's wire schemas: the feed
 * consumer maps each API record to a `RemoteChange`. Unknown kinds pass through as strings
 * (the spec's rule: clients accept unknown enum values).
 */
import { Schema } from "effect"

export const ItemType = Schema.Literals(["file", "folder"])
export type ItemType = typeof ItemType.Type

export const RemoteItem = Schema.Struct({
  id: Schema.String.pipe(Schema.check(Schema.isMinLength(1))),
  parentId: Schema.NullOr(Schema.String),
  name: Schema.String,
  type: ItemType,
  kind: Schema.String,
  size: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  mimeType: Schema.String,
  locked: Schema.Boolean,
  updatedAt: Schema.String,
  createdAt: Schema.String,
  expiresAt: Schema.NullOr(Schema.String)
})
export type RemoteItem = typeof RemoteItem.Type

/** One record of a feed page: an item as it now is, or the news that it is gone. */
export type RemoteChange =
  | { readonly _tag: "Upsert"; readonly item: RemoteItem }
  | { readonly _tag: "Delete"; readonly id: string }

export const upsert = (item: RemoteItem): RemoteChange => ({ _tag: "Upsert", item })
export const remove = (id: string): RemoteChange => ({ _tag: "Delete", id })

/**
 * The feed's semantics as a pure fold, the reference the Store's SQL must agree with:
 * records apply in order, the last record for an id wins, a delete of an unknown id is
 * harmless. Repeating a record, or re-applying a whole page, leaves the result unchanged.
 */
export const applyChanges = (
  items: ReadonlyMap<string, RemoteItem>,
  changes: Iterable<RemoteChange>
): Map<string, RemoteItem> => {
  const next = new Map(items)
  for (const change of changes) {
    if (change._tag === "Upsert") next.set(change.item.id, change.item)
    else next.delete(change.id)
  }
  return next
}

/** What a fresh lstat saw at a path (never following a symlink). */
export interface LocalStat {
  readonly type: "file" | "folder" | "symlink" | "other"
  readonly size: number
  readonly mtimeNs: bigint
  readonly ino: bigint
}

/** What dlsync left at a path right after writing it (read back with lstat). */
export interface WrittenStat {
  readonly size: number
  readonly mtimeNs: bigint
  readonly ino: bigint
}

/** The remote fields a local entry was made from; they tell a rename from a new version. */
export interface RemoteVersion {
  readonly size: number
  readonly updatedAt: string
  readonly name: string
  readonly parentId: string | null
}

/**
 * - synced: the path holds what dlsync wrote (`written`), a copy of `remote`.
 * - pending: a download is queued or running for this path.
 * - failed: the last attempt failed (`lastError`); `written` still describes an older copy
 *   when there is one.
 */
export type LocalEntryState = "synced" | "pending" | "failed"

/** A path the store says dlsync wrote, and from which remote item. */
export interface LocalEntry {
  /** Relative to the mirror root, `/`-separated. */
  readonly path: string
  readonly remoteId: string
  readonly type: ItemType
  /** Null when nothing has been written yet (a download that never completed). */
  readonly written: WrittenStat | null
  readonly remote: RemoteVersion
  readonly state: LocalEntryState
  readonly attempts: number
  readonly lastError: string | null
}

/** A file or folder the user deleted and asked, by on_local_delete = respect, to stay deleted. */
export interface LocallyDeleted {
  readonly remoteId: string
  readonly path: string
}

export const remoteVersionOf = (item: RemoteItem): RemoteVersion => ({
  size: item.size,
  updatedAt: item.updatedAt,
  name: item.name,
  parentId: item.parentId
})

/**
 * An entry's remote version after its file was renamed or moved to follow `item`: the new
 * name and parent, and — while a new version of the content is still to be fetched — the
 * size and updated_at of the content on disk, so that the next pass still sees it pending
 * (a crash between the rename and the download must not make the old bytes look current).
 */
export const movedVersion = (was: RemoteVersion, item: RemoteItem): RemoteVersion =>
  hasNewContent(was, item) ? { ...was, name: item.name, parentId: item.parentId } : remoteVersionOf(item)

/** Whether a fresh lstat still shows exactly what dlsync wrote. */
export const isIntact = (stat: LocalStat, written: WrittenStat): boolean =>
  stat.type === "file" && stat.size === written.size && stat.mtimeNs === written.mtimeNs && stat.ino === written.ino

/**
 * Whether the remote item carries new content compared with what an entry was made from.
 * The API offers no content hash, so: a new size is new content; a new updated_at is new
 * content unless the name or the parent changed too (a rename or a move bumps updated_at
 * without touching the bytes). Correctness comes before bandwidth: other metadata changes
 * that bump updated_at (lock, media readiness) cost a download, never a stale copy. Known
 * blind spot: a same-size edit arriving together with a rename of the same item is taken
 * for a rename only.
 */
export const hasNewContent = (was: RemoteVersion, item: RemoteItem): boolean =>
  was.size !== item.size ||
  (was.updatedAt !== item.updatedAt && was.name === item.name && was.parentId === item.parentId)

/**
 * How far a landed file's mtime may lie from the remote updated_at dlsync set it to: file
 * systems truncate times to their precision (FAT: 2 s, HFS+: 1 s, exFAT: 10 ms), so it may be
 * up to 2 s earlier; futimes goes through a float of seconds, so a hair off either way (1 ms
 * allowed after). A file the user wrote since has a fresh mtime, later than that.
 */
export const LANDED_MTIME_EARLIER_MS = 2_000
export const LANDED_MTIME_LATER_MS = 1

/**
 * Whether a file is as dlsync lands `item`: the remote size, and the mtime the transfer
 * engine sets on every landed file (the item's updated_at). Without a store this is all that
 * vouches for a file's content: a same-size file the user wrote has another mtime.
 */
export const looksLanded = (stat: LocalStat, item: RemoteItem): boolean => {
  const updatedMs = Date.parse(item.updatedAt)
  if (stat.type !== "file" || stat.size !== item.size || Number.isNaN(updatedMs)) return false
  const drift = stat.mtimeNs - BigInt(updatedMs) * 1_000_000n
  return drift >= BigInt(-LANDED_MTIME_EARLIER_MS) * 1_000_000n && drift <= BigInt(LANDED_MTIME_LATER_MS) * 1_000_000n
}
