/**
 * Poster sidecars (opt-in, `[posters] enabled`): the service's poster image of each mirrored
 * video, as `<name>-poster.webp` beside it or `poster.webp` per folder (posterPaths.ts).
 *
 *   after each reconcile ─► wanted posters (synced videos with a poster URL in the store)
 *        ├─► stale poster (its video gone, moved, or no longer the folder's) ─► removed if unchanged
 *        └─► missing or outdated ─► cache .dlsync/posters/<sha256(url)>.webp (fetched once per URL)
 *                                  ─► .dlsync/partial ─► fsync ─► land (rename into place)
 *
 * Invariants:
 * - A poster is dlsync's own file, recorded in `poster_files` with its lstat: it is replaced
 *   or removed only while that lstat still matches (one the user edited is theirs, forgotten
 *   and left alone), and never written where anything else already is. It is never a local
 *   entry, so the planner neither adopts, conflicts nor removes it as a mirrored file; a
 *   remote item that wants a poster's path gets it (the poster makes way after the pass that
 *   found the path occupied, and the next pass fetches the item).
 * - A URL is fetched at most once while its image stays cached (the URL is content-addressed:
 *   the same URL is the same bytes); the cache keeps only the URLs still wanted.
 * - The URL is public: no bearer is ever sent with it. It is fetched through the outbound
 *   client (outbound/Outbound.ts), redirects followed, the body capped at MAX_POSTER_BYTES
 *   while it streams in.
 * - A trashed or deleted video takes its sidecar along, and a folder removed for the remote
 *   takes its posters, and a video kept on disk while it leaves the mirror keeps its poster
 *   (sync/posterRemovals.ts, called by the executor); a folder poster whose
 *   folder holds no video any more goes at the next step.
 * - A failing fetch or write is logged and retried at the next pass; it never fails the mirror.
 * - Posters off: no include_poster on any request and no step (the default of `Posters`).
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Context, Data, Duration, Effect, Layer } from "effect"
import type { PostersSettings } from "../config/postersSettings.ts"
import { isIntact } from "../domain/LocalEntry.ts"
import { DLSYNC_DIR } from "../fs/dlsyncDir.ts"
import { fsyncDirSync } from "../fs/fsyncDir.ts"
import { fetchPublic, Outbound } from "../outbound/Outbound.ts"
import { type PosterFile, Store } from "../store/Store.ts"
import { LocalOps, land } from "../sync/localOps.ts"
import { removePoster } from "../sync/posterRemovals.ts"
import { type WantedPoster, wantedPosters } from "./posterPaths.ts"

/** Where fetched poster images are kept, by the SHA-256 of their URL. */
export const POSTER_CACHE_DIR = `${DLSYNC_DIR}/posters`

/** Posters are at most 640 px wide: anything far larger is not a poster. */
export const MAX_POSTER_BYTES = 8 * 1024 * 1024

/** How long one poster fetch may take. */
export const POSTER_FETCH_TIMEOUT = Duration.seconds(30)

/** Redirects a poster URL may take (a CDN's) before its image. */
const POSTER_REDIRECTS = 5

export interface PostersShape {
  /** Whether posters are on: the feed then asks for poster data (`include_poster`). */
  readonly enabled: boolean
  /**
   * Brings the posters in line with the mirror; never fails. `occupied`: paths the last plan
   * could not give a remote item because something was there: a poster of ours there makes
   * way (removed now, so that the next pass fetches the item).
   */
  readonly sync: (occupied: ReadonlySet<string>) => Effect.Effect<void>
}

/** The poster step, required by the feed and the pass: `off` unless posters are on. */
export class Posters extends Context.Service<Posters, PostersShape>()("dlsync/posters/Posters") {
  /** Posters off: no poster data asked for, none written. */
  static readonly off: Layer.Layer<Posters> = Layer.succeed(
    Posters,
    Posters.of({ enabled: false, sync: () => Effect.void })
  )
}

/** The live poster step when posters are on; Posters.off otherwise. */
export const postersLayer = (settings: PostersSettings): Layer.Layer<Posters, never, Store | LocalOps> =>
  settings.enabled
    ? Layer.effect(
        Posters,
        Effect.gen(function* () {
          const context = yield* Effect.context<Store | LocalOps | Outbound>()
          return Posters.of({
            enabled: true,
            sync: (occupied) => syncPosters(settings, occupied).pipe(Effect.provide(context))
          })
        })
      ).pipe(Layer.provide(Outbound.layer))
    : Posters.off

