/**
 * The SABnzbd API's modes over the intake queue: one call's parameters in, its JSON answer
 * out (the HTTP plumbing, the Host check and the body limits are SabnzbdServer.ts).
 *
 * Answers follow SABnzbd 4.x (sabnzbd/api.py): a failed call is `{"status":false,"error":…}`,
 * an action `{"status":true,…}`, a listing `{"queue":{…}}` / `{"history":{…}}`. The API key
 * is checked as SABnzbd checks it (interface.py `check_apikey`): every mode but `version`
 * and `auth` needs it; none given is "API Key Required", another is "API Key Incorrect".
 */
import { createHash, timingSafeEqual } from "node:crypto"
import * as NodePath from "node:path"
import { Effect, Redacted } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"
import { isBelow } from "../fs/containment.ts"
import { Intake, type IntakeItem, type IntakeSource } from "../intake/Intake.ts"
import { type PathMap, toAppPath } from "../paths/pathMap.ts"
import {
  DEFAULT_CATEGORY,
  historySlot,
  inCategories,
  isQueued,
  megabytes,
  nzoIdOf,
  queueSlot,
  SABNZBD_VERSION
} from "./sabnzbdFormat.ts"

export interface SabnzbdApiOptions {
  readonly apiKey: Redacted.Redacted<string>
  /** The mirror root: SABnzbd's complete_dir, shown after pathMap. */
  readonly root: string
  readonly pathMap: PathMap
}

/** One call: its parameters (query and form fields, the first value of each) and its uploaded files. */
export interface SabnzbdCall {
  readonly params: ReadonlyMap<string, string>
  readonly files: ReadonlyArray<{ readonly key: string; readonly name: string; readonly content: Uint8Array }>
}

export type Json = Readonly<Record<string, unknown>>

export const MSG_APIKEY_REQUIRED = "API Key Required"
export const MSG_APIKEY_INCORRECT = "API Key Incorrect"
export const MSG_NO_VALUE = "expects one parameter"
export const MSG_NOT_IMPLEMENTED = "not implemented"

export const failure = (error: string): Json => ({ status: false, error })

/** Answers one call. Never fails: every problem is a SABnzbd error answer. */
export const answer = Effect.fn("Sabnzbd.answer")(function* (options: SabnzbdApiOptions, call: SabnzbdCall) {
  const mode = call.params.get("mode") ?? ""
  const keyProblem = checkApiKey(options.apiKey, mode, call.params.get("apikey"))
  if (keyProblem !== undefined) return failure(keyProblem)
  const intake = yield* Intake
  const name = call.params.get("name") ?? ""
  switch (mode) {
    case "version":
      return { version: SABNZBD_VERSION }
    case "auth":
      return { auth: "apikey" }
    case "get_config":
      return { config: yield* configDocument(options) }
    case "get_cats":
      return { categories: (yield* configDocument(options)).categories.map((c) => c.name) }
    case "fullstatus":
      return { status: yield* fullStatus(options) }
    case "addfile": {
      const file = call.files.find((f) => f.key === "name") ?? call.files.find((f) => f.key === "nzbfile")
      if (file === undefined || file.name === "") return failure(MSG_NO_VALUE)
      return yield* add({ _tag: "NzbFile", fileName: NodePath.basename(file.name), content: file.content }, call.params)
    }
    case "addurl": {
      const url = name.trim()
      if (url === "") return failure(MSG_NO_VALUE)
      return yield* add(
        url.toLowerCase().startsWith("magnet:") ? { _tag: "Magnet", uri: url } : { _tag: "Url", url },
        call.params
      )
    }
    case "queue":
      return yield* queueMode(name, call.params)
    case "history":
      return yield* historyMode(options, name, call.params)
    case "pause":
      yield* intake.pause(
        (yield* intake.list({ via: SURFACE })).filter((i) => isQueued(i) && i.state !== "paused").map((i) => i.id)
      )
      return { status: true }
    case "resume":
      yield* intake.resume((yield* intake.list({ via: SURFACE })).filter((i) => i.state === "paused").map((i) => i.id))
      return { status: true }
    default:
      return failure(MSG_NOT_IMPLEMENTED)
  }
})

/** SABnzbd's `check_apikey`: the message to answer with, or undefined when the call may go on. */
export const checkApiKey = (
  expected: Redacted.Redacted<string>,
  mode: string,
  given: string | undefined
): string | undefined => {
  if (mode === "version" || mode === "auth") return undefined
  if (given === undefined || given === "") return MSG_APIKEY_REQUIRED
  return sameSecret(given, Redacted.value(expected)) ? undefined : MSG_APIKEY_INCORRECT
}

// ---------------------------------------------------------------------------------------

/** The releases and categories this surface sees and acts on: its own. */
const SURFACE = "sabnzbd"

