/**
 * The releases as every reader sees them: each record's view (releaseView.ts) over its files
 * in the store and the live transfers the running dlsync publishes. The one place the
 * surfaces, `dlsync status` and the web page get a release's state, progress and paths from.
 *
 * A release's files are read from the store when its progress needs them (the mirror copies
 * it) or when `withFiles` asks (one release's file list); a completed release otherwise reads
 * as its record says (its size and content path are fixed then).
 */
import { Effect, Option } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"
import type { IntakeRecord } from "../store/intakeTables.ts"
import { LIVE_TRANSFERS_MAX_AGE_MS, type LiveTransfers } from "../store/liveTransfers.ts"
import type { Store } from "../store/Store.ts"
import type { IntakeItem } from "./Intake.ts"
import { type LiveBytes, releaseView } from "./releaseView.ts"

export interface ItemsOptions {
  readonly store: Store["Service"]
  /** The mirror root, absolute. */
  readonly root: string
  readonly now: number
  readonly withFiles: boolean
  /** The last progress shown per release (kept up to date here), so that no reading goes below an earlier one. */
  readonly shown?: Map<IntakeId, number>
}

export const releaseItems = Effect.fnUntraced(function* (records: ReadonlyArray<IntakeRecord>, options: ItemsOptions) {
  const { store, root, now, shown } = options
  const live = liveBytesOf(yield* store.liveTransfers.read, now)
  const items: Array<IntakeItem> = []
  for (const record of records) {
    const downloadId = record.downloadId
    const needsFiles =
      downloadId !== null && record.serviceCompletedAt !== null && (record.completedAt === null || options.withFiles)
    const files = needsFiles ? yield* store.releases.filesOf(downloadId) : []
    const item = releaseView({ record, files, live, root, now, floor: shown?.get(record.id) ?? 0 })
    if (item.state === "completed") shown?.delete(record.id)
    else shown?.set(record.id, item.progress)
    items.push(item)
  }
  return items
})

/** The bytes of the files being transferred, from a published snapshot at most LIVE_TRANSFERS_MAX_AGE_MS old. */
export const liveBytesOf = (published: Option.Option<LiveTransfers>, now: number): LiveBytes => {
  if (Option.isNone(published) || !(now - Date.parse(published.value.updatedAt) <= LIVE_TRANSFERS_MAX_AGE_MS)) {
    return new Map()
  }
  return new Map(published.value.files.map((f) => [f.fileId, { bytes: f.bytes, bytesPerSecond: f.bytesPerSecond }]))
}
