/**
 * The daemon: a full pass at start, then a poll every `sync.poll_interval` (±10 % jitter)
 * until interrupted (SIGTERM/SIGINT: the runtime interrupts this fiber and the reconcile
 * under way, transfers abort at their last durable offset, the store is consistent after
 * every transaction). The schedule is daemonLoop.ts; this file says what a poll and a
 * reconcile are, and reports them.
 *
 *   start ─► catch up (full) ─► reconcile ─► ends: the next one starts at once if a poll
 *                                   │          during it owed one, else when a poll owes one
 *                                   │ while it runs, and between reconciles alike:
 *                                   ▼
 *            wait ─┬─ poll interval (jittered)
 *                  ├─ SIGHUP / SIGUSR1 (poll now)
 *                  ├─ a verified webhook delivery (PollRequests: poll now, the feed decides)
 *                  ├─ the owner's request (DaemonRequests, the web page: as a signal)
 *                  └─ a change under the root (chokidar, settled 2 s)
 *                         │
 *                         ▼
 *            catch up (one request when idle; in listing mode a full listing as often as its
 *            cost allows, see sync/listingCadence.ts)
 *                         │
 *                         ▼
 *            a reconcile is owed if the store changed, the root changed, failures are due
 *            for a retry, a full listing completed (listing mode), remote cleanup has a
 *            file come of age or a retry due, or a signal asked
 *
 * An idle poll is one request and no disk walk.
 *
 * Why a catch-up may change the store while a reconcile works on a plan made before it:
 * - They write different tables. A catch-up writes feed_state and remote_items (and appends
 *   events); a reconcile writes local_entries, locally_deleted, pending_op, held_deletes
 *   (and appends events). Each Store method is one synchronous better-sqlite3 call (one
 *   statement or one transaction), so no fiber sees half of one.
 * - The plan is made from the store between catch-ups: MirrorPass takes one permit for a
 *   catch-up and for the plan and its local actions (feed state, remote items, local
 *   entries are read by separate calls), and the daemon starts a reconcile only after a
 *   catch-up that completed. So no removal is planned from a listing under way.
 * - Only the downloads overlap catch-ups, and they use the plan's remote item, not the row:
 *   a file lands only through localOps `land`, which re-checks that the path still holds what
 *   the plan expected; its entry records the remote version it was planned for, so an
 *   item the catch-up changed meanwhile has new content for the next plan, and one it
 *   deleted fails its link (404) or lands and is trashed by the next plan (ours, unchanged,
 *   reversible). Trash, delete and rename re-check a fresh lstat whatever the remote did.
 * - A catch-up during a reconcile is the same as one between passes: pages commit with
 *   their cursor, rows absent from a listing go only when it completes.
 *
 * What the daemon reports as it goes (the layers come from layers/daemon.ts):
 * - systemd (SdNotify): READY=1 once started (the lock is held, the store open and the
 *   health endpoint listening, since those layers are built before this runs), a STATUS=
 *   line after each pass and poll failure, STOPPING=1 when shutdown starts;
 * - Readiness: store open for the daemon's life; signed in once the service accepted the
 *   credential, not signed in after an auth refusal; the feed polled after each catch-up;
 * - Metrics: files by state after each pass, the last successful sync, feed caught up,
 *   bytes of finished downloads, download retries, and a sampled transfer rate and queue
 *   depth (API requests and retries are counted by the client, see layers/daemon.ts).
 */

import { watch } from "chokidar"
import { Clock, Effect, Queue, Random, Schedule } from "effect"
import { type ApiError, isAuthProblem, isTransient } from "../api/ApiError.ts"
import { AppStateWriter } from "../appstate/AppStateWriter.ts"
import { isLoginRequired } from "../auth/AuthError.ts"
import { RemoteCleanup } from "../cleanup/RemoteCleanup.ts"
import { PollRequests } from "../events/PollRequests.ts"
import { IntakeRunner } from "../intake/IntakeRunner.ts"
import { Metrics, type MetricsShape } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { SdNotify } from "../service/SdNotify.ts"
import { Store } from "../store/Store.ts"
import { storeFailureOf } from "../store/StoreError.ts"
import {
  fullListingInterval,
  isFullListingDue,
  LISTING_REQUESTS_PER_HOUR,
  type ListingCost,
  listingCostOf
} from "../sync/listingCadence.ts"
import type { LocalOpError, RootUnavailable } from "../sync/localOps.ts"
import { DLSYNC_DIR } from "../sync/tree.ts"
import { forEachTransferEvent, ProgressTracker, type TransferEvent } from "../transfer/ProgressTracker.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"
import { DaemonRequests } from "./DaemonRequests.ts"
import { type PollOutcome, runDaemonLoop, type Wake } from "./daemonLoop.ts"
import { EngineSettings } from "./EngineSettings.ts"
import { describeReport, MirrorPass, type ReconcileReport } from "./MirrorPass.ts"
import { recordSignInEvent } from "./statusDocument.ts"
import { DOWNLOAD_LINK_OPERATION } from "./TransferDownloads.ts"

