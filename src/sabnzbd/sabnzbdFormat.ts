/**
 * How intake items read as SABnzbd queue and history slots: pure, and strict where the
 * apps are strict (Sonarr parses `status` as an enum and `timeleft` as H:MM:SS or
 * D:HH:MM:SS, and fails the whole poll on anything else; `mb`/`mbleft` are decimal strings
 * as SABnzbd writes them).
 *
 *   queued → Queued · paused → Paused · downloading, mirroring → Downloading   (queue)
 *   completed → Completed · failed → Failed with fail_message                    (history)
 *
 * The nzo_id is `SABnzbd_nzo_` + the hash part of the IntakeId (the info-hash or the content
 * hash, lowercase hex): stable across restarts, the same in queue and history, and unique
 * because the IntakeId is.
 */

import type { IntakeId } from "../domain/IntakeId.ts"
import type { IntakeItem } from "../intake/Intake.ts"
import { type PathMap, toAppPath } from "../paths/pathMap.ts"

/** The version reported: SABnzbd 4.x semantics (what the apps test against), `\d+.\d+.\d+`. */
export const SABNZBD_VERSION = "4.5.1"

/** SABnzbd's name for "no category". */
export const DEFAULT_CATEGORY = "*"

export const nzoIdOf = (id: IntakeId): string => `SABnzbd_nzo_${id.slice(id.indexOf(":") + 1)}`

/** Items in the queue: not yet complete, not failed. */
export const isQueued = (item: IntakeItem): boolean => item.state !== "completed" && item.state !== "failed"

/** The category as the apps compare it: "*" for none. */
export const categoryOf = (item: IntakeItem): string => (item.category === "" ? DEFAULT_CATEGORY : item.category)

/** Whether an item passes a `category`/`cat` filter (a comma list; "*" and "Default" are no category). */
export const inCategories = (item: IntakeItem, filter: ReadonlyArray<string>): boolean =>
  filter.length === 0 ||
  filter.some((name) => {
    const wanted = name === "Default" ? DEFAULT_CATEGORY : name
    return wanted.toLowerCase() === categoryOf(item).toLowerCase()
  })

export const queueSlot = (item: IntakeItem, index: number) => ({
  index,
  nzo_id: nzoIdOf(item.id),
  filename: item.name,
  cat: categoryOf(item),
  priority: "Normal",
  status: queueStatus(item),
  mb: megabytes(item.size),
  mbleft: megabytes(item.remaining),
  size: `${megabytes(item.size)} MB`,
  sizeleft: `${megabytes(item.remaining)} MB`,
  percentage: String(Math.max(0, Math.min(100, Math.floor(item.progress * 100)))),
  timeleft: item.state === "paused" || item.etaSeconds === null ? "0:00:00" : formatTimeLeft(item.etaSeconds),
  labels: item.reason === null ? [] : [item.reason],
  script: "None",
  password: "",
  unpackopts: "3",
  avg_age: "-",
  time_added: Math.floor(item.addedAt / 1000)
})

export const historySlot = (item: IntakeItem, pathMap: PathMap) => {
  const completed = item.state === "completed"
  const storage = toAppPath(pathMap, item.contentPath)
  return {
    nzo_id: nzoIdOf(item.id),
    name: item.name,
    nzb_name: item.name,
    category: categoryOf(item),
    status: completed ? "Completed" : "Failed",
    fail_message: completed ? "" : (item.reason ?? "the download failed"),
    bytes: item.size,
    size: `${megabytes(item.size)} MB`,
    storage,
    path: storage,
    completed: Math.floor((item.completedAt ?? item.addedAt) / 1000),
    download_time: Math.max(0, Math.floor(((item.completedAt ?? item.addedAt) - item.addedAt) / 1000)),
    postproc_time: 0,
    time_added: Math.floor(item.addedAt / 1000),
    pp: "D",
    script: "None",
    url: "",
    downloaded: completed ? item.size : item.size - item.remaining,
    completeness: null,
    stage_log: [],
    retry: 0
  }
}

/** SABnzbd's time left: H:MM:SS, or D:HH:MM:SS from a day on; 0 and below are "0:00:00". */
export const formatTimeLeft = (seconds: number): string => {
  const total = Math.max(0, Math.floor(seconds))
  const s = total % 60
  const m = Math.floor(total / 60) % 60
  const h = Math.floor(total / 3600) % 24
  const d = Math.floor(total / 86400)
  const two = (n: number) => String(n).padStart(2, "0")
  return d > 0 ? `${d}:${two(h)}:${two(m)}:${two(s)}` : `${h}:${two(m)}:${two(s)}`
}

/** Bytes as SABnzbd's MB strings ("%.2f" of MiB). */
export const megabytes = (bytes: number): string => (Math.max(0, bytes) / 1024 / 1024).toFixed(2)

const queueStatus = (item: IntakeItem): "Queued" | "Paused" | "Downloading" => {
  switch (item.state) {
    case "paused":
      return "Paused"
    case "queued":
      return "Queued"
    default:
      return "Downloading"
  }
}
