/**
 * The calls that change torrents: add, delete, stop/start (and 4.x's pause/resume), force
 * start, and those accepted without effect (share limits, queue priorities, rechecks,
 * reannounces: nothing seeds here, and every release starts as soon as the account allows).
 *
 * As qBittorrent: `add` answers "Ok." when at least one source was taken, "Fails." when none
 * was, 415 for an uploaded file that is not a torrent; an action names its torrents with
 * `hashes` (400 without it) and skips hashes it does not know. Deliberately unlike it: adding
 * a torrent already present answers "Ok." (the apps retry an add they could not confirm),
 * and `delete` takes a missing `deleteFiles` as false.
 */
import { Effect } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"
import { categoryProblem } from "../intake/categoryName.ts"
import type { AddOptions, IntakeError, IntakeSource } from "../intake/Intake.ts"
import {
  badRequest,
  type Endpoint,
  intakeProblem,
  okEmpty,
  parseBool,
  type Response,
  splitTags,
  text,
  write
} from "./answers.ts"
import { type EndpointContext, SURFACE } from "./endpointContext.ts"
import { fetchTorrentUrl } from "./fetchTorrentUrl.ts"
import type { RequestForm } from "./requestForm.ts"
import { sourceFacts } from "./torrentSource.ts"

export const torrentActions = (ctx: EndpointContext): Readonly<Record<string, Endpoint>> => {
  const { intake } = ctx
  const fetchUrl = ctx.options.fetchUrl ?? fetchTorrentUrl

  const onIds = (f: (ids: ReadonlyArray<IntakeId>) => Effect.Effect<void, IntakeError>) => (form: RequestForm) =>
    Effect.gen(function* () {
      const items = yield* ctx.selected(form)
      if (items.length > 0) yield* f(items.map((item) => item.id)).pipe(Effect.mapError(intakeProblem))
      return okEmpty
    })

  /** Names torrents and changes nothing (see the file's comment). */
  const accepted = (form: RequestForm) => Effect.as(ctx.selected(form), okEmpty)

  const sourceOfUrl = (url: string): Effect.Effect<IntakeSource, string> => {
    if (/^magnet:/i.test(url)) return Effect.succeed({ _tag: "Magnet", uri: url })
    if (/^https?:\/\//i.test(url)) return fetchUrl(url)
    // A bare info-hash, as qBittorrent accepts one.
    if (/^[0-9a-f]{40}$/i.test(url) || /^[a-z2-7]{32}$/i.test(url)) {
      return Effect.succeed({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${url}` })
    }
    return Effect.fail(`${JSON.stringify(url.slice(0, 80))} is neither a magnet link nor an http(s) URL`)
  }

  const add = (form: RequestForm) =>
    Effect.gen(function* () {
      const category = (form.get("category") ?? "").trim()
      const problem = categoryProblem(category)
      if (problem !== undefined) return yield* Effect.fail(badRequest(problem))
      const stopped = parseBool(form.get("stopped")) ?? parseBool(form.get("paused")) ?? false
      const tags = splitTags(form.get("tags"))
      const urls = (form.get("urls") ?? "")
        .split(/\r?\n/)
        .map((u) => u.trim())
        .filter((u) => u !== "")
      const addOptions: AddOptions = { category, paused: stopped, via: SURFACE }
      let added = 0
      let unavailable: string | undefined
      const take = (source: Effect.Effect<IntakeSource, string>) =>
        Effect.gen(function* () {
          const outcome = yield* source.pipe(
            Effect.flatMap((s) => intake.add(s, addOptions)),
            Effect.result
          )
          if (outcome._tag === "Success") {
            added += 1
            if (tags.length > 0) ctx.tags.add(outcome.success.id, tags)
            yield* ctx.note(`Added new torrent. Torrent: "${outcome.success.name}" (${category || "no category"})`)
            return
          }
          const failure = outcome.failure
          if (typeof failure !== "string" && failure.reason === "unavailable") unavailable = failure.problem
          else yield* ctx.note(`Refused a torrent: ${typeof failure === "string" ? failure : failure.problem}`, 4)
        })
      for (const url of urls) yield* take(sourceOfUrl(url))
      for (const file of form.files) {
        const source: IntakeSource = { _tag: "TorrentFile", fileName: file.fileName, content: file.content }
        if (sourceFacts(source).metadata === undefined) {
          return yield* Effect.fail(text(415, `Error: '${file.fileName}' is not a valid torrent file.`))
        }
        yield* take(Effect.succeed(source))
      }
      // As qBittorrent does, a category named in an add exists from then on.
      if (added > 0 && category !== "") {
        const known = yield* intake.categories(SURFACE)
        if (!known.some((c) => c.name === category)) {
          yield* intake.createCategory(SURFACE, category).pipe(Effect.mapError(intakeProblem))
        }
      }
      if (added > 0) return text(200, "Ok.")
      if (unavailable !== undefined) {
        return yield* Effect.fail(text(503, `dlsync cannot record the torrent: ${unavailable}`))
      }
      return text(200, "Fails.")
    })

  const remove = (form: RequestForm): Effect.Effect<Response, Response> =>
    Effect.gen(function* () {
      const items = yield* ctx.selected(form)
      const deleteFiles = parseBool(form.get("deleteFiles")) ?? false
      if (items.length === 0) return okEmpty
      const ids = items.map((item) => item.id)
      yield* intake.remove(ids, deleteFiles).pipe(Effect.mapError(intakeProblem))
      ctx.forget(ids)
      for (const item of items) {
        yield* ctx.note(`Removed torrent${deleteFiles ? " and its files" : ""}. Torrent: "${item.name}"`)
      }
      return okEmpty
    })

  const stop = onIds((ids) => intake.pause(ids))
  const start = onIds((ids) => intake.resume(ids))
  return {
    "torrents/add": write(add),
    "torrents/delete": write(remove),
    "torrents/stop": write(stop),
    "torrents/start": write(start),
    "torrents/pause": write(stop),
    "torrents/resume": write(start),
    "torrents/setForceStart": write((form) => ((parseBool(form.get("value")) ?? false) ? start(form) : accepted(form))),
    "torrents/setShareLimits": write(accepted),
    "torrents/topPrio": write(accepted),
    "torrents/bottomPrio": write(accepted),
    "torrents/increasePrio": write(accepted),
    "torrents/decreasePrio": write(accepted),
    "torrents/recheck": write(accepted),
    "torrents/reannounce": write(accepted)
  }
}
