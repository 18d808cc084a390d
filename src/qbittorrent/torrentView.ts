/**
 * How an intake item reads through the qBittorrent API (torrents/info, properties, files):
 * the qBittorrent 5 (WebAPI 2.11) fields the *arr apps and other tools read, every number a
 * JSON number, never null. Pure: the time and the path map come in.
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

/** qBittorrent's "unknown" eta (100 days), which the apps read as such. */
export const UNKNOWN_ETA = 8_640_000

export interface ViewContext {
  /** Milliseconds since the epoch. */
  readonly now: number
  readonly pathMap: PathMap
}

/** A torrent as a JSON object (torrents/info). */
export type TorrentInfo = Readonly<Record<string, string | number | boolean>>

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

/** The torrents/info object of a torrent item; undefined for an item that is not a torrent. */
export const torrentInfo = (
  item: IntakeItem,
  tags: ReadonlyArray<string>,
  context: ViewContext
): TorrentInfo | undefined => {
  const hash = hashOfId(item.id)
  if (hash === undefined) return undefined
  const n = numbers(item, context.now)
  return {
    ...identity(item, hash, context),
    size: n.size,
    total_size: n.size,
    progress: n.progress,
    eta: n.eta,
    state: torrentState(item.state),
    category: item.category,
    tags: tags.join(", "),
    content_path: toAppPath(context.pathMap, item.contentPath),
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
    priority: 0,
    force_start: false,
    auto_tmm: false,
    seq_dl: false,
    f_l_piece_prio: false,
    super_seeding: false,
    private: false,
    has_metadata: n.size > 0,
    magnet_uri: `magnet:?xt=urn:btih:${hash}&dn=${encodeURIComponent(item.name)}`,
    tracker: "",
    trackers_count: 0,
    seen_complete: n.completionOn,
    reannounce: 0,
    popularity: 0,
    comment: item.reason ?? ""
  }
}

/** The torrents/properties object of a torrent item. */
export const torrentProperties = (item: IntakeItem, context: ViewContext) => {
  const hash = hashOfId(item.id) ?? ""
  const n = numbers(item, context.now)
  return {
    ...identity(item, hash, context),
    comment: item.reason ?? "",
    created_by: "",
    creation_date: -1,
    addition_date: n.addedOn,
    completion_date: n.completionOn,
    last_seen: n.completionOn,
    total_size: n.size,
    total_downloaded: n.downloaded,
    total_downloaded_session: n.downloaded,
    total_uploaded: 0,
    total_uploaded_session: 0,
    total_wasted: 0,
    time_elapsed: n.timeActive,
    seeding_time: n.seedingTime,
    eta: n.eta,
    dl_speed: n.dlspeed,
    dl_speed_avg: n.dlspeed,
    up_speed: 0,
    up_speed_avg: 0,
    dl_limit: -1,
    up_limit: -1,
    share_ratio: 0,
    nb_connections: 0,
    nb_connections_limit: 0,
    peers: 0,
    peers_total: 0,
    seeds: 0,
    seeds_total: 0,
    pieces_have: 0,
    pieces_num: 0,
    piece_size: 0,
    reannounce: 0,
    is_private: false,
    isPrivate: false,
    has_metadata: n.size > 0,
    progress: n.progress
  }
}

/** The torrents/files list: names relative to save_path with "/" (the release folder first for a multi-file release). */
export const torrentFiles = (item: IntakeItem) =>
  item.files.map((file, index) => {
    const progress =
      item.state === "completed" ? 1 : file.size > 0 ? Math.min(file.localBytes / file.size, PROGRESS_BELOW_DONE) : 0
    return {
      index,
      name: file.name,
      size: file.size,
      progress,
      priority: 1,
      is_seed: item.state === "completed",
      piece_range: [0, 0],
      availability: item.state === "completed" ? 1 : progress
    }
  })

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

/** Sorts by one field (numbers by value, text by locale), as torrents/info `sort`/`reverse`. */
export const sortTorrents = (
  torrents: ReadonlyArray<TorrentInfo>,
  field: string,
  reverse: boolean
): ReadonlyArray<TorrentInfo> => {
  const sorted = [...torrents].sort((a, b) => {
    const x = a[field]
    const y = b[field]
    if (typeof x === "number" && typeof y === "number") return x - y
    return String(x ?? "").localeCompare(String(y ?? ""))
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

const finite = (value: number, fallback: number): number => (Number.isFinite(value) ? value : fallback)

/** Every number shown for an item, finite and consistent with its state. */
const numbers = (item: IntakeItem, now: number) => {
  const done = item.state === "completed"
  const size = Math.max(0, Math.round(finite(item.size, 0)))
  const amountLeft = done ? 0 : Math.min(size, Math.max(0, Math.round(finite(item.remaining, size))))
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
    dlspeed: active && eta > 0 && eta < UNKNOWN_ETA ? Math.round(amountLeft / eta) : 0,
    addedOn: seconds(item.addedAt),
    completionOn,
    lastActivity: completionOn >= 0 ? completionOn : seconds(now),
    seedingTime: completionOn >= 0 ? Math.max(0, seconds(now) - completionOn) : 0,
    timeActive: Math.max(0, seconds(now) - seconds(item.addedAt))
  }
}
