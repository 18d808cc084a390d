/** Builders for remote items and local entries shared by the sync and store tests. */
import { FileId } from "../../src/domain/FileId.ts"
import type { LocalEntry, LocalStat } from "../../src/domain/LocalEntry.ts"
import { remoteVersionOf } from "../../src/domain/LocalEntry.ts"
import type { RemoteItem } from "../../src/domain/RemoteItem.ts"
import { maxPathBytesUnder, type TreeConfig } from "../../src/sync/tree.ts"

/** A remote id from a test's readable text. */
export const fid = (id: string): FileId => FileId.make(id)

export const file = (id: string, name: string, parentId: string | null = null, extra: Partial<RemoteItem> = {}) =>
  item({
    id: fid(id),
    name,
    parentId: nullableFid(parentId),
    type: "file",
    kind: "video",
    size: 100,
    mimeType: "video/mp4",
    ...extra
  })

export const folder = (id: string, name: string, parentId: string | null = null, extra: Partial<RemoteItem> = {}) =>
  item({
    id: fid(id),
    name,
    parentId: nullableFid(parentId),
    type: "folder",
    kind: "folder",
    size: 0,
    mimeType: "inode/directory",
    ...extra
  })

const nullableFid = (id: string | null): FileId | null => (id === null ? null : fid(id))

export const item = (fields: Partial<RemoteItem> & Pick<RemoteItem, "id" | "name">): RemoteItem => ({
  parentId: null,
  type: "file",
  kind: "other",
  size: 0,
  mimeType: "application/octet-stream",
  locked: false,
  updatedAt: "2026-01-01T00:00:00Z",
  createdAt: "2026-01-01T00:00:00Z",
  expiresAt: null,
  ...fields
})

/**
 * The lstat of a file dlsync wrote for `item`: its updated_at as mtime, as the transfer engine
 * sets it (ino derived from the id so tests stay readable).
 */
export const statOf = (remote: RemoteItem, ino = inoOf(remote.id)): LocalStat => ({
  type: remote.type === "folder" ? "folder" : "file",
  size: remote.type === "folder" ? 0 : remote.size,
  mtimeNs: BigInt(Date.parse(remote.updatedAt)) * 1_000_000n,
  ino
})

/** A synced entry at `path` for `remote`, written with `statOf(remote)`. */
export const entryOf = (remote: RemoteItem, path: string): LocalEntry => {
  const stat = statOf(remote)
  return {
    path,
    remoteId: remote.id,
    type: remote.type,
    written: { size: stat.size, mtimeNs: stat.mtimeNs, ino: stat.ino },
    remote: remoteVersionOf(remote),
    state: "synced",
    attempts: 0,
    lastError: null
  }
}

export const inoOf = (id: string): bigint => {
  let h = 7n
  for (const c of id) h = (h * 31n + BigInt(c.codePointAt(0) ?? 0)) % 1_000_000_007n
  return h + 1n
}

/** Mirror everything, case-sensitive, non-portable names. */
export const ALL: TreeConfig = {
  folders: [],
  kinds: [],
  include: [],
  exclude: [],
  maxFileSize: null,
  portableNames: false,
  caseInsensitive: false,
  maxPathBytes: maxPathBytesUnder("/mirror/root")
}
