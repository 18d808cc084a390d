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
import { PRIORITY_NAMES } from "./sabnzbdState.ts"

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

/** What the surface knows of a job besides its item (sabnzbdState.ts). */
export interface JobExtras {
  /** SABnzbd's priority number (-1 low … 2 force). */
  readonly priority: number
  /** The NZB's size, shown until the service knows the size (0: none). */
  readonly nzbSize: number
}

/**
 * A queue slot (api.py build_queue), its numbers the release's view: `mb`/`mbleft` from its
 * size and what is left (the NZB's size before the service knows one), `percentage` from
 * them, `timeleft` from its ETA.
 */
export const queueSlot = (item: IntakeItem, index: number, extras: JobExtras) => {
  const { bytes, left } = sizeOf(item, extras)
  return {
    index,
    nzo_id: nzoIdOf(item.id),
    unpackopts: "3",
    priority: PRIORITY_NAMES[extras.priority] ?? "Normal",
    script: "None",
    filename: item.name,
    labels: item.reason === null ? [] : [item.reason],
    password: "",
    cat: categoryOf(item),
    mbleft: megabytes(left),
    mb: megabytes(bytes),
    size: toUnits(bytes, "B"),
    sizeleft: toUnits(left, "B"),
    percentage: bytes !== left && bytes > 0 ? String(Math.floor(((bytes - left) / bytes) * 100)) : "0",
    mbmissing: "0.00",
    direct_unpack: null,
    status: queueStatus(item),
    timeleft: item.state === "paused" || item.etaSeconds === null ? "0:00:00" : formatTimeLeft(item.etaSeconds),
    avg_age: "-",
    time_added: Math.floor(item.addedAt / 1000)
  }
}

/** A job's size and what is left of it, in bytes. */
export const sizeOf = (item: IntakeItem, extras: JobExtras): { readonly bytes: number; readonly left: number } =>
  item.size > 0 || item.state === "completed"
    ? { bytes: item.size, left: item.remaining }
    : { bytes: extras.nzbSize, left: extras.nzbSize }

/** A history slot with every key SABnzbd's history database gives (database.py, api.py). */
export const historySlot = (item: IntakeItem, pathMap: PathMap) => {
  const completed = item.state === "completed"
  const storage = toAppPath(pathMap, item.contentPath)
  return {
    completed: Math.floor((item.completedAt ?? item.addedAt) / 1000),
    name: item.name,
    nzb_name: item.name,
    category: categoryOf(item),
    pp: "D",
    script: "None",
    report: "",
    url: "",
    status: completed ? "Completed" : "Failed",
    nzo_id: nzoIdOf(item.id),
    storage,
    path: storage,
    script_line: "",
    download_time: Math.max(0, Math.floor(((item.completedAt ?? item.addedAt) - item.addedAt) / 1000)),
    postproc_time: 0,
    stage_log: [],
    downloaded: completed ? item.size : item.size - item.remaining,
    completeness: null,
    fail_message: completed ? "" : (item.reason ?? "the download failed"),
    url_info: "",
    bytes: item.size,
    meta: null,
    series: "",
    md5sum: "",
    password: "",
    duplicate_key: "",
    archive: false,
    time_added: Math.floor(item.addedAt / 1000),
    size: toUnits(item.size, "B"),
    action_line: "",
    loaded: false,
    // A failed release can be sent again (mode=retry).
    retry: !completed
  }
}

/** SABnzbd's to_units: K/M/G/T/P steps of 1024, one decimal from M on ("0 ", "512 KB", "1.5 GB"). */
export const toUnits = (value: number, postfix = ""): string => {
  let v = Math.abs(value)
  let n = 0
  while (v > 1023 && n < 5) {
    v /= 1024
    n += 1
  }
  return `${value < 0 ? "-" : ""}${v.toFixed(n > 1 ? 1 : 0)} ${UNITS[n] ?? ""}${postfix}`
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

const UNITS = ["", "K", "M", "G", "T", "P"]

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
