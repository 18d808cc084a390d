/**
 * How an intake item reads through the qBittorrent API (torrents/info, properties, files,
 * trackers): qBittorrent 5.0's (WebAPI 2.11) keys, every number a JSON number, never null
 * (`private` is null until the metadata is known, as in qBittorrent 5). Pure: the time, the
 * path map and what the source tells (torrentSource.ts) come in.
 *
 * Numbers are the release's view (src/intake/releaseView.ts) read as qBittorrent names
 * them: `progress` (one progress over the service's download, then the mirror's copy),
 * `amount_left` = `remaining`, `completed` = size − amount_left, `dlspeed` = `rate`, `eta` =
 * `etaSeconds` (8640000 when unknown).
 *
 * State, as Sonarr and Radarr map it (QBittorrent.cs `GetItems`):
 *   queued ─► queuedDL (Queued)        downloading, mirroring ─► downloading (Downloading)
 *   paused ─► stoppedDL (Paused)       completed ─► stoppedUP (Completed)
 *   failed ─► error (Warning: qBittorrent has no failed state)
 *
 * Seeding: dlsync never seeds, so a completed item is stopped with its share limits met
 * (ratio_limit 0, seeding limits 0): the apps' `CanBeRemoved` holds (state stoppedUP and a
 * seed limit reached), so with "Remove Completed" on they move the files and then delete
 * the item with `deleteFiles=true`.
 *
 * `progress` is 1 only for a completed item (every file verified on local disk), so a tool
 * that trusts progress alone never imports a file still arriving.
 */
import type { IntakeItem, IntakeState } from "../intake/Intake.ts"
import { type PathMap, toAppPath } from "../paths/pathMap.ts"
import { hashOfId } from "./hashes.ts"
import { magnetUri, type SourceFacts } from "./torrentSource.ts"

/** qBittorrent's "unknown" eta (100 days), which the apps read as such. */
export const UNKNOWN_ETA = 8_640_000

export interface ViewContext {
  /** Milliseconds since the epoch. */
  readonly now: number
  readonly pathMap: PathMap
}

/** A torrent as a JSON object (torrents/info); `private` is null until its metadata is known, as qBittorrent 5 shows it. */
export type TorrentInfo = Readonly<Record<string, string | number | boolean | null>>

/** The qBittorrent state of an intake state. */
export const torrentState = (state: IntakeState): string => STATES[state]

const STATES: Readonly<Record<IntakeState, string>> = {
  queued: "queuedDL",
  paused: "stoppedDL",
  downloading: "downloading",
  mirroring: "downloading",
  completed: "stoppedUP",
  failed: "error"
}

/** What the surface knows of a torrent besides its intake item. */
export interface TorrentExtras {
  readonly tags: ReadonlyArray<string>
  /** What its source (the .torrent, the magnet) tells (torrentSource.ts). */
  readonly facts: SourceFacts
}

/** The torrents/info object of a torrent item; undefined for an item that is not a torrent. */
export const torrentInfo = (item: IntakeItem, extras: TorrentExtras, context: ViewContext): TorrentInfo | undefined => {
  const hash = hashOfId(item.id)
  if (hash === undefined) return undefined
  const n = numbers(item, extras.facts, context.now)
  const contentPath = toAppPath(context.pathMap, item.contentPath)
  return {
    ...identity(item, hash, context),
    size: n.size,
    // qBittorrent's "not known yet" for a magnet without its metadata.
    total_size: n.hasMetadata ? n.size : -1,
    progress: n.progress,
    eta: n.eta,
    state: torrentState(item.state),
    category: item.category,
    tags: extras.tags.join(", "),
    content_path: contentPath,
    root_path: isMultiFile(item, extras.facts) ? contentPath : "",
    ratio: 0,
    ratio_limit: 0,
    seeding_time_limit: 0,
    inactive_seeding_time_limit: 0,
    max_ratio: 0,
    max_seeding_time: 0,
    max_inactive_seeding_time: 0,
    last_activity: n.lastActivity,
    seeding_time: n.seedingTime,
    time_active: n.timeActive,
    added_on: n.addedOn,
    completion_on: n.completionOn,
    amount_left: n.amountLeft,
    completed: n.downloaded,
    downloaded: n.downloaded,
    downloaded_session: n.downloaded,
    uploaded: 0,
    uploaded_session: 0,
    dlspeed: n.dlspeed,
    upspeed: 0,
    dl_limit: -1,
    up_limit: -1,
    num_seeds: 0,
    num_complete: 0,
    num_leechs: 0,
    num_incomplete: 0,
    availability: -1,
    popularity: 0,
    priority: 0,
    force_start: false,
    auto_tmm: false,
    seq_dl: false,
    f_l_piece_prio: false,
    super_seeding: false,
    private: n.hasMetadata ? (extras.facts.metadata?.isPrivate ?? false) : null,
    has_metadata: n.hasMetadata,
    magnet_uri: magnetUri(hash, item.name, extras.facts.trackers),
    tracker: "",
    trackers_count: extras.facts.trackers.length,
    seen_complete: n.completionOn,
    reannounce: 0,
    comment: commentOf(item, extras.facts)
  }
}

