/**
 * The mirror engine's vocabulary, local side: what dlsync wrote at a path (a local entry),
 * from which remote version, and what a fresh lstat sees there; the rules that compare them.
 */
import { Schema } from "effect"
import { FileId } from "./FileId.ts"
import { ItemType, type RemoteItem } from "./RemoteItem.ts"

/** What a fresh lstat saw at a path (never following a symlink). */
export interface LocalStat {
  readonly type: "file" | "folder" | "symlink" | "other"
  readonly size: number
  readonly mtimeNs: bigint
  readonly ino: bigint
}

/** What dlsync left at a path right after writing it (read back with lstat). */
export const WrittenStat = Schema.Struct({
  size: Schema.Int,
  mtimeNs: Schema.BigInt,
  ino: Schema.BigInt
})
export type WrittenStat = typeof WrittenStat.Type

/** The remote fields a local entry was made from; they tell a rename from a new version. */
export const RemoteVersion = Schema.Struct({
  size: Schema.Int,
  updatedAt: Schema.String,
  name: Schema.String,
  parentId: Schema.NullOr(FileId)
})
export type RemoteVersion = typeof RemoteVersion.Type

/**
 * - synced: the path holds what dlsync wrote (`written`), a copy of `remote`.
 * - pending: a download is queued or running for this path.
 * - failed: the last attempt failed (`lastError`); `written` still describes an older copy
 *   when there is one.
 */
export const LocalEntryState = Schema.Literals(["synced", "pending", "failed"])
export type LocalEntryState = typeof LocalEntryState.Type

/** A path the store says dlsync wrote, and from which remote item. */
export const LocalEntry = Schema.Struct({
  /** Relative to the mirror root, `/`-separated. */
  path: Schema.String,
  remoteId: FileId,
  type: ItemType,
  /** Null when nothing has been written yet (a download that never completed). */
  written: Schema.NullOr(WrittenStat),
  remote: RemoteVersion,
  state: LocalEntryState,
  attempts: Schema.Int,
  lastError: Schema.NullOr(Schema.String)
})
export type LocalEntry = typeof LocalEntry.Type

/** A file or folder the user deleted and asked, by on_local_delete = respect, to stay deleted. */
export const LocallyDeleted = Schema.Struct({
  remoteId: FileId,
  path: Schema.String
})
export type LocallyDeleted = typeof LocallyDeleted.Type

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