const add = Effect.fnUntraced(function* (source: IntakeSource, params: ReadonlyMap<string, string>) {
  const intake = yield* Intake
  const nzbname = params.get("nzbname")?.trim()
  return yield* intake
    .add(source, {
      category: categoryParam(params.get("cat")),
      // SABnzbd's priority -2 is "Paused": added, not started.
      paused: params.get("priority") === "-2",
      via: SURFACE,
      ...(nzbname ? { name: nzbname } : {})
    })
    .pipe(
      Effect.map((item): Json => ({ status: true, nzo_ids: [nzoIdOf(item.id)] })),
      Effect.catchTag("IntakeError", (error) => Effect.succeed({ status: false, error: error.problem, nzo_ids: [] }))
    )
})

const queueMode = Effect.fnUntraced(function* (name: string, params: ReadonlyMap<string, string>) {
  const intake = yield* Intake
  const queued = (yield* intake.list({ via: SURFACE })).filter(isQueued)
  switch (name) {
    case "delete": {
      const ids = selected(queued, params.get("value"))
      if (ids === undefined) return failure(MSG_NO_VALUE)
      return yield* remove(ids, params)
    }
    case "pause":
    case "resume": {
      const ids = selected(queued, params.get("value"), false) ?? []
      yield* name === "pause" ? intake.pause(ids) : intake.resume(ids)
      return { status: ids.length > 0, nzo_ids: ids.map(nzoIdOf) }
    }
    case "":
      break
    default:
      return failure(MSG_NOT_IMPLEMENTED)
  }
  const matching = queued.filter((item) => matches(item, params))
  const page = paged(matching, params)
  const start = pageStart(params)
  const size = matching.reduce((sum, i) => sum + i.size, 0)
  const left = matching.reduce((sum, i) => sum + i.remaining, 0)
  // SABnzbd's queue.paused is its downloader's pause: here, every item waiting is paused.
  const paused = queued.length > 0 && queued.every((i) => i.state === "paused")
  return {
    queue: {
      version: SABNZBD_VERSION,
      paused,
      paused_all: paused,
      status: paused
        ? "Paused"
        : queued.some((i) => i.state === "downloading" || i.state === "mirroring")
          ? "Downloading"
          : "Idle",
      mb: megabytes(size),
      mbleft: megabytes(left),
      size: `${megabytes(size)} MB`,
      sizeleft: `${megabytes(left)} MB`,
      kbpersec: "0.00",
      speed: "0 ",
      speedlimit: "100",
      speedlimit_abs: "",
      timeleft: "0:00:00",
      noofslots_total: queued.length,
      noofslots: matching.length,
      start,
      limit: Number(params.get("limit") ?? 0) || 0,
      finish: start + page.length,
      have_warnings: "0",
      pause_int: "0",
      diskspace1: "0.00",
      diskspace2: "0.00",
      slots: page.map((item, i) => queueSlot(item, start + i))
    }
  }
})

const historyMode = Effect.fnUntraced(function* (
  options: SabnzbdApiOptions,
  name: string,
  params: ReadonlyMap<string, string>
) {
  const intake = yield* Intake
  const finished = (yield* intake.list({ via: SURFACE })).filter((item) => !isQueued(item))
  switch (name) {
    case "delete": {
      const value = (params.get("value") ?? "").trim().toLowerCase()
      const ids =
        value === "failed" || value === "completed"
          ? finished.filter((i) => i.state === value).map((i) => i.id)
          : selected(finished, params.get("value"))
      if (ids === undefined) return failure(MSG_NO_VALUE)
      return yield* remove(ids, params)
    }
    case "":
      break
    default:
      return failure(MSG_NOT_IMPLEMENTED)
  }
  const matching = finished
    .filter((item) => matches(item, params))
    .filter((item) => params.get("failed_only") !== "1" || item.state === "failed")
    .sort((a, b) => finishedAt(b) - finishedAt(a))
  const page = paged(matching, params)
  const total = finished.reduce((sum, i) => sum + i.size, 0)
  return {
    history: {
      version: SABNZBD_VERSION,
      paused: false,
      noofslots: matching.length,
      total_size: `${megabytes(total)} MB`,
      month_size: "0 ",
      week_size: "0 ",
      day_size: "0 ",
      last_history_update: finished.length,
      ppslots: 0,
      slots: page.map((item) => historySlot(item, options.pathMap))
    }
  }
})

/** Removes the items named; `del_files=1` also deletes their files (the intake's delete gate applies). */
const remove = Effect.fnUntraced(function* (ids: ReadonlyArray<IntakeId>, params: ReadonlyMap<string, string>) {
  const intake = yield* Intake
  if (ids.length === 0) return { status: false, nzo_ids: [] }
  return yield* intake.remove(ids, params.get("del_files") === "1").pipe(
    Effect.as<Json>({ status: true, nzo_ids: ids.map(nzoIdOf) }),
    Effect.catchTag("IntakeError", (error) => Effect.succeed(failure(error.problem)))
  )
})

