/**
 * sync/maindata (what every web UI, phone app and dashboard polls: a full update, then only
 * the changes since the `rid` it holds; maindataSync.ts) and sync/torrentPeers (dlsync has
 * no peers: an empty full update for a torrent of this surface, 404 otherwise), with the
 * transfer figures both maindata's server_state and transfer/info report.
 */
import * as NodeFs from "node:fs/promises"
import { Effect } from "effect"
import { type Endpoint, integer, json, read } from "./answers.ts"
import { categoriesObject } from "./categoryTagEndpoints.ts"
import type { EndpointContext } from "./endpointContext.ts"
import { type JsonObject, type MaindataSnapshot, makeMaindataSync } from "./maindataSync.ts"
import type { TorrentInfo } from "./torrentView.ts"

export const syncEndpoints = (ctx: EndpointContext): Readonly<Record<string, Endpoint>> => {
  const sync = makeMaindataSync()
  const peersRid = new Map<string, number>()

  const snapshot = Effect.gen(function* () {
    const view = yield* ctx.view
    const torrents = new Map<string, JsonObject>()
    const trackers = new Map<string, Array<string>>()
    const listed: Array<TorrentInfo> = []
    for (const item of yield* ctx.torrents()) {
      const info = yield* ctx.info(item, view)
      if (info === undefined) continue
      listed.push(info)
      const { hash, ...rest } = info
      const id = String(hash)
      torrents.set(id, rest)
      for (const url of (yield* ctx.facts(item.id)).trackers) trackers.set(url, [...(trackers.get(url) ?? []), id])
    }
    const categories = new Map(Object.entries(yield* categoriesObject(ctx)))
    const snapshot: MaindataSnapshot = {
      torrents,
      categories,
      tags: ctx.tags.all(),
      trackers,
      serverState: {
        ...transferInfo(listed),
        ...SERVER_STATE,
        free_space_on_disk: yield* freeSpace(ctx.options.mirrorRoot)
      }
    }
    return snapshot
  })

  return {
    "sync/maindata": read((form) =>
      Effect.map(snapshot, (now) => json(sync.answer(Math.max(0, integer(form.get("rid")) ?? 0), now)))
    ),
    "sync/torrentPeers": read((form) =>
      Effect.map(ctx.one(form), (item) => {
        const rid = ((peersRid.get(item.id) ?? 0) % 1_000_000) + 1
        peersRid.set(item.id, rid)
        return json({ full_update: true, peers: {}, rid, show_flags: false })
      })
    )
  }
}

/** transfer/info: the download rate is the sum of the torrents' (the service's, then the mirror's); nothing is uploaded. */
export const transferInfo = (torrents: ReadonlyArray<TorrentInfo>) => ({
  connection_status: "connected",
  dht_nodes: 0,
  dl_info_data: sum(torrents, "downloaded"),
  dl_info_speed: sum(torrents, "dlspeed"),
  dl_rate_limit: 0,
  up_info_data: 0,
  up_info_speed: 0,
  up_rate_limit: 0
})

// ---------------------------------------------------------------------------------------

/** The rest of server_state: no cache, no peers, no alternative limits (qBittorrent 5.0's keys). */
const SERVER_STATE: JsonObject = {
  alltime_dl: 0,
  alltime_ul: 0,
  average_time_queue: 0,
  global_ratio: "-",
  queued_io_jobs: 0,
  queueing: true,
  read_cache_hits: "0",
  read_cache_overload: "0",
  refresh_interval: 1500,
  total_buffers_size: 0,
  total_peer_connections: 0,
  total_queued_size: 0,
  total_wasted_session: 0,
  use_alt_speed_limits: false,
  use_subcategories: true,
  write_cache_overload: "0"
}

const sum = (torrents: ReadonlyArray<TorrentInfo>, key: string): number =>
  torrents.reduce((n, t) => n + (typeof t[key] === "number" ? t[key] : 0), 0)

/** Free bytes under the mirror root, -1 when it cannot be read (qBittorrent's "not known"). */
const freeSpace = (root: string) =>
  Effect.promise(() =>
    NodeFs.statfs(root).then(
      (s) => s.bavail * s.bsize,
      () => -1
    )
  )
