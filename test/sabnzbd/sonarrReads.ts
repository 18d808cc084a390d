/**
 * The SABnzbd answers read the way Sonarr reads them (Sonarr/Sonarr 49df353,
 * src/NzbDrone.Core/Download/Clients/Sabnzbd): CheckForError on every body, the version
 * regex, the status enum (an unknown name fails the whole poll), SabnzbdQueueTimeConverter
 * for timeleft, `mb`/`mbleft` as decimals, GetItems' category filter and its history
 * OutputPath rule. Strict on purpose: anything Sonarr would choke on throws here.
 */

/** Sabnzbd.cs VersionRegex. */
export const SONARR_VERSION_REGEX = /(?<major>\d+)\.(?<minor>\d+)\.(?<patch>\d+|x)/

/** SabnzbdDownloadStatus. */
const STATUSES = [
  "Grabbing",
  "Queued",
  "Paused",
  "Checking",
  "Downloading",
  "QuickCheck",
  "Verifying",
  "Repairing",
  "Fetching",
  "Extracting",
  "Moving",
  "Running",
  "Completed",
  "Failed",
  "Deleted",
  "Propagating"
] as const
type SabStatus = (typeof STATUSES)[number]

/** SabnzbdProxy.CheckForError: a JSON `status` "false" (any case) is an error. */
const checked = (text: string): Record<string, unknown> => {
  const body = JSON.parse(text) as Record<string, unknown>
  if (String(body.status).toLowerCase() === "false")
    throw new Error(`Error response received from SABnzbd: ${String(body.error)}`)
  return body
}

export const readVersion = (text: string): string => {
  const version = checked(text).version
  if (typeof version !== "string") throw new Error("no version")
  return version
}

export const readAddResponse = (text: string): ReadonlyArray<string> => {
  const ids = checked(text).nzo_ids
  if (!Array.isArray(ids) || ids.length === 0) throw new Error("SABnzbd rejected the NZB for an unknown reason")
  return ids.map(String)
}

export const readConfig = (text: string) => {
  const config = checked(text).config as {
    misc: Record<string, unknown>
    categories: ReadonlyArray<{ name: string; dir: string }>
    sorters: ReadonlyArray<{ is_active: boolean; sort_cats: ReadonlyArray<string> }>
  }
  const misc = config.misc
  const completeDir = String(misc.complete_dir)
  if (!completeDir.startsWith("/")) throw new Error("complete_dir is relative: Sonarr would call fullstatus")
  const contains = (list: unknown, category: string) =>
    !Array.isArray(list) || list.length === 0 || list.includes(category === "" ? "Default" : category)
  const option = misc.history_retention_option
  const number = Number(misc.history_retention_number)
  return {
    completeDir,
    preCheck: misc.pre_check === true,
    categories: config.categories.map((c) => {
      if (c.dir.endsWith("*")) throw new Error("category dir ends with *: job folders disabled")
      return {
        name: c.name,
        dir: c.dir,
        fullPath: c.dir.startsWith("/") ? c.dir : `${completeDir}/${c.dir}`.replace(/\/$/, "")
      }
    }),
    sortingFor: (category: string) =>
      (misc.enable_tv_sorting === true && contains(misc.tv_categories, category)) ||
      (misc.enable_movie_sorting === true && contains(misc.movie_categories, category)) ||
      (misc.enable_date_sorting === true && contains(misc.date_categories, category)) ||
      config.sorters.some((s) => s.is_active && contains(s.sort_cats, category)),
    // Sabnzbd.cs RemovesCompletedDownloads
    removesCompletedDownloads:
      option === "all"
        ? false
        : option === "days-archive" || option === "days-delete"
          ? number < 14
          : typeof option === "string" && option !== ""
            ? true
            : misc.history_retention !== undefined && misc.history_retention !== "" && misc.history_retention !== "0"
  }
}

export interface QueueItem {
  readonly id: string
  readonly title: string
  readonly category: string
  readonly status: SabStatus
  readonly priority: string
  readonly size: number
  readonly sizeleft: number
  readonly timeleft: string
  readonly timeleftSeconds: number
  readonly percentage: number
}

export const readQueue = (text: string) => {
  const queue = checked(text).queue as { paused: boolean; slots: ReadonlyArray<Record<string, unknown>> }
  if (typeof queue.paused !== "boolean") throw new Error("queue.paused is not a boolean")
  return {
    paused: queue.paused,
    items: queue.slots.map(
      (slot): QueueItem => ({
        id: String(slot.nzo_id),
        title: String(slot.filename),
        category: String(slot.cat),
        status: status(slot.status),
        priority: String(slot.priority),
        size: decimal(slot.mb),
        sizeleft: decimal(slot.mbleft),
        timeleft: String(slot.timeleft),
        timeleftSeconds: timeLeft(slot.timeleft),
        percentage: integer(slot.percentage)
      })
    )
  }
}

