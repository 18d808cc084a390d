/**
 * The daemon: a full pass at start, then a poll every `sync.poll_interval` (±10 % jitter)
 * until interrupted (SIGTERM/SIGINT: the runtime interrupts this fiber and the reconcile
 * under way, transfers abort at their last durable offset, the store is consistent after
 * every transaction). The schedule is daemonLoop.ts, what wakes it daemonWakes.ts, what
 * it remembers between steps and when a reconcile is owed daemonState.ts (pure), what it
 * counts daemonMetrics.ts; this file says what a poll and a reconcile are, and reports them.
 *
 *   start ─► catch up (full) ─► reconcile ─► ends: the next one starts at once if a poll
 *                                   │          during it owed one, else when a poll owes one
 *                                   │ while it runs, and between reconciles alike:
 *                                   ▼
 *            wait ─┬─ poll interval (jittered)
 *                  ├─ SIGHUP / SIGUSR1 (poll now)
 *                  ├─ the owner's request (DaemonRequests, the web page: as a signal)
 *                  ├─ a verified webhook delivery (PollRequests: poll now, the feed decides)
 *                  ├─ the intake: a release's files are known (IntakeRunner)
 *                  └─ a change under the root (fs/watchFolder.ts, settled 2 s)
 *                         │
 *                         ▼
 *            catch up (one request when idle; in listing mode a full listing as often as its
 *            cost allows, see sync/listingCadence.ts)
 *                         │
 *                         ▼
 *            a reconcile is owed if the store changed, the root changed, failures are due
 *            for a retry, a full listing completed (listing mode), remote cleanup has a
 *            file come of age or a retry due, or a signal or the intake asked
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

import { Clock, Effect, Random, Ref } from "effect"
import { type ApiError, isAuthProblem, isTransient } from "../api/ApiError.ts"
import { isLoginRequired } from "../auth/AuthError.ts"
import { RemoteCleanup } from "../cleanup/RemoteCleanup.ts"
import { IntakeRunner } from "../intake/IntakeRunner.ts"
import { Metrics } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { SdNotify } from "../service/SdNotify.ts"
import { Store } from "../store/Store.ts"
import { storeFailureOf } from "../store/StoreError.ts"
import {
  fullListingInterval,
  isFullListingDue,
  LISTING_REQUESTS_PER_HOUR,
  listingCostOf
} from "../sync/listingCadence.ts"
import type { LocalOpError, RootUnavailable } from "../sync/localOps.ts"
import { DaemonRequests } from "./DaemonRequests.ts"
import { type PollOutcome, runDaemonLoop, type Wake } from "./daemonLoop.ts"
import { filesByState, observeTransfers } from "./daemonMetrics.ts"
import { initialDaemonState, owesReconcile, reconcileEnded, reconcileStarting } from "./daemonState.ts"
import { daemonWakes } from "./daemonWakes.ts"
import { EngineSettings } from "./EngineSettings.ts"
import { describeReport, MirrorPass, type ReconcileReport } from "./MirrorPass.ts"
import { recordSignInEvent } from "./statusDocument.ts"

/** Polls come every poll interval ± this fraction of it. */
export const POLL_JITTER = 0.1

