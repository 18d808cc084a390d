/**
 * What every group of qBittorrent endpoints shares: the intake (this surface's torrents
 * only), the in-memory tags and log, the facts each torrent's source tells (read once per
 * torrent), and how a request names torrents:
 * - `hashes` (actions, torrents/info): `|`-separated hashes or `all`; a part that is not a
 *   hash names no torrent, as in qBittorrent (so an action on it changes nothing, 200);
 * - `hash` (one torrent's reads): unknown or malformed is 404, absent is 400.
 */
import { Clock, Effect, Option } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"
import type { Intake, IntakeItem, IntakeSource } from "../intake/Intake.ts"
import type { PathMap } from "../paths/pathMap.ts"
import type { ListenAddress } from "../server/ListenAddress.ts"
import { notFound, type Response, required } from "./answers.ts"
import { hashOfId, parseHashes } from "./hashes.ts"
import type { RequestForm } from "./requestForm.ts"
import { type LogType, makeSurfaceLog, type SurfaceLog } from "./surfaceLog.ts"
import { type SourceFacts, sourceFacts } from "./torrentSource.ts"
import { makeTorrentTags, type TorrentTags } from "./torrentTags.ts"
import { type TorrentInfo, torrentInfo, type ViewContext } from "./torrentView.ts"

/** The releases and categories this surface sees and acts on: its own. */
export const SURFACE = "qbittorrent"

export interface EndpointOptions {
  readonly intake: Intake["Service"]
  readonly mirrorRoot: string
  readonly pathMap: PathMap
  readonly listen: ListenAddress
  readonly username: string
  /** Where `urls=https://…` sources come from (fetchTorrentUrl in production). */
  readonly fetchUrl?: (url: string) => Effect.Effect<IntakeSource, string>
}

export interface EndpointContext {
  readonly options: EndpointOptions
  readonly intake: Intake["Service"]
  readonly tags: TorrentTags
  readonly log: SurfaceLog
  /** Writes a line to log/main (and to dlsync's log at info, or warning for types 4 and 8). */
  readonly note: (message: string, type?: LogType) => Effect.Effect<void>
  /** The time and path map a view needs. */
  readonly view: Effect.Effect<ViewContext>
  /** This surface's torrents: every one, or those of `ids`. */
  readonly torrents: (ids?: ReadonlyArray<IntakeId>) => Effect.Effect<ReadonlyArray<IntakeItem>>
  /** What a torrent's source tells (cached per torrent). */
  readonly facts: (id: IntakeId) => Effect.Effect<SourceFacts>
  /** A torrent's torrents/info object. */
  readonly info: (item: IntakeItem, view: ViewContext) => Effect.Effect<TorrentInfo | undefined>
  /** The torrents a `hashes` parameter names (`all`: every one); 400 when it is absent. */
  readonly selected: (form: RequestForm) => Effect.Effect<ReadonlyArray<IntakeItem>, Response>
  /** The one torrent a `hash` parameter names: 400 when absent, 404 when not a known torrent. */
  readonly one: (form: RequestForm) => Effect.Effect<IntakeItem, Response>
  /** Forgets what is kept in memory for removed torrents. */
  readonly forget: (ids: ReadonlyArray<IntakeId>) => void
}

export const makeEndpointContext = (options: EndpointOptions): EndpointContext => {
  const { intake, pathMap } = options
  const tags = makeTorrentTags()
  const log = makeSurfaceLog()
  const known = new Map<IntakeId, SourceFacts>()

  const torrents = (ids?: ReadonlyArray<IntakeId>) =>
    Effect.map(intake.list(ids === undefined ? { via: SURFACE } : { via: SURFACE, ids }), (items) =>
      items.filter((item) => hashOfId(item.id) !== undefined)
    )

  const facts = (id: IntakeId) =>
    Effect.gen(function* () {
      const cached = known.get(id)
      if (cached !== undefined) return cached
      const source = yield* intake.source(id)
      const found = Option.match(source, { onNone: () => ({ trackers: [] }), onSome: sourceFacts })
      if (Option.isSome(source)) {
        if (known.size >= MAX_FACTS) known.clear()
        known.set(id, found)
      }
      return found
    })

  const selected = (form: RequestForm) =>
    Effect.gen(function* () {
      const selection = parseHashes(yield* required(form, "hashes"))
      if (selection._tag === "All") return yield* torrents()
      return selection.ids.length === 0 ? [] : yield* torrents(selection.ids)
    })

  const one = (form: RequestForm) =>
    Effect.gen(function* () {
      const selection = parseHashes(yield* required(form, "hash"))
      if (selection._tag !== "Ids" || selection.ids.length !== 1) return yield* Effect.fail(notFound)
      const [item] = yield* torrents(selection.ids)
      return item ?? (yield* Effect.fail(notFound))
    })

  return {
    options,
    intake,
    tags,
    log,
    note: (message, type = 1) =>
      Effect.gen(function* () {
        log.write(message, type, yield* Clock.currentTimeMillis)
        yield* type >= 4 ? Effect.logWarning(`qbittorrent: ${message}`) : Effect.logInfo(`qbittorrent: ${message}`)
      }),
    view: Effect.map(Clock.currentTimeMillis, (now) => ({ now, pathMap })),
    torrents,
    facts,
    info: (item, view) =>
      Effect.map(facts(item.id), (f) => torrentInfo(item, { tags: tags.of(item.id), facts: f }, view)),
    selected,
    one,
    forget: (ids) => {
      for (const id of ids) {
        tags.forget(id)
        known.delete(id)
      }
    }
  }
}

// ---------------------------------------------------------------------------------------

/** Torrents whose source facts are kept; beyond, they are read again (one store read each). */
const MAX_FACTS = 10_000
