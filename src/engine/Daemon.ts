/**
 * The daemon: one full pass at start, then a poll every `sync.poll_interval` (±10 %
 * jitter) until interrupted (SIGTERM/SIGINT: the runtime interrupts this fiber, transfers
 * abort at their last durable offset, the store is consistent after every transaction).
 *
 *   start ─► full pass ─► wait ─┬─ poll interval (jittered)
 *                 ▲              ├─ SIGHUP / SIGUSR1 (poll now)
 *                 │              └─ a change under the root (chokidar, settled 2 s)
 *                 │                      │
 *                 │                      ▼
 *                 │              catch up (one request when idle)
 *                 └── reconcile ◄── only if the store changed, the root changed, failures are
 *                                   due for a retry, or a full listing is due (listing mode)
 *
 * An idle poll is one request and no disk walk.
 *
 * What the daemon reports as it goes (the layers come from cli/run.ts):
 * - systemd (SdNotify): READY=1 once started (the lock is held, the store open and the
 *   health endpoint listening, since those layers are built before this runs), a STATUS=
 *   line after each pass and poll failure, STOPPING=1 when shutdown starts;
 * - Readiness: store open for the daemon's life; signed in once the service accepted the
 *   credential, not signed in after an auth refusal; the feed polled after each catch-up;
 * - Metrics: files by state after each pass, the last successful sync, feed caught up,
 *   bytes of finished downloads, download retries, and a sampled transfer rate and queue
 *   depth (API requests and retries are counted by the client, see cli/run.ts).
 */

import { watch } from "chokidar"
import { Clock, Effect, Queue, Random, Schedule } from "effect"
import { type ApiError, isAuthProblem, isTransient } from "../api/ApiError.ts"
import { AppStateWriter } from "../appstate/AppStateWriter.ts"
import { isLoginRequired } from "../auth/AuthError.ts"
import { Metrics } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { SdNotify } from "../service/SdNotify.ts"
import { Store } from "../store/Store.ts"
import { DLSYNC_DIR } from "../sync/tree.ts"
import { forEachTransferEvent, ProgressTracker } from "../transfer/ProgressTracker.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"
import { EngineSettings } from "./EngineSettings.ts"
import { describeReport, MirrorPass, type ReconcileReport } from "./MirrorPass.ts"
import { LOGIN_REQUIRED_EVENT, SIGNED_IN_EVENT } from "./statusDocument.ts"

/** Signals that make the daemon poll at once. */
export const POLL_SIGNALS = ["SIGHUP", "SIGUSR1"] as const

/** A change under the root is acted on once the root has been quiet this long. */
export const SETTLE_MS = 2_000

/** Failed items are retried after this many poll intervals. */
export const RETRY_FAILED_POLLS = 5

/** How often the transfer rate and queue depth gauges are sampled. */
export const TRANSFER_SAMPLE_INTERVAL = "2 seconds"

type Wake = "timer" | "signal" | "local"

