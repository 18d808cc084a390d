/**
 * The SABnzbd API's modes over the intake queue: one call's parameters in, its reply out,
 * written as JSON or XML by sabnzbdOutput.ts (the HTTP plumbing and the body limits are
 * SabnzbdServer.ts). The modes: the queue and history (sabnzbdLists.ts), retry, categories,
 * files, config, stats, warnings, scripts, the log (sabnzbdModes.ts), the status document
 * (sabnzbdStatus.ts); an unknown mode is "not implemented", as in SABnzbd.
 *
 * Answers follow SABnzbd 4.5 (sabnzbd/api.py at 4.5.1, checked by
 * test/conformance/sabnzbd.test.ts). The API key is checked as SABnzbd checks it
 * (interface.py `check_apikey`): every mode but `version` and `auth` needs it; none given is
 * "API Key Required", another is "API Key Incorrect".
 */
import { createHash, timingSafeEqual } from "node:crypto"
import * as NodePath from "node:path"
import { Effect, Redacted } from "effect"
import { isBelow } from "../fs/containment.ts"
import { Intake, type IntakeSource } from "../intake/Intake.ts"
import { type PathMap, toAppPath } from "../paths/pathMap.ts"
import { nzbSize } from "./nzbSize.ts"
import { DEFAULT_CATEGORY, isQueued, nzoIdOf, SABNZBD_VERSION } from "./sabnzbdFormat.ts"
import { categoryParam, intParam, jobs, SURFACE } from "./sabnzbdJobs.ts"
import { historyMode, MSG_NO_VALUE, MSG_NOT_IMPLEMENTED, queueMode } from "./sabnzbdLists.ts"
import {
  changeCategory,
  config,
  getFiles,
  retry,
  retryAll,
  scripts,
  serverStats,
  showlog,
  switchJobs,
  warnings
} from "./sabnzbdModes.ts"
import { done, problem, type Reply, report } from "./sabnzbdOutput.ts"
import { DEFAULT_PRIORITY, PAUSED_PRIORITY, PRIORITY_NAMES, type SabnzbdState, stateOf } from "./sabnzbdState.ts"
import { diskSpace, statusDocument } from "./sabnzbdStatus.ts"

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
export { MSG_NO_VALUE, MSG_NOT_IMPLEMENTED } from "./sabnzbdLists.ts"

/** A refusal as SABnzbd's JSON writes it (for answers the server gives before a call is read). */
export const failure = (error: string): Json => ({ status: false, error })

