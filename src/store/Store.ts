/**
 * The Store: dlsync's durable truth, one module per table group, each with the row schemas
 * that decode its rows to domain types: the feed and remote items (feedTables.ts), local
 * entries, deletion markers and the pending operation (localTables.ts), events and the held
 * big delete (eventTables.ts), the last reconcile's failures (passFailureTables.ts), the live transfers the running dlsync publishes for `status`
 * (liveTransfers.ts), the app-state outbox's size (appStateOutboxTable.ts), and what the last
 * pass found of the mirror root (mirrorRootTable.ts), the posters written (posterFilesTable.ts),
 * remote cleanup's progress (remoteCleanupTable.ts), a release's files (releaseFiles.ts) and
 * a version that changes with any of them (storeVersion.ts).
 * Plain synchronous better-sqlite3 calls; a failing SQLite call is a defect (the caller
 * cannot act on it). Each module states its invariants.
 */
import { Context, Effect, Layer } from "effect"
import { makeAppStateOutboxTable } from "./appStateOutboxTable.ts"
import { Database } from "./Database.ts"
import { type EventTables, makeEventTables } from "./eventTables.ts"
import { type FeedTables, makeFeedTables } from "./feedTables.ts"
import { type LiveTransfersStore, makeLiveTransfers } from "./liveTransfers.ts"
import { type LocalTables, makeLocalTables } from "./localTables.ts"
import { type MirrorRootTable, makeMirrorRootTable } from "./mirrorRootTable.ts"
import { makePassFailureTables, type PassFailureTables } from "./passFailureTables.ts"
import { makePosterFilesTable, type PosterFilesTable } from "./posterFilesTable.ts"
import { makeReleaseFiles, type ReleaseFilesTables } from "./releaseFiles.ts"
import { makeRemoteCleanupTable, type RemoteCleanupTable } from "./remoteCleanupTable.ts"
import { makeStoreVersion, type StoreVersionRead } from "./storeVersion.ts"

export {
  EVENTS_KEPT,
  type EventLevel,
  type HeldDelete,
  type RecordedEvent,
  type StoreEvent
} from "./eventTables.ts"
export type { FeedPage, FeedParams, FeedState, PageOutcome } from "./feedTables.ts"
export type { PendingOp } from "./localTables.ts"
export type { PassFailure } from "./passFailureTables.ts"
export type { PosterFile } from "./posterFilesTable.ts"
export type { ReleaseFile } from "./releaseFiles.ts"
export type { CleanupRow } from "./remoteCleanupTable.ts"

export class Store extends Context.Service<
  Store,
  FeedTables &
    LocalTables &
    PassFailureTables &
    MirrorRootTable &
    PosterFilesTable &
    RemoteCleanupTable &
    ReleaseFilesTables &
    StoreVersionRead &
    Pick<EventTables, "events" | "held"> & {
      readonly liveTransfers: LiveTransfersStore
      /** App-state entries waiting in the outbox (appstate/), for `status`: written by the next run or the daemon. */
      readonly appStateQueued: Effect.Effect<number>
    }
>()("dlsync/store/Store") {
  static readonly layer: Layer.Layer<Store, never, Database> = Layer.effect(
    Store,
    Effect.gen(function* () {
      const { db } = yield* Database
      const log = makeEventTables(db)
      const { feed, remote } = makeFeedTables(db, log)
      const { local, pendingOp } = makeLocalTables(db)
      const outbox = makeAppStateOutboxTable(db)
      return Store.of({
        feed,
        remote,
        local,
        pendingOp,
        ...makePassFailureTables(db),
        ...makeMirrorRootTable(db),
        ...makePosterFilesTable(db),
        ...makeRemoteCleanupTable(db),
        ...makeReleaseFiles(db),
        ...makeStoreVersion(db),
        held: log.held,
        events: log.events,
        liveTransfers: makeLiveTransfers(db),
        appStateQueued: Effect.sync(outbox.count)
      })
    })
  )
}