export const runDaemon = Effect.fn("Daemon.run")(function* () {
  const pass = yield* MirrorPass
  const settings = yield* EngineSettings
  const wake = yield* Queue.sliding<Wake>(4)
  const notify = yield* SdNotify
  const readiness = yield* Readiness
  const metrics = yield* Metrics
  const store = yield* Store

  yield* Effect.acquireRelease(readiness.setStoreOpen(true), () => readiness.setStoreOpen(false))
  yield* observeTransfers

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
      yield* store.events.append({
        level: "error",
        kind: LOGIN_REQUIRED_EVENT,
        message: "login required: run `dlsync login`; the mirror is kept as it is until then",
        path: null,
        remoteId: null
      })
    }
    yield* Effect.logError(`${error.message}; retrying at every poll`)
    yield* notify.status("login required: run `dlsync login`")
  })
  const signedInAgain = Effect.gen(function* () {
    if (!loginRequired) return
    loginRequired = false
    yield* store.events.append({
      level: "info",
      kind: SIGNED_IN_EVENT,
      message: "signed in again",
      path: null,
      remoteId: null
    })
    yield* Effect.logInfo("signed in again")
  })
  /** Whether the last pass left the mirror in line (no failure, no held delete). */
  let inLine = false
  const passDone = Effect.fnUntraced(function* (report: ReconcileReport) {
    const message = describeReport(report)
    yield* Effect.logInfo(message)
    yield* notify.status(message)
    yield* metrics.setFilesByState(yield* filesByState(store))
    inLine = report.failures.length === 0 && report.held === null
    if (inLine) yield* metrics.syncSucceeded
  })

  yield* notify.ready("first pass")
  // Added last, so it runs first when shutdown closes the scope.
  yield* Effect.addFinalizer(() => notify.stopping)

  let lastFull = Date.now()
  let failedAt: number | null = null
  // pass.run in two steps, so readiness follows the catch-up, not a long first download.
  const full = yield* pass.catchUp({ fullListing: true, probeFeed: true }).pipe(
    Effect.tap(() => caughtUp),
    Effect.andThen(pass.reconcile({ allowBigDelete: false })),
    Effect.tap(passDone),
    Effect.tapError((error) => (error._tag === "ApiError" ? refused(error) : Effect.void)),
    Effect.catchTag("ApiError", (error) =>
      isTransient(error)
        ? Effect.logWarning(`service unreachable, retrying at the next poll: ${error.message}`).pipe(
            Effect.andThen(notify.status(`service unreachable: ${error.message}`)),
            Effect.as(null)
          )
        : isLoginRequired(error)
          ? waitForLogin(error).pipe(Effect.as(null))
          : Effect.fail(error)
    )
  )
  if (full === null || full.failures.length > 0) failedAt = Date.now()

  while (true) {
    const jitter = 0.9 + 0.2 * (yield* Random.next)
    const reason = yield* Queue.take(wake).pipe(
      Effect.timeoutOption(Math.round(settings.pollInterval * jitter)),
      Effect.map((o) => (o._tag === "Some" ? o.value : ("timer" as const)))
    )
    const now = Date.now()
    const fullListing = now - lastFull >= settings.listingInterval
    const caught = yield* Effect.result(pass.catchUp({ fullListing, probeFeed: false }))
    if (caught._tag === "Failure") {
      const error = caught.failure
      yield* refused(error)
      if (isLoginRequired(error)) {
        yield* waitForLogin(error)
        continue
      }
      if (!isTransient(error)) return yield* error
      yield* Effect.logWarning(`poll failed, retrying at the next poll: ${error.message}`)
      yield* notify.status(`poll failed: ${error.message}`)
      continue
    }
    yield* caughtUp
    if (fullListing && caught.success.mode === "listing") lastFull = now
    const remote = caught.success
    const storeChanged = remote.upserted + remote.deleted + remote.removedUnlisted > 0 || remote.listingCompleted
    const retryDue = failedAt !== null && now - failedAt >= RETRY_FAILED_POLLS * settings.pollInterval
    if (!storeChanged && !localChanged && !retryDue && reason !== "signal") {
      // Nothing changed: a mirror in line is still in line.
      if (inLine) yield* metrics.syncSucceeded
      continue
    }
    localChanged = false
    const report = yield* pass.reconcile({ allowBigDelete: false })
    yield* passDone(report)
    failedAt = report.failures.length > 0 ? Date.now() : null
  }
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
 * Bytes of each finished download (what it fetched over the network) counted as they land,
 * download retries, and the rate, queue depth and app-state write counts sampled every
 * TRANSFER_SAMPLE_INTERVAL, for the scope's life.
 */
const observeTransfers = Effect.gen(function* () {
  const progress = yield* ProgressTracker
  const queue = yield* TransferQueue
  const metrics = yield* Metrics
  const appState = yield* AppStateWriter
  yield* forEachTransferEvent((event) =>
    event._tag === "Finished"
      ? metrics.addBytesTransferred(event.fetched)
      : event._tag === "Retrying"
        ? metrics.retry("download")
        : Effect.void
  )
  // The app-state writer keeps running totals; the metric counts what was added since.
  let appStateSeen = { written: 0, preconditionFailures: 0, dropped: 0 }
  const sample = Effect.gen(function* () {
    const overall = progress.snapshot(yield* Clock.currentTimeMillis).overall
    const stats = queue.stats()
    yield* metrics.setTransferRate(overall.active === 0 ? 0 : overall.rate)
    yield* metrics.setQueueDepth(stats.queued + stats.waitingForSpace)
    const writes = yield* appState.stats
    yield* metrics.appStateWrite("written", writes.written - appStateSeen.written)
    yield* metrics.appStateWrite("precondition_failed", writes.preconditionFailures - appStateSeen.preconditionFailures)
    yield* metrics.appStateWrite("failed", writes.dropped - appStateSeen.dropped)
    appStateSeen = writes
  })
  yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(TRANSFER_SAMPLE_INTERVAL)))
})