/** Answers one call. Never fails: every problem is a SABnzbd error answer. */
export const answer = Effect.fn("Sabnzbd.answer")(function* (
  options: SabnzbdApiOptions,
  call: SabnzbdCall
): Effect.fn.Return<Reply, never, Intake> {
  const { params } = call
  const mode = params.get("mode") ?? ""
  const keyProblem = checkApiKey(options.apiKey, mode, params.get("apikey"))
  if (keyProblem !== undefined) return problem(keyProblem)
  const intake = yield* Intake
  const state = stateOf(options)
  const name = params.get("name") ?? ""
  switch (mode) {
    case "version":
      return report("version", SABNZBD_VERSION)
    case "auth":
      return report("auth", "apikey")
    case "get_config":
      return report("config", yield* configDocument(options))
    case "get_cats":
      return report(
        "categories",
        (yield* configDocument(options)).categories.map((c) => c.name)
      )
    case "fullstatus":
      return yield* fullStatus(options, state, params)
    case "status":
      // status with a name acts on servers and orphaned folders, which dlsync has none of.
      return STATUS_ACTIONS.has(name) ? done : yield* fullStatus(options, state, params)
    case "addfile": {
      const file = call.files.find((f) => f.key === "name") ?? call.files.find((f) => f.key === "nzbfile")
      if (file === undefined || file.name === "") return problem(MSG_NO_VALUE)
      return yield* add(
        state,
        { _tag: "NzbFile", fileName: NodePath.basename(file.name), content: file.content },
        params
      )
    }
    case "addurl": {
      const url = name.trim()
      if (url === "") return problem(MSG_NO_VALUE)
      return yield* add(
        state,
        url.toLowerCase().startsWith("magnet:") ? { _tag: "Magnet", uri: url } : { _tag: "Url", url },
        params
      )
    }
    case "queue":
      return yield* queueMode(options.root, state, name, params)
    case "history":
      return yield* historyMode(options.pathMap, name, params)
    case "pause":
      yield* intake.pause((yield* jobs()).filter((i) => isQueued(i) && i.state !== "paused").map((i) => i.id))
      return done
    case "resume":
      yield* intake.resume((yield* jobs()).filter((i) => i.state === "paused").map((i) => i.id))
      return done
    case "retry":
      return yield* retry(params.get("value"))
    case "retry_all":
      return yield* retryAll()
    case "change_cat":
      return yield* changeCategory(params)
    case "switch":
      return yield* switchJobs(state, params)
    case "get_files":
      return yield* getFiles(params.get("value"))
    case "config":
      return config(state, name, params.get("value"))
    case "server_stats":
      return yield* serverStats()
    case "warnings":
      return warnings(name)
    case "get_scripts":
      return scripts
    case "showlog":
      return showlog
    default:
      return problem(MSG_NOT_IMPLEMENTED)
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

/** mode=status's names (api.py `_api_status_table`): accepted, nothing to act on. */
const STATUS_ACTIONS = new Set(["unblock_server", "delete_orphan", "delete_all_orphan", "add_orphan", "add_all_orphan"])

const add = Effect.fnUntraced(function* (
  state: SabnzbdState,
  source: IntakeSource,
  params: ReadonlyMap<string, string>
) {
  const intake = yield* Intake
  const nzbname = params.get("nzbname")?.trim()
  const priority = intParam(params.get("priority") ?? String(DEFAULT_PRIORITY))
  return yield* intake
    .add(source, {
      category: categoryParam(params.get("cat")),
      // SABnzbd's priority -2 is "Paused": added, not started.
      paused: priority === PAUSED_PRIORITY,
      via: SURFACE,
      ...(nzbname ? { name: nzbname } : {})
    })
    .pipe(
      Effect.map((item): Reply => {
        if (PRIORITY_NAMES[priority] !== undefined) state.priorities.set(item.id, priority)
        if (source._tag === "NzbFile") state.nzbSizes.set(item.id, nzbSize(source.content))
        return report("", { status: true, nzo_ids: [nzoIdOf(item.id)] })
      }),
      Effect.catchTag("IntakeError", (error) =>
        Effect.succeed(report("", { status: false, error: error.problem, nzo_ids: [] }))
      )
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

const fullStatus = Effect.fnUntraced(function* (
  options: SabnzbdApiOptions,
  state: SabnzbdState,
  params: ReadonlyMap<string, string>
) {
  const queued = (yield* jobs()).filter(isQueued)
  return report(
    "status",
    statusDocument(queued, state, yield* diskSpace(options.root), {
      completeDir: toAppPath(options.pathMap, options.root),
      skipDashboard: intParam(params.get("skip_dashboard")) > 0 || params.get("skip_dashboard") === "true",
      uptimeSeconds: Math.floor(process.uptime())
    })
  )
})

/** A category's folder as SABnzbd writes it: relative to complete_dir, else as the app sees it. */
const categoryDir = (options: SabnzbdApiOptions, savePath: string): string => {
  return isBelow(options.root, savePath)
    ? NodePath.relative(options.root, savePath)
    : toAppPath(options.pathMap, savePath)
}

const sameSecret = (given: string, expected: string): boolean => timingSafeEqual(digest(given), digest(expected))

const digest = (text: string): Buffer => createHash("sha256").update(text).digest()
