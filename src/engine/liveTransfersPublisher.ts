/**
 * Publishes the transfers under way into the store every PUBLISH_INTERVAL, for `dlsync
 * status` and `/api/status` (src/engine/transfersStatus.ts decides what they show).
 *
 *   ProgressTracker.snapshot() ─► every second, while files transfer ─► store.liveTransfers
 *
 * Files waiting for disk space (TransferQueue) are published too, so status says why
 * nothing moves. Each publication (and each clearing, as null) also goes to the process's
 * own readers (LiveTransfersFeed: the web page's event stream), the same numbers as the store's. A timer reads the tracker's counters: the byte path never waits on SQLite. Nothing is
 * written while no file transfers. The published row is cleared when the run starts (a
 * killed run's leftover), when the last transfer ends, and when the run ends.
 */
import { Context, DateTime, Effect, Layer, PubSub, Schedule, type Scope } from "effect"
import type { LiveTransfers } from "../store/liveTransfers.ts"
import { Store } from "../store/Store.ts"
import { type ProgressSnapshot, ProgressTracker } from "../transfer/ProgressTracker.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"

/** At most one write a second: enough for a human watching `status`, nothing for SQLite. */
export const PUBLISH_INTERVAL = "1 second"

/** What the publisher publishes, as it publishes it, for readers in this process. */
export class LiveTransfersFeed extends Context.Service<
  LiveTransfersFeed,
  {
    /** Each publication from now on (null: cleared, nothing under way), for the scope's life. */
    readonly subscribe: Effect.Effect<PubSub.Subscription<LiveTransfers | null>, never, Scope.Scope>
  }
>()("dlsync/engine/LiveTransfersFeed") {}

export const liveTransfersPublisher: Layer.Layer<LiveTransfersFeed, never, Store | ProgressTracker | TransferQueue> =
  Layer.effect(
    LiveTransfersFeed,
    Effect.gen(function* () {
      // A reader behind by more than a few publications only misses the older ones.
      const feed = yield* Effect.acquireRelease(PubSub.sliding<LiveTransfers | null>(4), PubSub.shutdown)
      const store = yield* Store
      const tracker = yield* ProgressTracker
      const queue = yield* TransferQueue
      yield* Effect.acquireRelease(store.liveTransfers.clear, () => store.liveTransfers.clear)
      // Each active file's failed attempts in this run, from the tracker's events.
      const attempts = new Map<string, number>()
      yield* Effect.acquireRelease(
        Effect.sync(() =>
          tracker.subscribe((event) => {
            if (event._tag === "Retrying" && event.attempt > 0) attempts.set(event.fileId, event.attempt)
          })
        ),
        (unsubscribe) => Effect.sync(unsubscribe)
      )
      let published = false
      const publish = Effect.gen(function* () {
        const at = yield* DateTime.now
        const snapshot = tracker.snapshot(DateTime.toEpochMillis(at))
        const waitingForSpace = queue.stats().waitingForSpace
        // A file no longer active (paused, ended) starts its count afresh from its next event.
        const active = new Set(snapshot.files.map((f) => f.fileId))
        for (const id of attempts.keys()) if (!active.has(id)) attempts.delete(id)
        if (snapshot.files.length > 0 || waitingForSpace > 0) {
          const live = liveTransfersOf(snapshot, waitingForSpace, process.pid, DateTime.formatIso(at), attempts)
          yield* store.liveTransfers.publish(live)
          yield* PubSub.publish(feed, live)
          published = true
        } else if (published) {
          yield* store.liveTransfers.clear
          yield* PubSub.publish(feed, null)
          published = false
        }
      })
      yield* Effect.forkScoped(Effect.repeat(publish, Schedule.spaced(PUBLISH_INTERVAL)))
      return LiveTransfersFeed.of({ subscribe: PubSub.subscribe(feed) })
    })
  )

// ---------------------------------------------------------------------------------------

/** The store's form of a tracker snapshot: a file's name is its mirror path (TransferDownloads). */
const liveTransfersOf = (
  snapshot: ProgressSnapshot,
  waitingForSpace: number,
  pid: number,
  updatedAt: string,
  attempts: ReadonlyMap<string, number>
): LiveTransfers => ({
  pid,
  waitingForSpace,
  updatedAt,
  completed: snapshot.overall.completed,
  parked: snapshot.overall.parked,
  // Whole bytes, as the store keeps them: its readers and this process's see the same numbers.
  bytesPerSecond: Math.round(snapshot.overall.rate),
  files: snapshot.files.map((f) => ({
    fileId: f.fileId,
    path: f.name,
    size: f.size,
    bytes: f.done,
    bytesPerSecond: Math.round(f.rate),
    connections: f.connections,
    ...attemptsOf(attempts, f.fileId),
    ...(f.rateLimitedUntil === null ? {} : { rateLimitedUntil: new Date(f.rateLimitedUntil).toISOString() })
  }))
})

const attemptsOf = (attempts: ReadonlyMap<string, number>, fileId: string): { readonly attempts?: number } => {
  const tried = attempts.get(fileId)
  return tried === undefined ? {} : { attempts: tried }
}
