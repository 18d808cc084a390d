/**
 * Posters leave with what they illustrate (posters/Posters.ts writes them): a trashed or
 * deleted video takes its sidecar along the same way, and a folder removed for the remote
 * loses its posters first, so that it can be empty. A poster goes only while its fresh lstat
 * matches what dlsync wrote (one the user edited is theirs: forgotten, left in place). A
 * poster that cannot be removed never fails the action that removes its video.
 */
import { Effect } from "effect"
import type { FileId } from "../domain/FileId.ts"
import { isIntact } from "../domain/LocalEntry.ts"
import { type PosterFile, Store } from "../store/Store.ts"
import { LocalOps } from "./localOps.ts"

/** How a sidecar's name ends: `<video name without extension>-poster.webp`. */
export const SIDECAR_SUFFIX = "-poster.webp"

/** Removes a recorded poster (trashed on `date`, or deleted) if unchanged; forgets it either way. */
export const removePoster = Effect.fnUntraced(function* (poster: PosterFile, how: "trash" | "delete", date: string) {
  const store = yield* Store
  const ops = yield* LocalOps
  const stat = yield* ops.lstat(poster.path)
  if (stat !== undefined && isIntact(stat, poster.written)) {
    if (how === "trash") yield* ops.trash(poster.path, stat, date)
    else yield* ops.remove(poster.path, stat)
  }
  yield* store.posters.forget(poster.path)
})

/** The sidecar of the video `videoId` follows it to the trash (or is deleted with it). */
export const sidecarAlong = (videoId: FileId, how: "trash" | "delete", date: string) =>
  removeWhere((p) => p.videoId === videoId && p.path.endsWith(SIDECAR_SUFFIX), how, date)

/**
 * A video no longer tracked (forgotten: kept on disk, or gone from it): posters of it that
 * sit beside a kept video stay with it and become the user's too (forgotten); if nothing is
 * left at the video's path, its sidecar goes.
 */
export const postersOfForgotten = (videoId: FileId, videoPath: string) =>
  Effect.gen(function* () {
    const ops = yield* LocalOps
    const kept = yield* Effect.orElseSucceed(ops.lstat(videoPath), () => undefined)
    if (kept === undefined) return yield* sidecarAlong(videoId, "delete", "")
    const store = yield* Store
    for (const poster of yield* store.posters.all)
      if (poster.videoId === videoId) yield* store.posters.forget(poster.path)
  })

/** The posters at or below `folder`, deleted before the folder is removed. */
export const postersIn = (folder: string) => removeWhere((p) => p.path.startsWith(`${folder}/`), "delete", "")

const removeWhere = (
  match: (poster: PosterFile) => boolean,
  how: "trash" | "delete",
  date: string
): Effect.Effect<void, never, Store | LocalOps> =>
  Effect.gen(function* () {
    const store = yield* Store
    for (const poster of (yield* store.posters.all).filter(match)) {
      yield* removePoster(poster, how, date).pipe(
        Effect.catchTag("LocalOpError", (e) => Effect.logWarning(`poster ${poster.path} kept: ${e.message}`))
      )
    }
  })
