/**
 * mode=queue and mode=history, with their `name` actions, as api.py answers them.
 *
 * The queue's numbers are the release views' (src/intake/releaseView.ts): `kbpersec` and
 * `speed` the sum of the jobs' rates (the service's while it downloads, the mirror's while
 * it copies), `mb`/`mbleft` their sizes and what is left (an NZB's own size before the
 * service knows one), `timeleft` what is left at that rate; each slot its own (sabnzbdFormat.ts).
 * queue&name=priority records the job's priority (shown in its slot; -2 pauses it, as in
 * SABnzbd, and Force resumes it); dlsync starts every job as soon as the account allows.
 * The history answers `{"history": false}` when `last_history_update` is the one it would
 * give (nothing changed since), as SABnzbd does.
 */
import { Effect } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"
import { Intake, type IntakeItem } from "../intake/Intake.ts"
import type { PathMap } from "../paths/pathMap.ts"
import {
  formatTimeLeft,
  historySlot,
  isQueued,
  megabytes,
  nzoIdOf,
  queueSlot,
  SABNZBD_VERSION,
  sizeOf,
  toUnits
} from "./sabnzbdFormat.ts"
import { commaList, extrasOf, intParam, jobs, matches, paged, selected } from "./sabnzbdJobs.ts"
import { problem, type Reply, report } from "./sabnzbdOutput.ts"
import { PAUSED_PRIORITY, PRIORITY_NAMES, type SabnzbdState } from "./sabnzbdState.ts"
import { diskSpace, isPaused, queueHeader } from "./sabnzbdStatus.ts"

export const MSG_NO_VALUE = "expects one parameter"
export const MSG_NO_VALUE2 = "expects two parameters"
export const MSG_INT_VALUE = "expects integer value"
export const MSG_NOT_IMPLEMENTED = "not implemented"

export const queueMode = Effect.fnUntraced(function* (
  root: string,
  state: SabnzbdState,
  name: string,
  params: ReadonlyMap<string, string>
) {
  const intake = yield* Intake
  const queued = (yield* jobs()).filter(isQueued)
  switch (name) {
    case "delete": {
      const ids = selected(queued, params.get("value"))
      if (ids === undefined) return problem(MSG_NO_VALUE)
      return yield* remove(ids, params)
    }
    case "pause":
    case "resume": {
      const ids = selected(queued, params.get("value"), false) ?? []
      yield* name === "pause" ? intake.pause(ids) : intake.resume(ids)
      return report("", { status: ids.length > 0, nzo_ids: ids.map(nzoIdOf) })
    }
    case "priority":
      return yield* setPriority(state, queued, params)
    case "":
      break
    default:
      return problem(MSG_NOT_IMPLEMENTED)
  }
  const matching = queued.filter((item) => matches(item, params))
  const page = paged(matching, params)
  const start = Math.max(0, intParam(params.get("start")))
  const limit = Math.max(0, intParam(params.get("limit")))
  const sizes = yield* Effect.forEach(matching, (item) =>
    Effect.map(extrasOf(item, state), (extras) => ({ item, extras, ...sizeOf(item, extras) }))
  )
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0)
  const left = sizes.reduce((sum, s) => sum + s.left, 0)
  const rate = queued.reduce((sum, i) => sum + (i.state === "paused" ? 0 : Math.max(0, i.rate)), 0)
  const paused = isPaused(queued)
  const slots = yield* Effect.forEach(page, (item, i) =>
    Effect.map(extrasOf(item, state), (extras) => queueSlot(item, start + i, extras))
  )
  return report("queue", {
    ...queueHeader(queued, state, yield* diskSpace(root)),
    kbpersec: (rate / 1024).toFixed(2),
    speed: toUnits(rate),
    mbleft: megabytes(left),
    mb: megabytes(total),
    sizeleft: toUnits(left, "B"),
    size: toUnits(total, "B"),
    noofslots_total: queued.length,
    noofslots: matching.length,
    start,
    limit,
    finish: start + limit,
    status: paused ? "Paused" : rate > 0 ? "Downloading" : "Idle",
    timeleft: left > 0 && rate > 0 ? formatTimeLeft(left / rate) : "0:00:00",
    slots
  })
})