/** The torrents/properties object of a torrent item (qBittorrent 5.0's keys). */
export const torrentProperties = (item: IntakeItem, facts: SourceFacts, context: ViewContext) => {
  const hash = hashOfId(item.id) ?? ""
  const n = numbers(item, facts, context.now)
  const metadata = facts.metadata
  const isPrivate = metadata?.isPrivate ?? false
  return {
    ...identity(item, hash, context),
    comment: commentOf(item, facts),
    created_by: metadata?.createdBy ?? "",
    creation_date: metadata?.creationDate ?? -1,
    addition_date: n.addedOn,
    completion_date: n.completionOn,
    last_seen: n.completionOn,
    total_size: n.hasMetadata ? n.size : -1,
    total_downloaded: n.downloaded,
    total_downloaded_session: n.downloaded,
    total_uploaded: 0,
    total_uploaded_session: 0,
    total_wasted: 0,
    time_elapsed: n.timeActive,
    seeding_time: n.seedingTime,
    eta: n.eta,
    dl_speed: n.dlspeed,
    dl_speed_avg: n.timeActive > 0 ? Math.floor(n.downloaded / n.timeActive) : -1,
    up_speed: 0,
    up_speed_avg: n.timeActive > 0 ? 0 : -1,
    dl_limit: -1,
    up_limit: -1,
    share_ratio: 0,
    popularity: 0,
    nb_connections: 0,
    nb_connections_limit: 0,
    peers: 0,
    peers_total: 0,
    seeds: 0,
    seeds_total: 0,
    pieces_have: item.state === "completed" ? (metadata?.pieces ?? 0) : 0,
    pieces_num: metadata?.pieces ?? -1,
    piece_size: metadata?.pieceSize ?? -1,
    reannounce: 0,
    is_private: isPrivate,
    private: n.hasMetadata ? isPrivate : null,
    has_metadata: n.hasMetadata
  }
}

/**
 * The torrents/files list: names relative to save_path with "/" (the release folder first
 * for a multi-file release); the service's files once known, else the .torrent's. As
 * qBittorrent, `is_seed` is on the first file only.
 */
export const torrentFiles = (item: IntakeItem, facts: SourceFacts) => {
  const done = item.state === "completed"
  const files =
    item.files.length > 0 || facts.metadata === undefined
      ? item.files
      : facts.metadata.files.map((f) => ({ ...f, localBytes: 0 }))
  return files.map((file, index) => {
    const progress = done ? 1 : file.size > 0 ? Math.min(file.localBytes / file.size, PROGRESS_BELOW_DONE) : 0
    return {
      index,
      name: file.name,
      size: file.size,
      progress,
      priority: 1,
      ...(index === 0 ? { is_seed: done } : {}),
      piece_range: [0, 0],
      availability: done ? 1 : progress
    }
  })
}

/** The torrents/trackers list: qBittorrent's DHT, PeX and LSD rows, then each tracker (not contacted: dlsync never announces). */
export const torrentTrackers = (facts: SourceFacts) => [
  ...["** [DHT] **", "** [PeX] **", "** [LSD] **"].map((url) => ({
    url,
    status: 0,
    tier: -1,
    msg: "",
    num_peers: 0,
    num_seeds: 0,
    num_leeches: 0,
    num_downloaded: 0
  })),
  ...facts.trackers.map((url, tier) => ({
    url,
    status: 1,
    tier,
    msg: "",
    num_peers: -1,
    num_seeds: -1,
    num_leeches: -1,
    num_downloaded: -1
  }))
]

/** The `filter` values of torrents/info, and which qBittorrent states each keeps. */
export const TORRENT_FILTERS: Readonly<Record<string, (state: string) => boolean>> = {
  all: () => true,
  downloading: (s) => DOWNLOADING.has(s),
  seeding: (s) => SEEDING.has(s),
  completed: (s) => COMPLETED.has(s),
  paused: (s) => STOPPED.has(s),
  stopped: (s) => STOPPED.has(s),
  resumed: (s) => !STOPPED.has(s),
  running: (s) => !STOPPED.has(s),
  active: (s) => s === "downloading" || s === "uploading",
  inactive: (s) => s !== "downloading" && s !== "uploading",
  stalled: (s) => s === "stalledDL" || s === "stalledUP",
  stalled_uploading: (s) => s === "stalledUP",
  stalled_downloading: (s) => s === "stalledDL",
  checking: (s) => s.startsWith("checking"),
  moving: (s) => s === "moving",
  errored: (s) => s === "error" || s === "missingFiles"
}

