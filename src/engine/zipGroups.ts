/**
 * Which downloads of a pass go as ZIP archives: a pure decision over the planned downloads.
 *
 * Downloads are grouped by their service download (`downloadId`), else by their remote
 * folder. A group's candidates are its files smaller than `maxMemberSize` (larger ones gain
 * from segments on the per-file path), not held back by the caller (`keepPerFile`: partial
 * data of an earlier per-file transfer resumes there), and whose name in an archive no other
 * candidate of the group shares (a member is told from the others only by its name). A
 * group whose candidates are at least `minFiles`, with a median size below `medianBelow`,
 * becomes ZIP jobs of at most `maxIds` files each, split evenly; everything else is left to
 * the per-file path.
 *
 * Why these thresholds (transfers.zip_min_files, zip_median_below; the proposal):
 * per file, the per-file path pays a link request to the service and a GET from the CDN,
 * each a round trip, and a store commit; an archive pays two requests for up to 100 files.
 * The saving is those round trips, which weigh while a file's own transfer is short against
 * them (a median under 4 MiB: ≈ 40 ms at 100 MB/s) and add up over many files (32 or more).
 * Larger files stream as fast either way, and in an archive they lose the per-file path's
 * segments and resumption. Measured (bench/run.ts `--only zip`, 2,000 × 64 KiB in one
 * folder, whole `run --once` processes): the archives took 0.4–0.5× the per-file path's time
 * and CPU without added latency, 0.15× its time with 50 ms on every API request; where between
 * 64 KiB and 4 MiB the gain ends is not measured yet.
 *
 * Invariants: every download is in exactly one ZIP job or in `perFile`; a job's files share
 * a group and have distinct archive names; the order within each is the plan's.
 */
import type { DownloadAction } from "../sync/executor.ts"
import { archiveNameOf } from "../transfer/zip/archiveName.ts"

export interface ZipThresholds {
  /** A group needs at least this many candidates; 0 turns ZIP jobs off. */
  readonly minFiles: number
  /** …and a median candidate size below this (bytes). */
  readonly medianBelow: number
  /** Files of this size or larger always go one by one (bytes). */
  readonly maxMemberSize: number
  /** The most files one archive is asked for (the service's limit on one ZIP request). */
  readonly maxIds: number
}

export interface ZipPlan {
  readonly zips: ReadonlyArray<ReadonlyArray<DownloadAction>>
  readonly perFile: ReadonlyArray<DownloadAction>
}

export const planZipJobs = (
  downloads: ReadonlyArray<DownloadAction>,
  thresholds: ZipThresholds,
  keepPerFile: ReadonlySet<string>
): ZipPlan => {
  if (thresholds.minFiles <= 0 || thresholds.maxIds <= 0) return { zips: [], perFile: downloads }
  const groups = new Map<string, Array<DownloadAction>>()
  for (const action of downloads) {
    const key =
      action.item.downloadId === undefined ? `folder:${action.item.parentId}` : `download:${action.item.downloadId}`
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [action])
    else group.push(action)
  }
  const zipped = new Set<DownloadAction>()
  const zips: Array<ReadonlyArray<DownloadAction>> = []
  for (const group of groups.values()) {
    const candidates = candidatesOf(group, thresholds, keepPerFile)
    if (candidates.length < thresholds.minFiles || median(candidates) >= thresholds.medianBelow) continue
    for (const job of evenChunks(candidates, thresholds.maxIds)) zips.push(job)
    for (const action of candidates) zipped.add(action)
  }
  return { zips, perFile: downloads.filter((action) => !zipped.has(action)) }
}

const candidatesOf = (
  group: ReadonlyArray<DownloadAction>,
  thresholds: ZipThresholds,
  keepPerFile: ReadonlySet<string>
): Array<DownloadAction> => {
  const eligible = group.filter((a) => a.item.size < thresholds.maxMemberSize && !keepPerFile.has(a.item.id))
  const names = new Map<string, number>()
  for (const a of eligible) names.set(archiveNameOf(a.item.name), (names.get(archiveNameOf(a.item.name)) ?? 0) + 1)
  return eligible.filter((a) => names.get(archiveNameOf(a.item.name)) === 1)
}

/** The lower middle size. */
const median = (actions: ReadonlyArray<DownloadAction>): number => {
  const sizes = actions.map((a) => a.item.size).sort((x, y) => x - y)
  return sizes[Math.floor((sizes.length - 1) / 2)] ?? 0
}

/** `items` in order, cut into the fewest chunks of at most `max`, their lengths differing by at most one. */
const evenChunks = <A>(items: ReadonlyArray<A>, max: number): Array<ReadonlyArray<A>> => {
  const count = Math.ceil(items.length / max)
  const chunks: Array<ReadonlyArray<A>> = []
  let at = 0
  for (let i = 0; i < count; i++) {
    const length = Math.floor(items.length / count) + (i < items.length % count ? 1 : 0)
    chunks.push(items.slice(at, at + length))
    at += length
  }
  return chunks
}
