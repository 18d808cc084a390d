/**
 * `dlsync run [--once] [--allow-big-delete]` (cli/run.ts): the daemon on daemonLayer
 * (layers/daemon.ts), or one pass for cron on onceLayer (layers/engine.ts).
 *
 * Exit codes (main.ts): 0 the mirror matches · 1 some items failed (each listed here) ·
 * 75 service unreachable, its rate limit longer than a pass waits (ONCE_MAX_RATE_LIMIT_WAIT_MS),
 *    another instance holds the lock, the state dir's disk is full, or (--once) the mirror's
 *    disk has less room than transfers.min_free_space needs · 77 authentication ·
 * 78 configuration, an unmounted root, a damaged state database, or a `server.listen`,
 *    `webhooks.listen`, `qbittorrent.listen` or `sabnzbd.listen` the daemon cannot listen on ·
 * 64 usage.
 *
 * `--once` opens no port: it is the engine alone.
 */
import { Console, Effect } from "effect"
import { commandConfig } from "../cli/commandConfig.ts"
import { ItemsFailed, UsageError } from "../engine/EngineError.ts"
import { count, describeReport, MirrorPass, type PassReport } from "../engine/MirrorPass.ts"
import { recordSignInEvent, signInState } from "../engine/statusDocument.ts"
import { IntakeRunner } from "../intake/IntakeRunner.ts"
import { onceLayer } from "../layers/engine.ts"
import { Store } from "../store/Store.ts"
import { forEachTransferEvent } from "../transfer/ProgressTracker.ts"
import { formatBytes, rateLimitedLine } from "../transfer/progressFormat.ts"

export const run = Effect.fn("run")(function* (flags: { readonly once: boolean; readonly allowBigDelete: boolean }) {
  if (flags.allowBigDelete && !flags.once) {
    return yield* new UsageError({ detail: "--allow-big-delete goes with --once (one supervised pass)" })
  }
  const config = yield* commandConfig
  if (flags.once) return yield* runOnce(flags.allowBigDelete).pipe(Effect.scoped, Effect.provide(onceLayer(config)))
  // The daemon's own code (its servers, the intake's watchers) loads only for the daemon:
  // `--once` compiles none of it (esbuild puts it in chunks of their own).
  const [{ runDaemon }, { daemonLayer }] = yield* Effect.promise(() =>
    Promise.all([import("../engine/Daemon.ts"), import("../layers/daemon.ts")])
  )
  return yield* runDaemon().pipe(Effect.scoped, Effect.provide(daemonLayer(config)))
})

/** One pass with per-file progress lines; lists every failure and fails with ItemsFailed. */
export const runOnce = Effect.fn("runOnce")(function* (allowBigDelete: boolean) {
  const pass = yield* MirrorPass
  const store = yield* Store
  // The intake queue: what `dlsync add` recorded is sent and followed before the pass, and what landed verified after it.
  const intake = yield* IntakeRunner
  yield* intake.round
  // Its own scope: every download line is written before the summary.
  const report = yield* Effect.scoped(
    Effect.andThen(
      logTransfers,
      pass.run({
        allowBigDelete,
        fullListing: true,
        probeFeed: true,
        onPage: ({ pages, items }) =>
          pages % 10 === 0 ? Effect.logInfo(`listing: ${pages} pages, ${items} items`) : Effect.void,
        onPlan: (summary) =>
          summary.actions > 0
            ? Effect.logInfo(
                `plan: ${summary.actions} actions, ${summary.downloads} downloads (${formatBytes(summary.bytes)})`
              )
            : Effect.void
      })
    )
  ).pipe(
    Effect.tapError((error) =>
      error._tag === "ApiError" && SIGN_IN_REFUSED.has(error.reason._tag) ? recordSignIn(store, "refused") : Effect.void
    )
  )
  yield* recordSignIn(store, "accepted")
  yield* intake.round
  yield* Console.log(summarize(report))
  if (report.failures.length > 0 || report.held !== null) {
    for (const f of report.failures) yield* Console.error(`failed: ${f.path}: ${f.reason}`)
    if (report.held !== null) {
      yield* Console.error(
        `held: a big delete of ${report.held.count} of ${report.held.mirrored} files (limit: ${report.held.limit}); nothing removed. Run \`dlsync run --once --allow-big-delete\` to go ahead.`
      )
    }
    return yield* new ItemsFailed({ count: report.failures.length + (report.held === null ? 0 : report.held.count) })
  }
})

/** The one-line outcome of a pass. */
export const summarize = (report: PassReport): string =>
  `${report.remote.mode} mode: ${count(report.remote.pages, "page")}, ${report.remote.upserted} updated, ${report.remote.deleted + report.remote.removedUnlisted} removed remotely; ${describeReport(report)}`

// ---------------------------------------------------------------------------------------

/** The ApiError reasons main.ts exits 77 for: the service refused the credential, or the OAuth server the refresh. */
const SIGN_IN_REFUSED: ReadonlySet<string> = new Set(["Unauthorized", "Forbidden", "OAuth"])

/**
 * Records a refused sign-in, and a sign-in that works again, as the daemon does, so that
 * `status` tells the sign-in state after a single pass too. Only a change is recorded.
 */
const recordSignIn = Effect.fnUntraced(function* (store: Store["Service"], outcome: "refused" | "accepted") {
  const current = signInState(yield* store.events.recent(200)).state
  if (outcome === "refused" && current === "ok") yield* recordSignInEvent(store, "login required")
  if (outcome === "accepted" && current === "login required") yield* recordSignInEvent(store, "ok")
})

/** A log line per file finished, parked, retried or waiting for the rate limit, for the length of the scope. */
const logTransfers = forEachTransferEvent((event) => {
  switch (event._tag) {
    case "Finished":
      return Effect.logInfo(
        `downloaded ${event.name} (${formatBytes(event.size)} in ${formatElapsed(event.elapsedMs)})`
      )
    case "Parked":
      return Effect.logWarning(`download parked: ${event.name}: ${event.reason}`)
    case "Retrying":
      return Effect.logInfo(`retrying ${event.name}: ${event.reason}`)
    case "RateLimited":
      return Effect.logInfo(rateLimitedLine(event))
    default:
      return Effect.void
  }
})

const formatElapsed = (millis: number): string => (millis < 1000 ? `${millis} ms` : `${(millis / 1000).toFixed(1)} s`)
