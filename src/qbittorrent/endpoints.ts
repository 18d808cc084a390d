/**
 * The qBittorrent Web API v2 calls, one entry per `scope/action`, over the intake queue.
 * Which calls the *arr apps make and what they read: ../../shared/arr-download-client-surface.md
 * (Sonarr's QBittorrentProxyV2.cs and QBittorrent.cs).
 *
 * Answers follow qBittorrent 5.0 (WebAPI 2.11): plain text "Ok."/"Fails." for add, an empty
 * 200 for other actions, JSON for reads; an unknown hash in an action is skipped as
 * qBittorrent skips it, and 404 for the one-torrent reads (properties, files), which the
 * apps read as "not loaded yet". A parameter that cannot be right (a malformed hash, a
 * category that is not a folder name, a missing source) is a 400 naming it.
 *
 * What dlsync does not keep: `savepath` (a release goes to `<mirror root>/<category>`),
 * share limits and priorities (nothing seeds; everything starts as soon as the account
 * allows), and preferences written through app/setPreferences (accepted, not applied).
 * Tags are kept in memory, for tools that read them back; they do not survive a restart.
 */
import { Clock, Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { IntakeId } from "../domain/IntakeId.ts"
import { categoryProblem } from "../intake/categoryName.ts"
import type { AddOptions, Intake, IntakeError, IntakeSource } from "../intake/Intake.ts"
import type { PathMap } from "../paths/pathMap.ts"
import { toAppPath } from "../paths/pathMap.ts"
import type { ListenAddress } from "../server/ListenAddress.ts"
import { fetchTorrentUrl } from "./fetchTorrentUrl.ts"
import { hashOfId, parseHashes } from "./hashes.ts"
import { preferences } from "./preferences.ts"
import type { RequestForm } from "./requestForm.ts"
import {
  pageTorrents,
  sortTorrents,
  TORRENT_FILTERS,
  type TorrentInfo,
  torrentFiles,
  torrentInfo,
  torrentProperties
} from "./torrentView.ts"

/** What qBittorrent 5.0 reports; the apps parse the Web API version with .NET `Version.Parse`. */
export const APP_VERSION = "v5.0.5"
export const WEBAPI_VERSION = "2.11.2"

export type Response = HttpServerResponse.HttpServerResponse

export interface Endpoint {
  /** Changes something: POST only (qBittorrent 5 answers 405 to a GET). */
  readonly write: boolean
  readonly run: (form: RequestForm) => Effect.Effect<Response>
}

export interface EndpointOptions {
  readonly intake: Intake["Service"]
  readonly mirrorRoot: string
  readonly pathMap: PathMap
  readonly listen: ListenAddress
  readonly username: string
  /** Where `urls=https://…` sources come from (fetchTorrentUrl in production). */
  readonly fetchUrl?: (url: string) => Effect.Effect<IntakeSource, string>
}

/** The calls other than auth/login and auth/logout (the server answers those, as they touch the session). */
export const makeEndpoints = (options: EndpointOptions): Readonly<Record<string, Endpoint>> => {
  const { intake, pathMap } = options
  const fetchUrl = options.fetchUrl ?? fetchTorrentUrl
  /** Tags by item, and every tag created; in memory (see the file's comment). */
  const tagsById = new Map<IntakeId, Set<string>>()
  const knownTags = new Set<string>()

  const context = Effect.map(Clock.currentTimeMillis, (now) => ({ now, pathMap }))
  const torrents = (ids?: ReadonlyArray<IntakeId>) =>
    Effect.map(intake.list(ids === undefined ? { via: SURFACE } : { via: SURFACE, ids }), (items) =>
      items.filter((item) => hashOfId(item.id) !== undefined)
    )
  const tagsOf = (id: IntakeId) => [...(tagsById.get(id) ?? [])].sort()

  /** The existing torrents a `hashes` parameter names (`all`: every one); unknown hashes are skipped. */
  const selected = (form: RequestForm, name = "hashes") =>
    Effect.gen(function* () {
      const text = form.get(name)
      if (text === undefined) return yield* Effect.fail(badRequest(`missing parameter "${name}"`))
      const selection = parseHashes(text)
      switch (selection._tag) {
        case "Invalid":
          return yield* Effect.fail(badRequest(selection.problem))
        case "All":
          return yield* torrents()
        case "Ids":
          return selection.ids.length === 0 ? [] : yield* torrents(selection.ids)
      }
    })

  /** The one torrent a `hash` parameter names: 400 when malformed, 404 when unknown. */
  const one = (form: RequestForm) =>
    Effect.gen(function* () {
      const text = form.get("hash")
      if (text === undefined) return yield* Effect.fail(badRequest('missing parameter "hash"'))
      const selection = parseHashes(text)
      if (selection._tag === "Invalid") return yield* Effect.fail(badRequest(selection.problem))
      if (selection._tag === "All" || selection.ids.length !== 1) {
        return yield* Effect.fail(badRequest('"hash" names one torrent'))
      }
      const [item] = yield* torrents(selection.ids)
      if (item === undefined) return yield* Effect.fail(status(404, "Not Found"))
      return item
    })

  const categoryParameter = (form: RequestForm, name = "category") =>
    Effect.gen(function* () {
      const category = (form.get(name) ?? "").trim()
      const problem = categoryProblem(category)
      return problem === undefined ? category : yield* Effect.fail(badRequest(problem))
    })

  const categoryExists = (name: string) =>
    Effect.map(intake.categories(SURFACE), (categories) => categories.some((c) => c.name === name))

  const onIds = (f: (ids: ReadonlyArray<IntakeId>) => Effect.Effect<void, IntakeError>) => (form: RequestForm) =>
    Effect.gen(function* () {
      const items = yield* selected(form)
      if (items.length > 0) yield* f(items.map((item) => item.id)).pipe(Effect.mapError(intakeProblem))
      return okEmpty
    })

  /** Validates `hashes` and changes nothing (share limits, priorities, rechecks: see the file's comment). */
  const accepted = (form: RequestForm) => Effect.as(selected(form), okEmpty)

  const add = (form: RequestForm) =>
    Effect.gen(function* () {
      const category = yield* categoryParameter(form)
      const stopped = parseBool(form.get("stopped")) ?? parseBool(form.get("paused")) ?? false
      const tags = splitTags(form.get("tags"))
      const urls = (form.get("urls") ?? "")
        .split(/\r?\n/)
        .map((u) => u.trim())
        .filter((u) => u !== "")
      if (urls.length === 0 && form.files.length === 0) {
        return yield* Effect.fail(badRequest('torrents/add needs "urls" (magnet or http(s) links) or a .torrent file'))
      }
      const addOptions: AddOptions = { category, paused: stopped, via: SURFACE }
      const sources: Array<Effect.Effect<IntakeSource, string>> = [
        ...urls.map(sourceOfUrl),
        ...form.files.map((file) =>
          Effect.succeed<IntakeSource>({ _tag: "TorrentFile", fileName: file.fileName, content: file.content })
        )
      ]
      let added = 0
      let unavailable: string | undefined
      for (const source of sources) {
        const outcome = yield* source.pipe(
          Effect.flatMap((s) =>
            intake
              .add(s, addOptions)
              .pipe(Effect.mapError((e) => (e.reason === "unavailable" ? { unavailable: e.problem } : e.problem)))
          ),
          Effect.result
        )
        if (outcome._tag === "Success") {
          added += 1
          if (tags.length > 0) addTags(outcome.success.id, tags)
          yield* Effect.logInfo(`qbittorrent: added ${outcome.success.name} (${category || "no category"})`)
        } else if (typeof outcome.failure === "string") {
          yield* Effect.logWarning(`qbittorrent: torrents/add refused a source: ${outcome.failure}`)
        } else {
          unavailable = outcome.failure.unavailable
        }
      }
      // As qBittorrent does, a category named in an add exists from then on.
      if (added > 0 && category !== "" && !(yield* categoryExists(category))) {
        yield* intake.createCategory(SURFACE, category).pipe(Effect.mapError(intakeProblem))
      }
      if (added > 0) return text(200, "Ok.")
      if (unavailable !== undefined)
        return yield* Effect.fail(status(503, `dlsync cannot record the torrent: ${unavailable}`))
      return text(200, "Fails.")
    })

  const sourceOfUrl = (url: string): Effect.Effect<IntakeSource, string> => {
    if (/^magnet:/i.test(url)) return Effect.succeed({ _tag: "Magnet", uri: url })
    if (/^https?:\/\//i.test(url)) return fetchUrl(url)
    // A bare info-hash, as qBittorrent accepts one.
    if (/^[0-9a-f]{40}$/i.test(url) || /^[a-z2-7]{32}$/i.test(url)) {
      return Effect.succeed({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${url}` })
    }
    return Effect.fail(`${JSON.stringify(url.slice(0, 80))} is neither a magnet link nor an http(s) URL`)
  }

  const addTags = (id: IntakeId, tags: ReadonlyArray<string>) => {
    const set = tagsById.get(id) ?? new Set<string>()
    for (const tag of tags) {
      set.add(tag)
      knownTags.add(tag)
    }
    tagsById.set(id, set)
  }

  const info = (form: RequestForm) =>
    Effect.gen(function* () {
      // As qBittorrent: an unknown filter ("constructor" too: own names only) lists all.
      const filterName = form.get("filter") ?? "all"
      const keep =
        (Object.hasOwn(TORRENT_FILTERS, filterName) ? TORRENT_FILTERS[filterName] : undefined) ?? (() => true)
      const hashes = form.get("hashes")
      const items = hashes === undefined ? yield* torrents() : yield* selected(form)
      const category = form.get("category")
      const tag = form.get("tag")
      const ctx = yield* context
      const listed: Array<TorrentInfo> = []
      for (const item of items) {
        if (category !== undefined && item.category !== category) continue
        const tags = tagsOf(item.id)
        if (tag !== undefined && (tag === "" ? tags.length > 0 : !tags.includes(tag))) continue
        const view = torrentInfo(item, tags, ctx)
        if (view !== undefined && keep(String(view.state))) listed.push(view)
      }
      const sort = form.get("sort")
      const sorted = sort === undefined ? listed : sortTorrents(listed, sort, parseBool(form.get("reverse")) ?? false)
      return json(pageTorrents(sorted, integer(form.get("offset")) ?? 0, integer(form.get("limit")) ?? 0))
    })

  const categories = Effect.gen(function* () {
    const list = yield* intake.categories(SURFACE)
    return json(
      Object.fromEntries(list.map((c) => [c.name, { name: c.name, savePath: toAppPath(pathMap, c.savePath) }]))
    )
  })

  const endpoints: Record<string, Endpoint> = {
    "app/version": read(() => Effect.succeed(text(200, APP_VERSION))),
    "app/webapiVersion": read(() => Effect.succeed(text(200, WEBAPI_VERSION))),
    "app/buildInfo": read(() =>
      Effect.succeed(
        json({ qt: "6.7.3", libtorrent: "2.0.10.0", boost: "1.86.0", openssl: "3.4.0", zlib: "1.3.1", bitness: 64 })
      )
    ),
    "app/preferences": read(() =>
      Effect.succeed(
        json(
          preferences({
            mirrorRoot: options.mirrorRoot,
            pathMap,
            listen: options.listen,
            username: options.username
          })
        )
      )
    ),
    "app/setPreferences": write(() => Effect.succeed(okEmpty)),
    "app/defaultSavePath": read(() => Effect.succeed(text(200, toAppPath(pathMap, options.mirrorRoot)))),
    "transfer/info": read(() =>
      Effect.gen(function* () {
        const ctx = yield* context
        const speeds = (yield* torrents()).map((item) => Number(torrentInfo(item, [], ctx)?.dlspeed ?? 0))
        return json({
          connection_status: "connected",
          dl_info_speed: speeds.reduce((a, b) => a + b, 0),
          dl_info_data: 0,
          up_info_speed: 0,
          up_info_data: 0,
          dl_rate_limit: 0,
          up_rate_limit: 0,
          dht_nodes: 0
        })
      })
    ),
    "torrents/info": read(info),
    "torrents/count": read(() => Effect.map(torrents(), (items) => text(200, String(items.length)))),
    "torrents/properties": read((form) =>
      Effect.flatMap(one(form), (item) => Effect.map(context, (ctx) => json(torrentProperties(item, ctx))))
    ),
    "torrents/files": read((form) => Effect.map(one(form), (item) => json(torrentFiles(item)))),
    "torrents/add": write(add),
    "torrents/delete": write((form) =>
      Effect.gen(function* () {
        const items = yield* selected(form)
        const deleteFiles = parseBool(form.get("deleteFiles")) ?? false
        if (items.length === 0) return okEmpty
        yield* intake
          .remove(
            items.map((item) => item.id),
            deleteFiles
          )
          .pipe(Effect.mapError(intakeProblem))
        for (const item of items) tagsById.delete(item.id)
        yield* Effect.logInfo(
          `qbittorrent: removed ${items.map((item) => item.name).join(", ")}${deleteFiles ? " with its files" : ""}`
        )
        return okEmpty
      })
    ),
    "torrents/categories": read(() => categories),
    "torrents/createCategory": write((form) =>
      Effect.gen(function* () {
        const category = yield* categoryParameter(form)
        if (category === "") return yield* Effect.fail(badRequest('missing parameter "category"'))
        if (yield* categoryExists(category)) return yield* Effect.fail(status(409, "Category already exists"))
        yield* intake.createCategory(SURFACE, category).pipe(Effect.mapError(intakeProblem))
        return okEmpty
      })
    ),
    "torrents/editCategory": write((form) =>
      Effect.gen(function* () {
        const category = yield* categoryParameter(form)
        if (category === "") return yield* Effect.fail(badRequest('missing parameter "category"'))
        if (!(yield* categoryExists(category))) return yield* Effect.fail(status(409, "Category does not exist"))
        // A category's folder is always `<mirror root>/<category>`; a savePath is not applied.
        return okEmpty
      })
    ),
    "torrents/removeCategories": write((form) =>
      Effect.gen(function* () {
        const names = (form.get("categories") ?? "")
          .split(/\r?\n/)
          .map((n) => n.trim())
          .filter((n) => n !== "")
        if (names.length > 0) yield* intake.removeCategories(SURFACE, names)
        return okEmpty
      })
    ),
    "torrents/setCategory": write((form) =>
      Effect.gen(function* () {
        const category = yield* categoryParameter(form)
        if (category !== "" && !(yield* categoryExists(category))) {
          return yield* Effect.fail(status(409, "Category does not exist"))
        }
        return yield* onIds((ids) => intake.setCategory(ids, category))(form)
      })
    ),
    "torrents/pause": write(onIds((ids) => intake.pause(ids))),
    "torrents/stop": write(onIds((ids) => intake.pause(ids))),
    "torrents/resume": write(onIds((ids) => intake.resume(ids))),
    "torrents/start": write(onIds((ids) => intake.resume(ids))),
    "torrents/setForceStart": write((form) =>
      (parseBool(form.get("value")) ?? false) ? onIds((ids) => intake.resume(ids))(form) : accepted(form)
    ),
    "torrents/setShareLimits": write(accepted),
    "torrents/topPrio": write(accepted),
    "torrents/bottomPrio": write(accepted),
    "torrents/increasePrio": write(accepted),
    "torrents/decreasePrio": write(accepted),
    "torrents/recheck": write(accepted),
    "torrents/reannounce": write(accepted),
    "torrents/tags": read(() => Effect.succeed(json([...knownTags].sort()))),
    "torrents/createTags": write((form) =>
      Effect.sync(() => {
        for (const tag of splitTags(form.get("tags"))) knownTags.add(tag)
        return okEmpty
      })
    ),
    "torrents/deleteTags": write((form) =>
      Effect.sync(() => {
        for (const tag of splitTags(form.get("tags"))) {
          knownTags.delete(tag)
          for (const set of tagsById.values()) set.delete(tag)
        }
        return okEmpty
      })
    ),
    "torrents/addTags": write((form) =>
      Effect.gen(function* () {
        const tags = splitTags(form.get("tags"))
        for (const item of yield* selected(form)) addTags(item.id, tags)
        return okEmpty
      })
    ),
    "torrents/removeTags": write((form) =>
      Effect.gen(function* () {
        const tags = form.get("tags") === undefined ? undefined : splitTags(form.get("tags"))
        for (const item of yield* selected(form)) {
          if (tags === undefined) tagsById.delete(item.id)
          else for (const tag of tags) tagsById.get(item.id)?.delete(tag)
        }
        return okEmpty
      })
    )
  }
  return endpoints
}

/** A plain-text answer, as qBittorrent sends its texts. */
export const text = (code: number, body: string): Response =>
  HttpServerResponse.text(body, { status: code, headers: NO_STORE })

/** True/False in any case (the apps send "True"), 1/0; undefined when absent or neither. */
export const parseBool = (value: string | undefined): boolean | undefined => {
  const v = value?.trim().toLowerCase()
  return v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : undefined
}

// ---------------------------------------------------------------------------------------

/** The releases and categories this surface sees and acts on: its own. */
const SURFACE = "qbittorrent"

const NO_STORE = { "cache-control": "no-store" }

const okEmpty = HttpServerResponse.empty({ status: 200, headers: NO_STORE })

const json = (value: unknown): Response => HttpServerResponse.jsonUnsafe(value, { headers: NO_STORE })

const status = (code: number, body: string): Response => text(code, body)

const badRequest = (problem: string): Response => text(400, `${problem}\n`)

const intakeProblem = (error: IntakeError): Response =>
  error.reason === "invalid" ? badRequest(error.problem) : status(503, `${error.problem}\n`)

/** An endpoint whose failures are answers already (400, 404, 409, 503). */
const endpoint =
  (writes: boolean) =>
  (run: (form: RequestForm) => Effect.Effect<Response, Response>): Endpoint => ({
    write: writes,
    run: (form) => Effect.catch(run(form), Effect.succeed)
  })
const read = endpoint(false)
const write = endpoint(true)

const splitTags = (value: string | undefined): ReadonlyArray<string> =>
  (value ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")

const integer = (value: string | undefined): number | undefined =>
  value !== undefined && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : undefined
