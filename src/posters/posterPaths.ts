/**
 * Where posters go (pure): `<video name without extension>-poster.webp` beside each video
 * (sidecar), or one `poster.webp` per folder from its first video with a poster (folder).
 * Only videos mirrored on disk (a synced local entry) get one; a path a mirrored item holds
 * is never a poster's.
 */
import type { PosterStyle } from "../config/postersSettings.ts"
import type { FileId } from "../domain/FileId.ts"
import type { LocalEntry } from "../domain/LocalEntry.ts"
import type { RemoteItem } from "../domain/RemoteItem.ts"
import { SIDECAR_SUFFIX } from "../sync/posterRemovals.ts"

export const FOLDER_POSTER = "poster.webp"

/** A poster to have at `path`: the image at `url`, for the video `videoId`. */
export interface WantedPoster {
  readonly path: string
  readonly url: string
  readonly videoId: FileId
}

/** The sidecar path of a video's mirror path. */
export const sidecarPath = (videoPath: string): string => {
  const slash = videoPath.lastIndexOf("/")
  const name = videoPath.slice(slash + 1)
  const dot = name.lastIndexOf(".")
  const stem = dot > 0 ? name.slice(0, dot) : name
  return `${videoPath.slice(0, slash + 1)}${stem}${SIDECAR_SUFFIX}`
}

/** The folder poster path of the folder holding `path`. */
export const folderPosterPath = (path: string): string => `${path.slice(0, path.lastIndexOf("/") + 1)}${FOLDER_POSTER}`

/** The posters the mirror should hold, by path. */
export const wantedPosters = (
  entries: ReadonlyArray<LocalEntry>,
  remote: ReadonlyMap<string, RemoteItem>,
  style: PosterStyle
): Map<string, WantedPoster> => {
  const taken = new Set(entries.map((e) => e.path))
  const wanted = new Map<string, WantedPoster>()
  // Entries come sorted by path: a folder's poster is its first video's.
  for (const entry of [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    if (entry.type !== "file" || entry.state !== "synced" || entry.written === null) continue
    const item = remote.get(entry.remoteId)
    if (item === undefined || item.kind !== "video" || item.posterUrl === undefined) continue
    const path = style === "sidecar" ? sidecarPath(entry.path) : folderPosterPath(entry.path)
    if (taken.has(path) || wanted.has(path)) continue
    wanted.set(path, { path, url: item.posterUrl, videoId: entry.remoteId })
  }
  return wanted
}
