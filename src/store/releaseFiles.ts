/**
 * A release's files as the store knows them: the remote items whose `download_id` is its
 * download (what the feed reported, the one observer of the service's files), each with its
 * path on the service and the local entry the mirror keeps for it. Read-only: the feed writes
 * remote_items, the mirror local_entries.
 *
 * Invariants the queries keep:
 * - A file belongs to exactly the download its row names; a folder belongs to no one (the
 *   service may put several downloads, or the user's own files, in one folder), which is why
 *   `foreignFilesBelow` exists: whoever would treat a folder as one release's asks it first.
 * - Paths are the service's names joined with "/" from the account root; an item whose
 *   parent the store does not hold yet reads from that parent down.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Option, Schema } from "effect"
import { FileId } from "../domain/FileId.ts"
import { LocalEntryState } from "../domain/LocalEntry.ts"
import { decodeCount } from "./columns.ts"

export interface ReleaseFile {
  readonly remoteId: FileId
  readonly size: number
  /** The path on the service, from the account root. */
  readonly remotePath: string
  /** The mirror's entry for the file, when it has placed it. */
  readonly local: {
    readonly path: string
    readonly state: LocalEntryState
    /** The size lstat showed when dlsync wrote it; null until written. */
    readonly writtenSize: number | null
  } | null
}

export interface ReleaseFilesTables {
  readonly releases: {
    /** The files of one service download, by remote path. */
    readonly filesOf: (downloadId: string) => Effect.Effect<ReadonlyArray<ReleaseFile>>
    /** Files at any depth below the folder at `path` (from the account root) of another download or of none. */
    readonly foreignFilesBelow: (path: string, downloadId: string) => Effect.Effect<number>
    /** The id of the item at `path` (from the account root), if the store holds one. */
    readonly itemAt: (path: string) => Effect.Effect<Option.Option<FileId>>
    /** The names of the items directly in the folder at `path` ("" = the account root); none when there is no such folder. */
    readonly namesIn: (path: string) => Effect.Effect<ReadonlyArray<string>>
  }
}

export const makeReleaseFiles = (db: BetterSqlite3.Database): ReleaseFilesTables => {
  const q = {
    filesOf: db.prepare(
      `WITH RECURSIVE up(file_id, node_id, path) AS (
         SELECT id, parent_id, name FROM remote_items WHERE download_id = ? AND type = 'file'
         UNION ALL
         SELECT up.file_id, r.parent_id, r.name || '/' || up.path FROM up JOIN remote_items r ON r.id = up.node_id
       )
       SELECT f.id, f.size_bytes, up.path, l.path AS local_path, l.state AS local_state, l.size_bytes AS written_size
       FROM up JOIN remote_items f ON f.id = up.file_id LEFT JOIN local_entries l ON l.remote_id = f.id
       WHERE up.node_id IS NULL OR NOT EXISTS (SELECT 1 FROM remote_items p WHERE p.id = up.node_id)
       ORDER BY up.path`
    ),
    child: db.prepare("SELECT id FROM remote_items WHERE parent_id = ? AND name = ? LIMIT 1"),
    names: db.prepare("SELECT name FROM remote_items WHERE parent_id = ?"),
    rootNames: db.prepare("SELECT name FROM remote_items WHERE parent_id IS NULL"),
    rootChild: db.prepare("SELECT id FROM remote_items WHERE parent_id IS NULL AND name = ? LIMIT 1"),
    foreignBelow: db.prepare(
      `WITH RECURSIVE below(id) AS (
         SELECT id FROM remote_items WHERE parent_id = ?
         UNION ALL
         SELECT r.id FROM remote_items r JOIN below b ON r.parent_id = b.id
       )
       SELECT count(*) AS n FROM remote_items r JOIN below b ON r.id = b.id
       WHERE r.type = 'file' AND (r.download_id IS NULL OR r.download_id <> ?)`
    )
  }
  const itemAt = (path: string): FileId | undefined => {
    let id: string | undefined
    for (const name of path.split("/").filter((n) => n !== "")) {
      const raw = id === undefined ? q.rootChild.get(name) : q.child.get(id, name)
      if (raw === undefined) return undefined
      id = decodeId(raw).id
    }
    return id === undefined ? undefined : FileId.make(id)
  }
  return {
    releases: {
      filesOf: (downloadId) => Effect.sync(() => q.filesOf.all(downloadId).map(decodeFile)),
      foreignFilesBelow: (path, downloadId) =>
        Effect.sync(() => {
          const folder = itemAt(path)
          return folder === undefined ? 0 : decodeCount(q.foreignBelow.get(folder, downloadId))
        }),
      itemAt: (path) => Effect.sync(() => Option.fromNullishOr(itemAt(path))),
      namesIn: (path) =>
        Effect.sync(() => {
          if (path === "") return q.rootNames.all().map((raw) => decodeName(raw).name)
          const folder = itemAt(path)
          return folder === undefined ? [] : q.names.all(folder).map((raw) => decodeName(raw).name)
        })
    }
  }
}

// ---------------------------------------------------------------------------------------

const FileRow = Schema.Struct({
  id: Schema.String,
  size_bytes: Schema.Number,
  path: Schema.String,
  local_path: Schema.NullOr(Schema.String),
  local_state: Schema.NullOr(LocalEntryState),
  written_size: Schema.NullOr(Schema.Number)
})
const decodeFileRow = Schema.decodeUnknownSync(FileRow)

const decodeFile = (raw: unknown): ReleaseFile => {
  const row = decodeFileRow(raw)
  return {
    remoteId: FileId.make(row.id),
    size: row.size_bytes,
    remotePath: row.path,
    local:
      row.local_path === null || row.local_state === null
        ? null
        : { path: row.local_path, state: row.local_state, writtenSize: row.written_size }
  }
}

const decodeId = Schema.decodeUnknownSync(Schema.Struct({ id: Schema.String }))
const decodeName = Schema.decodeUnknownSync(Schema.Struct({ name: Schema.String }))
