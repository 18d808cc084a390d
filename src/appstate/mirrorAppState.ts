/**
 * App state for `dlsync run`, composed from the configuration: the writer over the outbox
 * in the state database, the device record with the store's totals (appStateLayer), and
 * FileProgress for the engine. With a personal API key the writer is the disabled one.
 *
 * When the run ends, what was reported is written before the service's connection goes:
 * - the run finished (`run --once`, or the daemon stopped by an error): up to
 *   `app_state.once_wait` (default 30 s), so a cron run leaves with its `complete`
 *   entries written;
 * - the run was interrupted (SIGTERM/SIGINT): up to SHUTDOWN_DRAIN_MS, inside the
 *   daemon's 10 s stop budget.
 * Whatever is left stays in the outbox and is written by the next run (`status` counts it).
 * `run --once` then publishes the device record, within the same bound: its totals are
 * those after the pass. The wait is never silent: a progress line at once and every few
 * seconds (written of queued, time left), and a last line saying what was written or left.
 */
import { Cause, Clock, Context, Duration, Effect, Exit, Layer, Option } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import { ApiError } from "../api/ApiError.ts"
import type { AuthStatus } from "../auth/OAuthCredentials.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { Database } from "../store/Database.ts"
import { localTotals } from "../store/localTotals.ts"
import { VERSION } from "../version.ts"
import { AppStateOutbox } from "./AppStateOutbox.ts"
import { AppStateWriter } from "./AppStateWriter.ts"
import { appStateLayer } from "./appStateLayer.ts"
import { DeviceRecord } from "./DeviceRecord.ts"
import { DRAIN_PROGRESS_EVERY_MS, drainProgressLine } from "./drainProgress.ts"
import { FileProgress } from "./FileProgress.ts"
import { SqliteOutbox } from "./outboxSqlite.ts"

/** The demo's bound for the same wait (its own run, no configuration). */
export const ONCE_DRAIN_MS = 30_000
export const SHUTDOWN_DRAIN_MS = 4_000

/** The run being served: the daemon's (layers/daemon.ts, the demo) or `run --once`'s (onceLayer). */
export class RunKind extends Context.Service<RunKind, { readonly once: boolean }>()("dlsync/appstate/RunKind") {
  static readonly daemon: Layer.Layer<RunKind> = Layer.succeed(RunKind, RunKind.of({ once: false }))
  static readonly once: Layer.Layer<RunKind> = Layer.succeed(RunKind, RunKind.of({ once: true }))
}

export const mirrorAppStateLayer = (
  config: AppConfig
): Layer.Layer<FileProgress | AppStateWriter, never, ApiClient | AuthStatus | Database | RunKind> => {
  const writer = Layer.unwrap(
    Effect.gen(function* () {
      const { db } = yield* Database
      const { once } = yield* RunKind
      return appStateLayer({
        stateDir: config.mirror.state_dir,
        deviceName: config.app_state.device_name,
        progressIntervalMs: config.app_state.progress_interval,
        maxRequestsPerMinute: config.app_state.max_requests_per_minute,
        version: VERSION,
        totals: localTotals(db),
        publishAtStart: !once
      })
    })
  ).pipe(Layer.provideMerge(SqliteOutbox.layerDatabase))
  return Layer.merge(FileProgress.layer, drainOnExit(config.app_state.once_wait)).pipe(Layer.provideMerge(writer))
}

// ---------------------------------------------------------------------------------------

/** Built after the writer, so its finalizer runs while the writer and the client still live. */
const drainOnExit = (
  onceWaitMs: number
): Layer.Layer<never, never, AppStateWriter | AppStateOutbox | DeviceRecord | RunKind> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const writer = yield* AppStateWriter
      const outbox = yield* AppStateOutbox
      const record = yield* DeviceRecord
      const { once } = yield* RunKind
      yield* Effect.addFinalizer((exit) => {
        if (serviceUnusable(exit)) {
          // Every write would fail the same way after its retries, delaying the line that says
          // what happened: the outbox keeps the entries for the next run.
          return Effect.logDebug("app state: the service cannot be used now; the outbox keeps its entries")
        }
        const boundMs = Exit.hasInterrupts(exit) ? SHUTDOWN_DRAIN_MS : onceWaitMs
        // The file entries first: they are what other devices act on; the record is one write.
        const finish = writer.drainWithin(boundMs).pipe(Effect.tap(() => (once ? record.publish : Effect.void)))
        return Effect.gen(function* () {
          const started = yield* Clock.currentTimeMillis
          const queued = yield* outbox.size
          yield* Effect.interruptible(
            Effect.raceFirst(
              finish.pipe(Effect.timeoutOption(Duration.millis(boundMs))),
              logProgress(writer, outbox, queued, started, boundMs)
            )
          )
          const left = yield* outbox.size
          const seconds = Math.round(((yield* Clock.currentTimeMillis) - started) / 100) / 10
          if (left > 0) {
            yield* Effect.logInfo(
              `app state: ${left} entries not yet written stay queued for the next run (or the daemon); \`dlsync status\` counts them`
            ).pipe(Effect.annotateLogs({ queued: left, seconds }))
          } else if (queued > 0) {
            yield* Effect.logInfo(`app state: ${queued} entries written in ${seconds} s`)
          }
        })
      })
    })
  )

/** The run ended because the service could not be reached or refused the credential. */
const serviceUnusable = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) &&
  Option.exists(Cause.findErrorOption(exit.cause), (e) => e instanceof ApiError && UNUSABLE.has(e.reason._tag))

const UNUSABLE: ReadonlySet<string> = new Set(["Transport", "Unauthorized", "Forbidden", "OAuth"])

/**
 * Says what the end of a run waits for while app state is written: a line at once, then
 * every DRAIN_PROGRESS_EVERY_MS (drainProgress.ts). Runs until interrupted.
 */
const logProgress = (
  writer: AppStateWriter["Service"],
  outbox: AppStateOutbox["Service"],
  queued: number,
  started: number,
  boundMs: number
): Effect.Effect<never> =>
  Effect.gen(function* () {
    let total = queued
    let written = 0
    for (;;) {
      const left = yield* outbox.size
      written = Math.max(written, total - left)
      total = Math.max(total, written + left)
      if (left > 0) {
        const elapsedMs = (yield* Clock.currentTimeMillis) - started
        const { ratePerMinute } = yield* writer.stats
        yield* Effect.logInfo(drainProgressLine({ total, written, elapsedMs, ratePerMinute, boundMs }))
      }
      yield* Effect.sleep(Duration.millis(DRAIN_PROGRESS_EVERY_MS))
    }
  })
