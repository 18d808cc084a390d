/**
 * The reads of torrents: torrents/info (with qBittorrent's filters, sort and paging),
 * torrents/count, and one torrent's properties, files, trackers and web seeds.
 *
 * As qBittorrent 5.0 answers: an unknown `filter` lists all (5.0 knows `stopped`/`running`;
 * 4.x's `paused`/`resumed` are kept as their aliases here); a hash in `hashes` that is not one
 * matches nothing; `sort` by a field a torrent does not have is 400 "'sort' parameter is
 * invalid" (an empty list is never sorted, so it is 200 `[]`); one torrent's reads are 404
 * for a hash that names no torrent of this surface.
 */
import { Effect } from "effect"
import { badRequest, type Endpoint, integer, json, parseBool, read, text } from "./answers.ts"
import type { EndpointContext } from "./endpointContext.ts"
import type { RequestForm } from "./requestForm.ts"
import {
  pageTorrents,
  sortTorrents,
  TORRENT_FILTERS,
  type TorrentInfo,
  torrentFiles,
  torrentProperties,
  torrentTrackers
} from "./torrentView.ts"

export const torrentReads = (ctx: EndpointContext): Readonly<Record<string, Endpoint>> => {
  const info = (form: RequestForm) =>
    Effect.gen(function* () {
      const filterName = form.get("filter") ?? "all"
      // Own names only ("constructor" is not a filter): anything else lists all.
      const keep =
        (Object.hasOwn(TORRENT_FILTERS, filterName) ? TORRENT_FILTERS[filterName] : undefined) ?? (() => true)
      const items = form.get("hashes") === undefined ? yield* ctx.torrents() : yield* ctx.selected(form)
      const category = form.get("category")
      const tag = form.get("tag")
      const wantPrivate = parseBool(form.get("private"))
      const view = yield* ctx.view
      const listed: Array<TorrentInfo> = []
      for (const item of items) {
        if (category !== undefined && item.category !== category) continue
        const tags = ctx.tags.of(item.id)
        if (tag !== undefined && (tag === "" ? tags.length > 0 : !tags.includes(tag))) continue
        const torrent = yield* ctx.info(item, view)
        if (torrent === undefined || !keep(String(torrent.state))) continue
        if (wantPrivate !== undefined && torrent.private !== wantPrivate) continue
        listed.push(torrent)
      }
      const sort = form.get("sort") ?? ""
      if (sort !== "" && listed.length > 0 && !Object.hasOwn(listed[0] ?? {}, sort)) {
        return yield* Effect.fail(text(400, "'sort' parameter is invalid"))
      }
      const sorted = sort === "" ? listed : sortTorrents(listed, sort, parseBool(form.get("reverse")) ?? false)
      return json(pageTorrents(sorted, integer(form.get("offset")) ?? 0, integer(form.get("limit")) ?? 0))
    })

  return {
    "torrents/info": read(info),
    "torrents/count": read(() => Effect.map(ctx.torrents(), (items) => text(200, String(items.length)))),
    "torrents/properties": read((form) =>
      Effect.gen(function* () {
        const item = yield* ctx.one(form)
        return json(torrentProperties(item, yield* ctx.facts(item.id), yield* ctx.view))
      })
    ),
    "torrents/files": read((form) =>
      Effect.gen(function* () {
        const item = yield* ctx.one(form)
        if (form.get("indexes") !== undefined && !/^\d+(\|\d+)*$/.test(form.get("indexes") ?? "")) {
          return yield* Effect.fail(badRequest('"indexes" is a list of file indexes separated by "|"'))
        }
        const files = torrentFiles(item, yield* ctx.facts(item.id))
        const wanted = form.get("indexes")?.split("|").map(Number)
        return json(wanted === undefined ? files : files.filter((f) => wanted.includes(f.index)))
      })
    ),
    "torrents/trackers": read((form) =>
      Effect.gen(function* () {
        const item = yield* ctx.one(form)
        return json(torrentTrackers(yield* ctx.facts(item.id)))
      })
    ),
    "torrents/webseeds": read((form) => Effect.as(ctx.one(form), json([])))
  }
}