const configDocument = Effect.fnUntraced(function* (options: SabnzbdApiOptions) {
  const intake = yield* Intake
  const completeDir = toAppPath(options.pathMap, options.root)
  const categories = yield* intake.categories(SURFACE)
  return {
    misc: {
      complete_dir: completeDir,
      download_dir: completeDir,
      // Nothing is checked before download, no sorter renames what the apps import, and
      // history is kept until the app removes an item (so the apps do not warn about it).
      pre_check: false,
      enable_tv_sorting: false,
      tv_categories: [],
      enable_movie_sorting: false,
      movie_categories: [],
      enable_date_sorting: false,
      date_categories: [],
      history_retention: "",
      history_retention_option: "all",
      history_retention_number: 0,
      api_key: "",
      nzb_key: ""
    },
    categories: [
      { name: DEFAULT_CATEGORY, order: 0, pp: "3", script: "None", dir: "", newzbin: "", priority: -100 },
      ...categories
        .filter((c) => c.name !== "" && c.name !== DEFAULT_CATEGORY)
        .map((c, i) => ({
          name: c.name,
          order: i + 1,
          pp: "",
          script: "Default",
          dir: categoryDir(options, c.savePath),
          newzbin: "",
          priority: -100
        }))
    ],
    sorters: [],
    servers: []
  }
})

const fullStatus = Effect.fnUntraced(function* (options: SabnzbdApiOptions) {
  const intake = yield* Intake
  const queued = (yield* intake.list({ via: SURFACE })).filter(isQueued)
  const completeDir = toAppPath(options.pathMap, options.root)
  return {
    version: SABNZBD_VERSION,
    completedir: completeDir,
    downloaddir: completeDir,
    paused: queued.length > 0 && queued.every((i) => i.state === "paused"),
    servers: []
  }
})

/** A category's folder as SABnzbd writes it: relative to complete_dir, else as the app sees it. */
const categoryDir = (options: SabnzbdApiOptions, savePath: string): string => {
  return isBelow(options.root, savePath)
    ? NodePath.relative(options.root, savePath)
    : toAppPath(options.pathMap, savePath)
}

/** The IDs a `value` names among `items` (a comma list of nzo_ids, or "all"); undefined when it names nothing. */
const selected = (
  items: ReadonlyArray<IntakeItem>,
  value: string | undefined,
  allowAll = true
): ReadonlyArray<IntakeId> | undefined => {
  const names = commaList(value)
  if (names.length === 0) return undefined
  if (allowAll && names.some((n) => n.toLowerCase() === "all")) return items.map((i) => i.id)
  const wanted = new Set(names)
  return items.filter((i) => wanted.has(nzoIdOf(i.id))).map((i) => i.id)
}

/** The listing filters SABnzbd takes: `category` (or `cat`), `nzo_ids` and `search` (in the name), each a comma list. */
const matches = (item: IntakeItem, params: ReadonlyMap<string, string>): boolean => {
  const ids = commaList(params.get("nzo_ids"))
  const search = (params.get("search") ?? "").trim().toLowerCase()
  return (
    inCategories(item, commaList(params.get("category") ?? params.get("cat"))) &&
    (ids.length === 0 || ids.includes(nzoIdOf(item.id))) &&
    (search === "" || item.name.toLowerCase().includes(search))
  )
}

const commaList = (value: string | undefined): ReadonlyArray<string> =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")

/** "", "*", "Default" and "None" are SABnzbd's ways to say no category. */
const categoryParam = (cat: string | undefined): string => {
  const name = (cat ?? "").trim()
  return name === "" || name === DEFAULT_CATEGORY || name === "Default" || name === "None" ? "" : name
}

const pageStart = (params: ReadonlyMap<string, string>): number =>
  Math.max(0, Number.parseInt(params.get("start") ?? "0", 10) || 0)

/** `start`/`limit` as SABnzbd reads them: limit 0 (or none) is everything. */
const paged = <A>(items: ReadonlyArray<A>, params: ReadonlyMap<string, string>): ReadonlyArray<A> => {
  const start = pageStart(params)
  const limit = Math.max(0, Number.parseInt(params.get("limit") ?? "0", 10) || 0)
  return limit === 0 ? items.slice(start) : items.slice(start, start + limit)
}

const finishedAt = (item: IntakeItem): number => item.completedAt ?? item.addedAt

const sameSecret = (given: string, expected: string): boolean => timingSafeEqual(digest(given), digest(expected))

const digest = (text: string): Buffer => createHash("sha256").update(text).digest()