/** One poster step over the store as the last reconcile left it. */
export const syncPosters = Effect.fn("Posters.sync")(function* (
  settings: PostersSettings,
  occupied: ReadonlySet<string>
): Effect.fn.Return<void, never, Store | LocalOps | Outbound> {
  const store = yield* Store
  const ops = yield* LocalOps
  const entries = yield* store.local.all
  const remote = new Map((yield* store.remote.all).map((item) => [item.id, item]))
  const wanted = wantedPosters(entries, remote, settings.style)
  // A mirrored item's place is never a poster's: the item comes first.
  for (const path of occupied) wanted.delete(path)
  const recorded = new Map((yield* store.posters.all).map((p) => [p.path, p]))

  for (const poster of recorded.values()) {
    if (wanted.get(poster.path)?.url === poster.url) continue
    if (wanted.has(poster.path)) continue // replaced below
    yield* removePoster(poster, "delete", "").pipe(Effect.catch((e) => Effect.logWarning(`poster: ${e.message}`)))
  }
  const fetched = new Map<string, Buffer>()
  for (const want of wanted.values()) {
    yield* placePoster(want, recorded.get(want.path), fetched).pipe(
      Effect.catch((e) =>
        Effect.logWarning(`poster for ${want.path} not written, retried at the next pass: ${e.message}`)
      )
    )
  }
  // The cache keeps the images still wanted, so an unchanged poster is never fetched again.
  const keep = new Set([...wanted.values()].map((w) => cacheName(w.url)))
  yield* Effect.sync(() => {
    const dir = NodePath.join(ops.root, POSTER_CACHE_DIR)
    for (const name of Fs.existsSync(dir) ? Fs.readdirSync(dir) : []) {
      if (!keep.has(name)) Fs.rmSync(NodePath.join(dir, name), { force: true })
    }
  })
})

// ---------------------------------------------------------------------------------------

class PosterFailure extends Data.TaggedError("PosterFailure")<{ readonly message: string }> {}

const placePoster = Effect.fnUntraced(function* (
  want: WantedPoster,
  recorded: PosterFile | undefined,
  fetched: Map<string, Buffer>
) {
  const store = yield* Store
  const ops = yield* LocalOps
  const stat = yield* ops.lstat(want.path)
  const ours = recorded !== undefined && stat !== undefined && isIntact(stat, recorded.written)
  if (ours && recorded.url === want.url) {
    if (recorded.videoId !== want.videoId) yield* store.posters.put({ ...recorded, videoId: want.videoId })
    return
  }
  if (recorded !== undefined && !ours) yield* store.posters.forget(want.path)
  // Something that is not our poster is there: the user's, left alone.
  if (stat !== undefined && !ours) return
  const bytes = yield* posterBytes(ops.root, want.url, fetched)
  const temp = NodePath.join(ops.root, DLSYNC_DIR, "partial", `poster-${cacheName(want.url)}-${process.pid}`)
  yield* Effect.try({
    try: () => writeDurably(temp, bytes),
    catch: (e) => new PosterFailure({ message: `cannot write ${temp}: ${e instanceof Error ? e.message : String(e)}` })
  })
  const landed = yield* land(ops.root, temp, want.path, ours ? stat : null).pipe(
    Effect.tapError(() => Effect.sync(() => Fs.rmSync(temp, { force: true })))
  )
  yield* store.posters.put({
    path: want.path,
    videoId: want.videoId,
    url: want.url,
    written: { size: landed.size, mtimeNs: landed.mtimeNs, ino: landed.ino }
  })
})

/** The image at `url`: from this step's fetches, the cache, or fetched (once) into the cache. */
const posterBytes = Effect.fnUntraced(function* (root: string, url: string, fetched: Map<string, Buffer>) {
  const known = fetched.get(url)
  if (known !== undefined) return known
  const cached = NodePath.join(root, POSTER_CACHE_DIR, cacheName(url))
  const onDisk = yield* Effect.sync(() => (Fs.existsSync(cached) ? Fs.readFileSync(cached) : undefined))
  if (onDisk !== undefined) {
    fetched.set(url, onDisk)
    return onDisk
  }
  const bytes = yield* fetchPoster(url)
  yield* Effect.try({
    try: () => {
      Fs.mkdirSync(NodePath.dirname(cached), { recursive: true })
      writeDurably(`${cached}.tmp`, bytes)
      Fs.renameSync(`${cached}.tmp`, cached)
      fsyncDirSync(NodePath.dirname(cached))
    },
    catch: (e) =>
      new PosterFailure({ message: `cannot cache the poster: ${e instanceof Error ? e.message : String(e)}` })
  })
  fetched.set(url, bytes)
  return bytes
})

/** GET of a public poster URL, without any credential. */
const fetchPoster = Effect.fnUntraced(function* (url: string) {
  const answer = yield* fetchPublic(url, {
    accept: "image/*",
    timeoutMs: Duration.toMillis(POSTER_FETCH_TIMEOUT),
    maxBytes: MAX_POSTER_BYTES,
    redirects: POSTER_REDIRECTS
  }).pipe(Effect.mapError((failure) => new PosterFailure({ message: `fetching the poster failed: ${failure.reason}` })))
  if (answer.status < 200 || answer.status >= 300) {
    return yield* new PosterFailure({ message: `the poster URL answered ${answer.status}` })
  }
  return Buffer.from(answer.body)
})

const cacheName = (url: string): string => `${createHash("sha256").update(url).digest("hex")}.webp`

const writeDurably = (file: string, bytes: Uint8Array): void => {
  Fs.mkdirSync(NodePath.dirname(file), { recursive: true })
  const fd = Fs.openSync(file, "w", 0o644)
  try {
    Fs.writeSync(fd, bytes)
    Fs.fsyncSync(fd)
  } finally {
    Fs.closeSync(fd)
  }
}
