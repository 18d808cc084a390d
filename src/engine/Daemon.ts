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
 */
import { watch } from "chokidar"
import { Effect, Queue, Random } from "effect"
import { isTransient } from "../api/ApiError.ts"
import { DLSYNC_DIR } from "../sync/tree.ts"
import { EngineSettings } from "./EngineSettings.ts"
import { describeReport, MirrorPass } from "./MirrorPass.ts"

/** Signals that make the daemon poll at once. */
export const POLL_SIGNALS = ["SIGHUP", "SIGUSR1"] as const

/** A change under the root is acted on once the root has been quiet this long. */
export const SETTLE_MS = 2_000

/** Failed items are retried after this many poll intervals. */
export const RETRY_FAILED_POLLS = 5

type Wake = "timer" | "signal" | "local"

export const runDaemon = Effect.fn("Daemon.run")(function* () {
  const pass = yield* MirrorPass
  const settings = yield* EngineSettings
  const wake = yield* Queue.sliding<Wake>(4)

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

  let lastFull = Date.now()
  let failedAt: number | null = null
  const full = yield* pass.run({ allowBigDelete: false, fullListing: true, probeFeed: true }).pipe(
    Effect.tap((report) => Effect.logInfo(describeReport(report))),
    Effect.catchTag("ApiError", (error) =>
      isTransient(error)
        ? Effect.logWarning(`service unreachable, retrying at the next poll: ${error.message}`).pipe(Effect.as(null))
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
      if (!isTransient(error)) return yield* error
      yield* Effect.logWarning(`poll failed, retrying at the next poll: ${error.message}`)
      continue
    }
    if (fullListing && caught.success.mode === "listing") lastFull = now
    const remote = caught.success
    const storeChanged = remote.upserted + remote.deleted + remote.removedUnlisted > 0 || remote.listingCompleted
    const retryDue = failedAt !== null && now - failedAt >= RETRY_FAILED_POLLS * settings.pollInterval
    if (!storeChanged && !localChanged && !retryDue && reason !== "signal") continue
    localChanged = false
    const report = yield* pass.reconcile({ allowBigDelete: false })
    yield* Effect.logInfo(describeReport(report))
    failedAt = report.failures.length > 0 ? Date.now() : null
  }
})