export interface HistoryItem {
  readonly id: string
  readonly title: string
  readonly category: string
  readonly status: SabStatus
  readonly size: number
  readonly storage: string
  readonly failMessage: string
}

export const readHistory = (text: string) => {
  const history = checked(text).history as { slots: ReadonlyArray<Record<string, unknown>> }
  return {
    items: history.slots.map(
      (slot): HistoryItem => ({
        id: String(slot.nzo_id),
        title: String(slot.name),
        category: String(slot.category),
        status: status(slot.status),
        size: integer(slot.bytes),
        storage: String(slot.storage),
        failMessage: String(slot.fail_message ?? "")
      })
    )
  }
}

/** Sabnzbd.cs GetItems: queue then history, Deleted skipped, only the configured category. */
export const sonarrItems = (
  queue: ReturnType<typeof readQueue>,
  history: ReturnType<typeof readHistory>,
  category: string
) => {
  const fromQueue = queue.items
    .filter((i) => i.status !== "Deleted")
    .map((i) => ({
      downloadId: i.id,
      title: i.title,
      category: i.category,
      totalSize: Math.trunc(i.size * 1024 * 1024),
      remainingSize: Math.trunc(i.sizeleft * 1024 * 1024),
      remainingTime: timeSpan(i.timeleftSeconds),
      outputPath: undefined as string | undefined,
      status:
        (queue.paused && i.priority !== "Force") || i.status === "Paused"
          ? "Paused"
          : i.status === "Queued" || i.status === "Grabbing" || i.status === "Propagating"
            ? "Queued"
            : "Downloading"
    }))
  const fromHistory = history.items
    .filter((i) => i.status !== "Deleted")
    .map((i) => ({
      downloadId: i.id,
      title: i.title,
      category: i.category,
      totalSize: i.size,
      remainingSize: 0,
      remainingTime: "00:00:00",
      outputPath: outputPath(i.storage, i.title),
      status:
        i.status === "Failed"
          ? i.failMessage.toLowerCase() === "unpacking failed, write error or disk is full?"
            ? "Warning"
            : "Failed"
          : i.status === "Completed"
            ? "Completed"
            : "Downloading"
    }))
  return [...fromQueue, ...fromHistory].filter(
    (i) => i.category === category || (i.category === "*" && category === "")
  )
}

// ---------------------------------------------------------------------------------------

const status = (value: unknown): SabStatus => {
  const found = STATUSES.find((s) => s.toLowerCase() === String(value).toLowerCase())
  if (found === undefined) throw new Error(`unknown SABnzbd status ${JSON.stringify(value)}: the poll fails`)
  return found
}

/** Newtonsoft reads a decimal from a number or a numeric string. */
const decimal = (value: unknown): number => {
  const n =
    typeof value === "number"
      ? value
      : typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value)
        ? Number(value)
        : Number.NaN
  if (Number.isNaN(n)) throw new Error(`not a decimal: ${JSON.stringify(value)}`)
  return n
}

const integer = (value: unknown): number => {
  const n = decimal(value)
  if (!Number.isInteger(n)) throw new Error(`not an integer: ${JSON.stringify(value)}`)
  return n
}

/** SabnzbdQueueTimeConverter: H:MM:SS or D:HH:MM:SS, else an ArgumentException. */
const timeLeft = (value: unknown): number => {
  const parts = String(value)
    .split(":")
    .map((p) => {
      if (!/^\d+$/.test(p)) throw new Error(`timeleft ${JSON.stringify(value)} is not numeric`)
      return Number(p)
    })
  if (parts.length === 4) return ((parts[0]! * 24 + parts[1]!) * 60 + parts[2]!) * 60 + parts[3]!
  if (parts.length === 3) return (parts[0]! * 60 + parts[1]!) * 60 + parts[2]!
  throw new Error(`Expected either 0:0:0:0 or 0:0:0 format, but received: ${String(value)}`)
}

/** A .NET TimeSpan's ToString: [d.]hh:mm:ss. */
const timeSpan = (seconds: number): string => {
  const two = (n: number) => String(n).padStart(2, "0")
  const d = Math.floor(seconds / 86400)
  const rest = `${two(Math.floor(seconds / 3600) % 24)}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`
  return d > 0 ? `${d}.${rest}` : rest
}

/** Sabnzbd.cs: storage, or its highest ancestor named like the job. */
const outputPath = (storage: string, title: string): string => {
  let result = storage
  const parts = storage.split("/")
  for (let n = parts.length - 1; n > 0; n--) {
    if (parts[n - 1] === title) result = parts.slice(0, n).join("/")
  }
  return result
}
