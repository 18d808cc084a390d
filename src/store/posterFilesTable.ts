/**
 * The poster images dlsync wrote (table `poster_files`, see migrations.ts): sidecars and
 * folder posters (src/posters/). They are dlsync's, not the user's and not mirrored items:
 * replaced or removed only while a fresh lstat still matches what is recorded here.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"
import { FileId } from "../domain/FileId.ts"
import type { WrittenStat } from "../domain/LocalEntry.ts"
import { rowTo } from "./columns.ts"

/** One poster dlsync wrote: where, for which video, from which URL, and its lstat then. */
export interface PosterFile {
  readonly path: string
  readonly videoId: FileId
  readonly url: string
  readonly written: WrittenStat
}

export interface PosterFilesTable {
  readonly posters: {
    readonly all: Effect.Effect<ReadonlyArray<PosterFile>>
    readonly put: (poster: PosterFile) => Effect.Effect<void>
    readonly forget: (path: string) => Effect.Effect<void>
  }
}

export const makePosterFilesTable = (db: BetterSqlite3.Database): PosterFilesTable => {
  const q = {
    all: db.prepare("SELECT * FROM poster_files ORDER BY path"),
    put: db.prepare(
      `INSERT OR REPLACE INTO poster_files (path, video_id, url, size_bytes, mtime_ns, inode)
       VALUES (@path, @video_id, @url, @size_bytes, @mtime_ns, @inode)`
    ),
    forget: db.prepare("DELETE FROM poster_files WHERE path = ?")
  }
  return {
    posters: {
      all: Effect.sync(() => q.all.all().map((raw) => decodeRow(raw))),
      put: (poster) => Effect.sync(() => void q.put.run(encodeRow(poster))),
      forget: (path) => Effect.sync(() => void q.forget.run(path))
    }
  }
}

// ---------------------------------------------------------------------------------------

const PosterFileRow = rowTo<PosterFile>()(
  Schema.Struct({
    path: Schema.String,
    video_id: FileId,
    url: Schema.String,
    size_bytes: Schema.Int,
    mtime_ns: Schema.String,
    inode: Schema.String
  }),
  {
    decode: (row) => ({
      path: row.path,
      videoId: row.video_id,
      url: row.url,
      written: { size: row.size_bytes, mtimeNs: BigInt(row.mtime_ns), ino: BigInt(row.inode) }
    }),
    encode: (poster) => ({
      path: poster.path,
      video_id: poster.videoId,
      url: poster.url,
      size_bytes: poster.written.size,
      mtime_ns: poster.written.mtimeNs.toString(),
      inode: poster.written.ino.toString()
    })
  }
)

const decodeRow = Schema.decodeUnknownSync(PosterFileRow)
const encodeRow = Schema.encodeSync(PosterFileRow)
