/**
 * One notification for a batch of events (pure): a title with the counts, a body with the
 * first NOTIFY_LIST_LIMIT items of each kind and how many more, and the batch's level. A pass
 * with 500 failed files is one message of a few lines. Releases and downloads are named by
 * what they are (a release's name and category, a download's folder), never by an id.
 */
import { type EventLevel, levelOf, type MirrorEvent } from "../events/MirrorEvent.ts"

/** Items listed per kind of event; the rest are counted. */
export const NOTIFY_LIST_LIMIT = 10

export interface NotifyMessage {
  readonly title: string
  readonly body: string
  readonly level: EventLevel
}

export const notifyMessage = (events: ReadonlyArray<MirrorEvent>): NotifyMessage => {
  const titles: Array<string> = []
  const sections: Array<string> = []
  const of = <T extends MirrorEvent["_tag"]>(tag: T) =>
    events.filter((e): e is Extract<MirrorEvent, { _tag: T }> => e._tag === tag)

  const held = of("deletion_held")
  const last = held.at(-1)
  if (last !== undefined) {
    titles.push(`big delete of ${files(last.count)} held`)
    sections.push(
      `A big delete of ${files(last.count)} of ${last.mirrored} is held (limit: ${last.limit}); nothing removed. ` +
        "Run `dlsync run --once --allow-big-delete` to go ahead."
    )
  }
  const failed = of("file_failed")
  if (failed.length > 0) {
    titles.push(`${files(failed.length)} failed`)
    sections.push(
      listed(
        `${files(failed.length)} failed:`,
        failed.map((e) => `${e.path}: ${e.reason}`)
      )
    )
  }
  const landed = of("file_complete")
  if (landed.length > 0) {
    titles.push(`${files(landed.length)} downloaded`)
    sections.push(
      listed(
        `${files(landed.length)} downloaded:`,
        landed.map((e) => e.path)
      )
    )
  }
  const releasesFailed = of("release_failed")
  if (releasesFailed.length > 0) {
    titles.push(`${releases(releasesFailed.length)} failed`)
    sections.push(
      listed(
        `${releases(releasesFailed.length)} failed:`,
        releasesFailed.map((e) => `${e.name}${e.category === "" ? "" : ` (${e.category})`}: ${e.reason}`)
      )
    )
  }
  const releasesComplete = of("release_complete")
  if (releasesComplete.length > 0) {
    titles.push(`${releases(releasesComplete.length)} complete`)
    sections.push(
      listed(
        `${releases(releasesComplete.length)} complete:`,
        releasesComplete.map((e) => `${e.name}${e.category === "" ? "" : ` (${e.category})`}`)
      )
    )
  }
  const downloads = of("download_complete")
  if (downloads.length > 0) {
    titles.push(`${downloads.length} download${downloads.length === 1 ? "" : "s"} complete`)
    sections.push(
      listed(
        "Downloads complete:",
        downloads.map((e) => downloadName(e.paths) ?? e.downloadId)
      )
    )
  }
  const passes = of("pass_complete")
  const lastPass = passes.at(-1)
  if (lastPass !== undefined) {
    if (titles.length === 0) titles.push("pass complete")
    sections.push(
      `Last pass: ${files(lastPass.downloaded)} downloaded, ${lastPass.changed.length} paths changed, ${lastPass.failed} failed.`
    )
  }
  const level = events.reduce<EventLevel>((worst, e) => higher(worst, levelOf(e)), "info")
  return { title: `dlsync: ${titles.join(", ") || "news"}`, body: sections.join("\n\n"), level }
}

/** What a download holds, by its paths: their common folder (a release's), else its one file; undefined for none. */
export const downloadName = (paths: ReadonlyArray<string>): string | undefined => {
  const [first, ...rest] = paths.map((p) => p.split("/"))
  if (first === undefined) return undefined
  if (rest.length === 0) return first.join("/")
  let common = first.length - 1
  for (const segments of rest) {
    let i = 0
    while (i < common && segments[i] === first[i]) i++
    common = i
  }
  return common === 0 ? `${first.join("/")} and ${rest.length} more` : first.slice(0, common).join("/")
}

const RANK: Readonly<Record<EventLevel, number>> = { info: 0, warn: 1, error: 2 }

export const atLeast = (level: EventLevel, minimum: EventLevel): boolean => RANK[level] >= RANK[minimum]

const higher = (a: EventLevel, b: EventLevel): EventLevel => (RANK[b] > RANK[a] ? b : a)

const files = (n: number): string => `${n} file${n === 1 ? "" : "s"}`

const releases = (n: number): string => `${n} release${n === 1 ? "" : "s"}`

const listed = (heading: string, lines: ReadonlyArray<string>): string => {
  const shown = lines.slice(0, NOTIFY_LIST_LIMIT).map((l) => `- ${l}`)
  const more = lines.length - shown.length
  return [heading, ...shown, ...(more > 0 ? [`… and ${more} more`] : [])].join("\n")
}