/** Sorts by one field as qBittorrent does (numbers and booleans by value, text by UTF-16 code units), for torrents/info `sort`/`reverse`. */
export const sortTorrents = (
  torrents: ReadonlyArray<TorrentInfo>,
  field: string,
  reverse: boolean
): ReadonlyArray<TorrentInfo> => {
  const sorted = [...torrents].sort((a, b) => {
    const x = a[field]
    const y = b[field]
    if (typeof x === "number" && typeof y === "number") return x - y
    if (typeof x === "boolean" && typeof y === "boolean") return Number(x) - Number(y)
    const [p, q] = [String(x ?? ""), String(y ?? "")]
    return p < q ? -1 : p > q ? 1 : 0
  })
  return reverse ? sorted.reverse() : sorted
}

/** torrents/info `offset` (negative: from the end) and `limit` (0 or less: no limit). */
export const pageTorrents = <A>(torrents: ReadonlyArray<A>, offset: number, limit: number): ReadonlyArray<A> => {
  const start = offset < 0 ? Math.max(0, torrents.length + offset) : offset
  return limit > 0 ? torrents.slice(start, start + limit) : torrents.slice(start)
}

// ---------------------------------------------------------------------------------------

/** The largest progress shown for an item that is not complete. */
const PROGRESS_BELOW_DONE = 0.999

const DOWNLOADING = new Set([
  "downloading",
  "metaDL",
  "forcedMetaDL",
  "stalledDL",
  "checkingDL",
  "pausedDL",
  "stoppedDL",
  "queuedDL",
  "forcedDL"
])
const SEEDING = new Set(["uploading", "stalledUP", "checkingUP", "queuedUP", "forcedUP"])
const COMPLETED = new Set([...SEEDING, "pausedUP", "stoppedUP"])
const STOPPED = new Set(["pausedDL", "stoppedDL", "pausedUP", "stoppedUP"])

/** What info and properties both say first: which torrent, and where. */
const identity = (item: IntakeItem, hash: string, context: ViewContext) => ({
  hash,
  infohash_v1: hash,
  infohash_v2: "",
  name: item.name,
  save_path: toAppPath(context.pathMap, item.savePath),
  download_path: ""
})

/** The .torrent's comment; for a failed release without one, why it failed (where a qBittorrent client shows text). */
const commentOf = (item: IntakeItem, facts: SourceFacts): string =>
  facts.metadata?.comment || (item.state === "failed" ? (item.reason ?? "") : "")

/** A release whose content is a folder: its files say so once known, else its .torrent. */
const isMultiFile = (item: IntakeItem, facts: SourceFacts): boolean =>
  item.files.length > 0
    ? item.files.length > 1 || item.files.some((f) => f.name.includes("/"))
    : (facts.metadata?.multiFile ?? false)

const finite = (value: number, fallback: number): number => (Number.isFinite(value) ? value : fallback)

/**
 * Every number shown for an item, finite and consistent with its state. Until the service
 * knows the size, the .torrent's is shown (nothing of it local yet).
 */
const numbers = (item: IntakeItem, facts: SourceFacts, now: number) => {
  const done = item.state === "completed"
  const known = Math.max(0, Math.round(finite(item.size, 0)))
  const size = known === 0 && !done ? (facts.metadata?.size ?? 0) : known
  const amountLeft = done
    ? 0
    : known === 0
      ? size
      : Math.min(size, Math.max(0, Math.round(finite(item.remaining, size))))
  const eta =
    done || item.etaSeconds === null || !Number.isFinite(item.etaSeconds) || item.etaSeconds < 0
      ? UNKNOWN_ETA
      : Math.min(UNKNOWN_ETA, Math.round(item.etaSeconds))
  const active = item.state === "downloading" || item.state === "mirroring"
  const seconds = (millis: number) => Math.floor(finite(millis, 0) / 1000)
  const completionOn = done && item.completedAt !== null ? seconds(item.completedAt) : -1
  return {
    size,
    amountLeft,
    downloaded: size - amountLeft,
    progress: done ? 1 : Math.min(Math.max(finite(item.progress, 0), 0), PROGRESS_BELOW_DONE),
    eta,
    dlspeed: active ? Math.max(0, Math.round(finite(item.rate, 0))) : 0,
    hasMetadata: size > 0 || facts.metadata !== undefined,
    addedOn: seconds(item.addedAt),
    completionOn,
    // Time passes for a release only while something happens to it (as a stopped torrent's stands still).
    lastActivity: completionOn >= 0 ? completionOn : active ? seconds(now) : seconds(item.addedAt),
    seedingTime: completionOn >= 0 ? Math.max(0, seconds(now) - completionOn) : 0,
    timeActive: Math.max(
      0,
      (completionOn >= 0 ? completionOn : active ? seconds(now) : seconds(item.addedAt)) - seconds(item.addedAt)
    )
  }
}
