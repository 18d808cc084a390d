/**
 * What the daemon reports to its metrics as it goes: the files by state after a pass, and
 * for its life the transfers' events (bytes of finished downloads, outcomes, retries, the
 * service's rate-limit waits) and samples of the transfer rate, queue depth, files waiting
 * for disk space (readiness) and app-state writes.
 */
import { Clock, Effect, Schedule } from "effect"
import { AppStateWriter } from "../appstate/AppStateWriter.ts"
import { Metrics, type MetricsShape } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import type { Store } from "../store/Store.ts"
import { forEachTransferEvent, ProgressTracker, type TransferEvent } from "../transfer/ProgressTracker.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"
import { DOWNLOAD_LINK_OPERATION } from "./TransferDownloads.ts"

/** How often the transfer rate and queue depth gauges are sampled. */
export const TRANSFER_SAMPLE_INTERVAL = "2 seconds"

/** Files of the store by state (synced, pending, failed), for the files gauge. */
export const filesByState = Effect.fnUntraced(function* (store: Store["Service"]) {
  const counts: Record<string, number> = { synced: 0, pending: 0, failed: 0 }
  for (const entry of yield* store.local.all) {
    if (entry.type === "file") counts[entry.state] = (counts[entry.state] ?? 0) + 1
  }
  return counts
})

/**
 * What one transfer event adds to the metrics: the bytes and outcome of a finished download,
 * the outcome of a parked or paused one, a download retry, or a link request held back by
 * the service's rate limit (the engine's wait, beyond what the API client waits itself).
 */
export const countTransferEvent = (metrics: MetricsShape, event: TransferEvent): Effect.Effect<void> => {
  switch (event._tag) {
    case "Finished":
      return Effect.andThen(metrics.addBytesTransferred(event.fetched), metrics.fileTransfer("landed"))
    case "Parked":
      return metrics.fileTransfer("failed")
    case "Paused":
      return metrics.fileTransfer("paused")
    case "Retrying":
      return metrics.retry("download")
    case "RateLimited":
      return metrics.rateLimitWait(DOWNLOAD_LINK_OPERATION, event.delayMs)
    default:
      return Effect.void
  }
}

/**
 * Bytes of each finished download (what it fetched over the network) counted as they land,
 * download retries, and the rate, queue depth, files waiting for disk space (readiness) and
 * app-state write counts sampled every TRANSFER_SAMPLE_INTERVAL, for the scope's life.
 */
export const observeTransfers = Effect.gen(function* () {
  const readiness = yield* Readiness
  const progress = yield* ProgressTracker
  const queue = yield* TransferQueue
  const metrics = yield* Metrics
  const appState = yield* AppStateWriter
  yield* forEachTransferEvent((event) => countTransferEvent(metrics, event))
  // The app-state writer keeps running totals; the metric counts what was added since.
  let appStateSeen = { written: 0, preconditionFailures: 0, dropped: 0 }
  const sample = Effect.gen(function* () {
    const overall = progress.snapshot(yield* Clock.currentTimeMillis).overall
    const stats = queue.stats()
    yield* metrics.setTransferRate(overall.active === 0 ? 0 : overall.rate)
    yield* metrics.setQueueDepth(stats.queued + stats.waitingForSpace)
    yield* readiness.setWaitingForSpace(stats.waitingForSpace)
    const writes = yield* appState.stats
    yield* metrics.appStateWrite("written", writes.written - appStateSeen.written)
    yield* metrics.appStateWrite("precondition_failed", writes.preconditionFailures - appStateSeen.preconditionFailures)
    yield* metrics.appStateWrite("failed", writes.dropped - appStateSeen.dropped)
    appStateSeen = writes
  })
  yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(TRANSFER_SAMPLE_INTERVAL)))
})