/** Signals that make the daemon poll at once. */
export const POLL_SIGNALS = ["SIGHUP", "SIGUSR1"] as const

/** A change under the root is acted on once the root has been quiet this long. */
export const SETTLE_MS = 2_000

/** Polls come every poll interval ± this fraction of it. */
export const POLL_JITTER = 0.1

/** Failed items are retried after this many poll intervals. */
export const RETRY_FAILED_POLLS = 5

/** How often the transfer rate and queue depth gauges are sampled. */
export const TRANSFER_SAMPLE_INTERVAL = "2 seconds"

export const runDaemon = Effect.fn("Daemon.run")(function* () {
  const pass = yield* MirrorPass
  const settings = yield* EngineSettings
  const wake = yield* Queue.sliding<Wake>(4)
  const notify = yield* SdNotify
  const readiness = yield* Readiness
  const metrics = yield* Metrics
  const store = yield* Store
  const cleanup = yield* RemoteCleanup

  yield* Effect.acquireRelease(readiness.setStoreOpen(true), () => readiness.setStoreOpen(false))
  yield* observeTransfers
  yield* metrics.watchRootFreeSpace(settings.root)

  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const onSignal = () => Queue.offerUnsafe(wake, "signal")
      for (const signal of POLL_SIGNALS) process.on(signal, onSignal)
      return onSignal
    }),
    (onSignal) =>
      Effect.sync(() => {
        for (const signal of POLL_SIGNALS) process.off(signal, onSignal)
      })
  )
  const requests = yield* PollRequests
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(requests.next, Queue.offer(wake, "webhook"))))
  // The owner's requests (the web page): a poll and a reconcile now, as a signal does.
  const asked = yield* DaemonRequests
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(asked.next, Queue.offer(wake, "signal"))))
  let localChanged = false
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const watcher = watch(settings.root, {
        ignoreInitial: true,
        ignored: (path: string) => path.startsWith(`${settings.root}/${DLSYNC_DIR}`)
      })
      watcher.on("all", () => {
        localChanged = true
        if (timer !== undefined) clearTimeout(timer)
        timer = setTimeout(() => Queue.offerUnsafe(wake, "local"), SETTLE_MS)
      })
      watcher.on("error", () => undefined)
      return { watcher, clear: () => timer !== undefined && clearTimeout(timer) }
    }),
    ({ watcher, clear }) =>
      Effect.promise(() => {
        clear()
        return watcher.close()
      })
  )

  /** A catch-up succeeded: the service accepted the credential and the feed is at its head. */
  const caughtUp = Effect.all([readiness.setSignedIn(true), readiness.feedPolled, metrics.feedCaughtUp], {
    discard: true
  }).pipe(Effect.andThen(() => signedInAgain))
  const refused = (error: ApiError) => (isAuthProblem(error) ? readiness.setSignedIn(false) : Effect.void)
  /**
   * The sign-in was refused (revoked, or a rotated refresh token lost): the mirror is left
   * as it is and every poll tries again, so a later `dlsync login` takes effect without a
   * restart. Recorded once per episode, for `status`.
   */
  let loginRequired = false
  const waitForLogin = Effect.fnUntraced(function* (error: ApiError) {
    if (!loginRequired) {
      loginRequired = true
      yield* recordSignInEvent(store, "login required")
    }
    yield* Effect.logError(`${error.message}; retrying at every poll`)
    yield* notify.status("login required: run `dlsync login`")
  })
  const signedInAgain = Effect.gen(function* () {
    if (!loginRequired) return
    loginRequired = false
    yield* recordSignInEvent(store, "ok")
    yield* Effect.logInfo("signed in again")
  })
  /** Whether the last pass left the mirror in line (no failure, no held delete); false while one runs. */
  let inLine = false
  const passDone = Effect.fnUntraced(function* (report: ReconcileReport) {
    const message = describeReport(report)
    yield* Effect.logInfo(message)
    yield* notify.status(message)
    yield* metrics.setFilesByState(yield* filesByState(store))
    yield* metrics.setHeldDeletions(report.held?.count ?? 0)
    inLine = report.failures.length === 0 && report.held === null
    if (inLine) yield* metrics.syncSucceeded
  })

  // The intake queue: sends what was added (by any process), follows it, and asks for a
  // reconcile when a download's files are known (they are mirrored whatever the filters say).
  const intake = yield* Effect.serviceOption(IntakeRunner)
  if (intake._tag === "Some")
    yield* Effect.forkScoped(intake.value.run(Queue.offer(wake, "signal").pipe(Effect.asVoid)))

  yield* notify.ready("first pass")
  // Added last, so it runs first when shutdown closes the scope.
  yield* Effect.addFinalizer(() => notify.stopping)

  /**
   * A full state disk is temporary: the step that met it is given up (SQLite rolled its
   * transaction back) and the next poll tries again. Any other defect stays one.
   */
  const whenStateDiskFull =
    <A>(value: A) =>
    (defect: unknown): Effect.Effect<A> => {
      const failure = storeFailureOf(defect, settings.stateDir)
      if (failure?._tag !== "StateDiskFull") return Effect.die(defect)
      return Effect.logWarning(`${failure.message}; retrying at the next poll`).pipe(
        Effect.andThen(notify.status("state dir disk full")),
        Effect.as(value)
      )
    }

  let lastFull = yield* Clock.currentTimeMillis
  /** What the last full listing of this process cost; until one, estimated from the store. */
  let listingCost: ListingCost | null = null
  /** When the last pass ended with failures; null when it had none, or a pass runs. */
  let failedAt: number | null = null
  /** When the last reconcile started: remote cleanup due after it owes one (cleanup/). */
  let reconciledAt = 0

  const poll = Effect.fnUntraced(function* (reason: Wake): Effect.fn.Return<PollOutcome, ApiError> {
    const now = yield* Clock.currentTimeMillis
    const start = reason === "start"
    const listingEvery = fullListingInterval({
      cost: listingCost ?? listingCostOf(yield* store.remote.count),
      pollInterval: settings.pollInterval,
      maxInterval: settings.listingInterval,
      requestsPerHour: LISTING_REQUESTS_PER_HOUR
    })
    const fullListing = start || isFullListingDue(now - lastFull, listingEvery, settings.pollInterval, POLL_JITTER)
    const caught = yield* Effect.result(pass.catchUp({ fullListing, probeFeed: start })).pipe(
      Effect.catchDefect(whenStateDiskFull("full" as const))
    )
    if (caught === "full") return "failed"
    if (caught._tag === "Failure") {
      const error = caught.failure
      yield* refused(error)
      if (isLoginRequired(error)) {
        yield* waitForLogin(error)
        return "failed"
      }
      if (!isTransient(error)) return yield* error
      const what = start ? "service unreachable" : "poll failed"
      yield* Effect.logWarning(`${what}, retrying at the next poll: ${error.message}`)
      yield* notify.status(`${what}: ${error.message}`)
      return "failed"
    }
    yield* caughtUp
    if (fullListing && caught.success.mode === "listing") {
      lastFull = now
      listingCost = { items: yield* store.remote.count, requests: caught.success.requests }
    }
    const remote = caught.success
    const storeChanged = remote.upserted + remote.deleted + remote.removedUnlisted > 0 || remote.listingCompleted
    const retryDue = failedAt !== null && now - failedAt >= RETRY_FAILED_POLLS * settings.pollInterval
    const cleanupDueAt = yield* cleanup.dueAt
    const cleanupDue = cleanupDueAt !== null && cleanupDueAt <= now && cleanupDueAt > reconciledAt
    if (storeChanged || localChanged || retryDue || cleanupDue || reason === "signal") return "reconcile"
    // Nothing changed: a mirror in line is still in line.
    if (inLine) yield* metrics.syncSucceeded
    return "idle"
  })

  const reconcile = Effect.gen(function* () {
    // What a reconcile owes is settled by this one; changes from now on owe the next.
    localChanged = false
    inLine = false
    failedAt = null
    const started = yield* Clock.currentTimeMillis
    reconciledAt = started
    // The daemon's transfer queue waits for room; a queue that did not is retried at a later poll.
    // A held deletion goes ahead only when the owner confirmed it (DaemonControl), once.
    const allowBigDelete = yield* asked.takeDeletionAllowance
    const reconciled = yield* pass.reconcile({ allowBigDelete }).pipe(
      Effect.catchTag("NotEnoughSpace", (error) => Effect.as(Effect.logWarning(error.message), null)),
      Effect.catchDefect(whenStateDiskFull(null))
    )
    yield* metrics.passFinished(((yield* Clock.currentTimeMillis) - started) / 1000)
    if (reconciled === null) {
      failedAt = yield* Clock.currentTimeMillis
      return
    }
    const report = reconciled
    yield* passDone(report)
    if (report.failures.length > 0) failedAt = yield* Clock.currentTimeMillis
  })

  return yield* runDaemonLoop<ApiError | RootUnavailable | LocalOpError>({
    wakes: wake,
    nextPollIn: Effect.map(Random.next, (r) =>
      Math.round(settings.pollInterval * (1 - POLL_JITTER + 2 * POLL_JITTER * r))
    ),
    poll,
    reconcile
  })
})

// ---------------------------------------------------------------------------------------

/** Files of the store by state (synced, pending, failed), for the files gauge. */
const filesByState = Effect.fnUntraced(function* (store: Store["Service"]) {
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
const observeTransfers = Effect.gen(function* () {
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
