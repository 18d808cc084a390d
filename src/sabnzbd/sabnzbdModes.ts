/**
 * SABnzbd's other modes, as api.py answers them, over the intake:
 *
 * - retry (value = nzo_id) and retry_all: a failed job is sent again (removed, then added
 *   from its own NZB or URL, in its category): `{"status": true, "nzo_id": …}`; retry_all
 *   answers `{"status": [nzo_ids]}`.
 * - change_cat (value = nzo_ids, value2 = category; "*", "Default", "None" for none): a job
 *   not sent yet goes to the new category's folder, one sent keeps its files where they are.
 * - switch (value, value2): `{"result": {"position", "priority"}}`; the order is not kept
 *   (every job starts as soon as the account allows).
 * - get_files (value = nzo_id): the job's files, with their bytes left on local disk.
 * - config: speedlimit and set_pause are recorded and shown, not applied.
 * - server_stats: bytes completed through this surface, by day, week, month and in all.
 * - warnings, get_scripts: none, and only "None". showlog: a header naming where dlsync's
 *   log is (its own stderr or journal; the surface keeps none).
 */
import { Clock, Effect, Option } from "effect"
import { Intake, type IntakeItem } from "../intake/Intake.ts"
import { isQueued, megabytes, nzoIdOf, SABNZBD_VERSION } from "./sabnzbdFormat.ts"
import { categoryParam, commaList, jobs, SURFACE } from "./sabnzbdJobs.ts"
import { MSG_NO_VALUE, MSG_NO_VALUE2, MSG_NOT_IMPLEMENTED } from "./sabnzbdLists.ts"
import { done, problem, type Reply, report } from "./sabnzbdOutput.ts"
import type { SabnzbdState } from "./sabnzbdState.ts"

export const MSG_NO_ITEM = "item does not exist"

export const retry = Effect.fnUntraced(function* (value: string | undefined) {
  const nzoId = yield* retryJob(value ?? "")
  return nzoId === undefined ? problem(MSG_NO_ITEM) : report("", { status: true, nzo_id: nzoId })
})

export const retryAll = Effect.fnUntraced(function* () {
  const failed = (yield* jobs()).filter((i) => i.state === "failed")
  const again: Array<string> = []
  for (const item of failed) {
    const nzoId = yield* retryJob(nzoIdOf(item.id))
    if (nzoId !== undefined) again.push(nzoId)
  }
  return report("status", again)
})

export const changeCategory = Effect.fnUntraced(function* (params: ReadonlyMap<string, string>) {
  const intake = yield* Intake
  const ids = commaList(params.get("value"))
  const cat = params.get("value2")
  if (ids.length === 0 || cat === undefined || cat === "") return problem(MSG_NO_VALUE)
  const named = (yield* jobs()).filter((i) => ids.includes(nzoIdOf(i.id)))
  if (named.length === 0) return report("status", false)
  return yield* intake
    .setCategory(
      named.map((i) => i.id),
      categoryParam(cat)
    )
    .pipe(
      Effect.as<Reply>(report("status", true)),
      Effect.catchTag("IntakeError", () => Effect.succeed(report("status", false)))
    )
})

export const switchJobs = Effect.fnUntraced(function* (state: SabnzbdState, params: ReadonlyMap<string, string>) {
  const first = params.get("value")
  if (first === undefined || first === "" || (params.get("value2") ?? "") === "") return problem(MSG_NO_VALUE2)
  const queued = (yield* jobs()).filter(isQueued)
  const index = queued.findIndex((i) => nzoIdOf(i.id) === first)
  const item = queued[index]
  return report("result", { position: index, priority: item === undefined ? -1 : (state.priorities.get(item.id) ?? 0) })
})

export const getFiles = Effect.fnUntraced(function* (value: string | undefined) {
  if (value === undefined || value === "") return problem(MSG_NO_VALUE)
  const [item] = (yield* jobs()).filter((i) => nzoIdOf(i.id) === value)
  if (item === undefined) return report("files", [])
  // The files come with a listing by id.
  const [withFiles] = yield* jobs([item.id])
  return report(
    "files",
    (withFiles ?? item).files.map((file, index) => ({
      filename: file.name,
      mbleft: megabytes(file.size - file.localBytes),
      mb: megabytes(file.size),
      bytes: file.size.toFixed(2),
      age: "-",
      nzf_id: `SABnzbd_nzf_${index}`,
      status: file.localBytes >= file.size ? "finished" : "active"
    }))
  )
})

export const config = (state: SabnzbdState, name: string, value: string | undefined): Reply => {
  switch (name) {
    case "speedlimit":
      state.speedlimit = value === undefined || value === "" ? "0" : value
      return done
    case "set_pause":
      state.pauseInterval = Math.max(0, Number.parseInt(value ?? "0", 10) || 0)
      return done
    default:
      return problem(MSG_NOT_IMPLEMENTED)
  }
}

export const serverStats = Effect.fnUntraced(function* () {
  const now = yield* Clock.currentTimeMillis
  const completed = (yield* jobs()).filter((i) => i.state === "completed")
  const since = (ms: number) =>
    completed.filter((i) => (i.completedAt ?? 0) >= now - ms).reduce((sum, i) => sum + i.size, 0)
  return report("", {
    total: completed.reduce((sum, i) => sum + i.size, 0),
    month: since(30 * DAY),
    week: since(7 * DAY),
    day: since(DAY),
    servers: {}
  })
})

export const warnings = (name: string): Reply =>
  name === "" || name === "show" || name === "clear" ? report("warnings", []) : problem(MSG_NOT_IMPLEMENTED)

export const scripts: Reply = report("scripts", ["None"])

export const showlog: Reply = {
  _tag: "File",
  fileName: "sabnzbd.log",
  text: [
    "--------------------------------",
    `SABnzbd version: ${SABNZBD_VERSION} (the SABnzbd API of dlsync)`,
    "--------------------------------",
    "",
    "dlsync writes its log to its standard error (the journal under systemd, `docker logs`",
    "in a container); `dlsync status` shows each release's state and reason.",
    ""
  ].join("\n")
}

// ---------------------------------------------------------------------------------------

const DAY = 86_400_000

/** Sends a failed job again from its own source, in its category and under its name; its nzo_id, or none. */
const retryJob = Effect.fnUntraced(function* (nzoId: string) {
  const intake = yield* Intake
  const [item]: ReadonlyArray<IntakeItem> = (yield* jobs()).filter(
    (i) => i.state === "failed" && nzoIdOf(i.id) === nzoId
  )
  if (item === undefined) return undefined
  const source = yield* intake.source(item.id)
  if (Option.isNone(source)) return undefined
  yield* intake.remove([item.id], false).pipe(Effect.ignore)
  const again = yield* intake
    .add(source.value, { category: item.category, via: SURFACE, name: item.name })
    .pipe(Effect.option)
  yield* Effect.logInfo(`sabnzbd: ${item.name} sent again (retry)`)
  return Option.match(again, { onNone: () => undefined, onSome: (added) => nzoIdOf(added.id) })
})