export const historyMode = Effect.fnUntraced(function* (
  pathMap: PathMap,
  name: string,
  params: ReadonlyMap<string, string>
) {
  const finished = (yield* jobs()).filter((item) => !isQueued(item))
  switch (name) {
    case "delete": {
      const value = (params.get("value") ?? "").trim().toLowerCase()
      const ids =
        value === "failed" || value === "completed"
          ? finished.filter((i) => i.state === value).map((i) => i.id)
          : selected(finished, params.get("value"))
      if (ids === undefined) return problem(MSG_NO_VALUE)
      return yield* remove(ids, params)
    }
    case "":
      break
    default:
      return problem(MSG_NOT_IMPLEMENTED)
  }
  const update = historyVersion(finished)
  if (params.has("last_history_update") && intParam(params.get("last_history_update")) === update) {
    return report("history", false)
  }
  const statuses = commaList(params.get("status")).map((s) => s.toLowerCase())
  const failedOnly = intParam(params.get("failed_only")) > 0
  const matching = finished
    .filter((item) => matches(item, params))
    .filter((item) => !failedOnly || item.state === "failed")
    .filter((item) => statuses.length === 0 || statuses.includes(item.state))
    .sort((a, b) => finishedAt(b) - finishedAt(a))
  const total = finished.reduce((sum, i) => sum + i.size, 0)
  return report("history", {
    total_size: toUnits(total),
    month_size: toUnits(0),
    week_size: toUnits(0),
    day_size: toUnits(0),
    slots: paged(matching, params).map((item) => historySlot(item, pathMap)),
    ppslots: 0,
    noofslots: matching.length,
    last_history_update: update,
    version: SABNZBD_VERSION
  })
})

/** Removes the items named; `del_files=1` also deletes their files (the intake's delete gate applies). */
export const remove = Effect.fnUntraced(function* (ids: ReadonlyArray<IntakeId>, params: ReadonlyMap<string, string>) {
  const intake = yield* Intake
  if (ids.length === 0) return report("", { status: false, nzo_ids: [] })
  return yield* intake.remove(ids, params.get("del_files") === "1").pipe(
    Effect.as<Reply>(report("", { status: true, nzo_ids: ids.map(nzoIdOf) })),
    Effect.catchTag("IntakeError", (error) => Effect.succeed(problem(error.problem)))
  )
})

// ---------------------------------------------------------------------------------------

/** queue&name=priority: value = nzo_ids, value2 = the priority; answers the position of the (first) job, -1 when unknown. */
const setPriority = Effect.fnUntraced(function* (
  state: SabnzbdState,
  queued: ReadonlyArray<IntakeItem>,
  params: ReadonlyMap<string, string>
) {
  const intake = yield* Intake
  const ids = selected(queued, params.get("value"), false)
  const value = params.get("value2")
  if (ids === undefined || value === undefined || value === "") return problem(MSG_NO_VALUE2)
  if (!/^-?\d+$/.test(value.trim())) return problem(MSG_INT_VALUE)
  const priority = Number(value.trim())
  if (ids.length === 0) return report("position", -1)
  if (priority === PAUSED_PRIORITY) yield* intake.pause(ids)
  else if (PRIORITY_NAMES[priority] !== undefined) {
    for (const id of ids) state.priorities.set(id, priority)
    if (priority === 2) yield* intake.resume(ids)
  }
  return report(
    "position",
    queued.findIndex((i) => i.id === ids[0])
  )
})

const finishedAt = (item: IntakeItem): number => item.completedAt ?? item.addedAt

/** A number that changes whenever the history does (its jobs, their states and times). */
const historyVersion = (finished: ReadonlyArray<IntakeItem>): number => {
  let hash = 2_166_136_261
  for (const item of finished) {
    for (const ch of `${item.id}|${item.state}|${finishedAt(item)};`) {
      hash = Math.imul(hash ^ ch.charCodeAt(0), 16_777_619) >>> 0
    }
  }
  return hash
}