export const runDaemon = Effect.fn("Daemon.run")(function* () {
  const pass = yield* MirrorPass
  const settings = yield* EngineSettings
  const notify = yield* SdNotify
  const readiness = yield* Readiness
  const metrics = yield* Metrics
  const store = yield* Store
  const cleanup = yield* RemoteCleanup
  const requests = yield* DaemonRequests

  yield* Effect.acquireRelease(readiness.setStoreOpen(true), () => readiness.setStoreOpen(false))
  yield* observeTransfers
  yield* metrics.watchRootFreeSpace(settings.root)
  const wakes = yield* daemonWakes(settings.root)
  const state = yield* Ref.make(initialDaemonState(yield* Clock.currentTimeMillis))

  // The intake queue: sends what was added (by any process), follows it, and asks for a
  // reconcile when a download's files are known (they are mirrored whatever the filters say).
  const intake = yield* Effect.serviceOption(IntakeRunner)
  if (intake._tag === "Some") yield* Effect.forkScoped(intake.value.run(wakes.wake("intake")))

  yield* notify.ready("first pass")
  // Added last, so it runs first when shutdown closes the scope.
  yield* Effect.addFinalizer(() => notify.stopping)

  /**
   * The sign-in was refused (revoked, or a rotated refresh token lost): the mirror is left
   * as it is and every poll tries again, so a later `dlsync login` takes effect without a
   * restart. Recorded once per episode, for `status`.
   */
  const waitForLogin = Effect.fnUntraced(function* (error: ApiError) {
    const before = yield* Ref.getAndUpdate(state, (s) => ({ ...s, loginRequired: true }))
    if (!before.loginRequired) yield* recordSignInEvent(store, "login required")
    yield* Effect.logError(`${error.message}; retrying at every poll`)
    yield* notify.status("login required: run `dlsync login`")
  })
  /** A catch-up succeeded: the service accepted the credential and the feed is at its head. */
  const caughtUp = Effect.gen(function* () {
    yield* Effect.all([readiness.setSignedIn(true), readiness.feedPolled, metrics.feedCaughtUp], { discard: true })
    const before = yield* Ref.getAndUpdate(state, (s) => ({ ...s, loginRequired: false }))
    if (!before.loginRequired) return
    yield* recordSignInEvent(store, "ok")
    yield* Effect.logInfo("signed in again")
  })

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

  /** A failed catch-up: waited out (login required, transient) or the daemon's failure. */
  const pollFailed = Effect.fnUntraced(function* (error: ApiError, start: boolean) {
    if (isAuthProblem(error)) yield* readiness.setSignedIn(false)
    if (isLoginRequired(error)) return yield* waitForLogin(error)
    if (!isTransient(error)) return yield* error
    const what = start ? "service unreachable" : "poll failed"
    yield* Effect.logWarning(`${what}, retrying at the next poll: ${error.message}`)
    yield* notify.status(`${what}: ${error.message}`)
  })

  const poll = Effect.fnUntraced(function* (reason: Wake): Effect.fn.Return<PollOutcome, ApiError> {
    const now = yield* Clock.currentTimeMillis
    const start = reason === "start"
    const before = yield* Ref.get(state)
    const listingEvery = fullListingInterval({
      cost: before.listingCost ?? listingCostOf(yield* store.remote.count),
      pollInterval: settings.pollInterval,
      maxInterval: settings.listingInterval,
      requestsPerHour: LISTING_REQUESTS_PER_HOUR
    })
    const fullListing =
      start || isFullListingDue(now - before.lastFullAt, listingEvery, settings.pollInterval, POLL_JITTER)
    const caught = yield* Effect.result(pass.catchUp({ fullListing, probeFeed: start })).pipe(
      Effect.catchDefect(whenStateDiskFull("full" as const))
    )
    if (caught === "full") return "failed"
    if (caught._tag === "Failure") {
      yield* pollFailed(caught.failure, start)
      return "failed"
    }
    yield* caughtUp
    const remote = caught.success
    if (fullListing && remote.mode === "listing") {
      const cost = { items: yield* store.remote.count, requests: remote.requests }
      yield* Ref.update(state, (s) => ({ ...s, lastFullAt: now, listingCost: cost }))
    }
    const owed = owesReconcile(yield* Ref.get(state), {
      now,
      reason,
      storeChanged: remote.upserted + remote.deleted + remote.removedUnlisted > 0 || remote.listingCompleted,
      localChanged: yield* wakes.localChanged,
      cleanupDueAt: yield* cleanup.dueAt,
      pollInterval: settings.pollInterval
    })
    if (owed) return "reconcile"
    // Nothing changed: a mirror in line is still in line.
    if ((yield* Ref.get(state)).inLine) yield* metrics.syncSucceeded
    return "idle"
  })

  const passDone = Effect.fnUntraced(function* (report: ReconcileReport) {
    const message = describeReport(report)
    yield* Effect.logInfo(message)
    yield* notify.status(message)
    yield* metrics.setFilesByState(yield* filesByState(store))
    yield* metrics.setHeldDeletions(report.held?.count ?? 0)
  })

  const reconcile = Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    yield* wakes.settleLocalChanges
    yield* Ref.update(state, (s) => reconcileStarting(s, started))
    // The daemon's transfer queue waits for room; a queue that did not is retried at a later poll.
    // A held deletion goes ahead only when the owner confirmed it (DaemonControl), once.
    const allowBigDelete = yield* requests.takeDeletionAllowance
    const report = yield* pass.reconcile({ allowBigDelete }).pipe(
      Effect.catchTag("NotEnoughSpace", (error) => Effect.as(Effect.logWarning(error.message), null)),
      Effect.catchDefect(whenStateDiskFull(null))
    )
    const ended = yield* Clock.currentTimeMillis
    yield* metrics.passFinished((ended - started) / 1000)
    if (report !== null) yield* passDone(report)
    const after = yield* Ref.updateAndGet(state, (s) =>
      reconcileEnded(
        s,
        ended,
        report === null ? null : { failures: report.failures.length, held: report.held !== null }
      )
    )
    if (after.inLine) yield* metrics.syncSucceeded
  })

  return yield* runDaemonLoop<ApiError | RootUnavailable | LocalOpError>({
    wakes: wakes.queue,
    nextPollIn: Effect.map(Random.next, (r) =>
      Math.round(settings.pollInterval * (1 - POLL_JITTER + 2 * POLL_JITTER * r))
    ),
    poll,
    reconcile
  })
})
