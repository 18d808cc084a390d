/**
 * `dlsync run [--once] [--allow-big-delete]`: the daemon, or one pass for cron.
 * `dlsync --once` is the same as `dlsync run --once` (main.ts rewrites it).
 *
 * Exit codes (main.ts): 0 the mirror matches · 1 some items failed (each listed here) ·
 * 75 service unreachable, its rate limit longer than a pass waits (ONCE_MAX_RATE_LIMIT_WAIT_MS),
 *    another instance holds the lock, the state dir's disk is full, or (--once) the mirror's
 *    disk has less room than transfers.min_free_space needs · 77 authentication ·
 * 78 configuration, an unmounted root, a damaged state database, or a `server.listen` or
 *    `webhooks.listen` the daemon cannot listen on ·
 * 64 usage.
 *
 * The daemon's graph, built in this order (each layer's build needs what is above it):
 *
 *   Metrics · Readiness · SdNotify (watchdog pings) · PollRequests
 *     └─► runLayer: instance lock ─► store ─► engine   (API requests observed by Metrics)
 *           └─► HealthServer on server.listen (StatusSource = the `status --json` document)
 *               and WebhookReceiver on webhooks.listen (verified deliveries → PollRequests)
 *                 └─► runDaemon: READY=1 … STOPPING=1
 *
 * `--once` opens no port: it is the engine alone.
 */
import { Console, Duration, Effect, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import { ApiObserver } from "../api/ApiHttp.ts"
import { RunKind } from "../appstate/mirrorAppState.ts"
import { arrLayer } from "../arr/arrLayer.ts"
import { blackholeLayer } from "../blackhole/Blackhole.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { runDaemon } from "../engine/Daemon.ts"
import { ItemsFailed, UsageError } from "../engine/EngineError.ts"
import { settingsFrom } from "../engine/EngineSettings.ts"
import { runLayer } from "../engine/engineLayer.ts"
import { count, describeReport, MirrorPass, type PassReport } from "../engine/MirrorPass.ts"
import { pollRequestsLayer } from "../engine/PollRequests.ts"
import { recordSignInEvent, signInState, statusDocument } from "../engine/statusDocument.ts"
import { intakeLayer } from "../intake/IntakeLive.ts"
import { IntakeRunner } from "../intake/IntakeRunner.ts"
import { qbittorrentLayer } from "../qbittorrent/QbittorrentServer.ts"
import { SabnzbdServer } from "../sabnzbd/SabnzbdServer.ts"
import { HealthServer } from "../server/HealthServer.ts"
import { Metrics } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { StatusSource } from "../server/StatusSource.ts"
import { SdNotify } from "../service/SdNotify.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import { forEachTransferEvent } from "../transfer/ProgressTracker.ts"
import { formatBytes } from "../transfer/progressFormat.ts"
import { rateLimitedLine } from "../transfer/progressView.ts"
import { WebhookReceiver } from "../webhooks/WebhookReceiver.ts"
import { commandConfig } from "./commandConfig.ts"

export const runCommand = Command.make(
  "run",
  {
    once: Flag.Boolean("once").pipe(
      Flag.withDescription("One pass, then exit (for cron): 0 when the mirror matches, 1 when items failed"),
      Flag.withDefault(false)
    ),
    allowBigDelete: Flag.Boolean("allow-big-delete").pipe(
      Flag.withDescription("With --once: carry out a removal held by the big-delete limit (mirror.max_delete)"),
      Flag.withDefault(false)
    )
  },
  Effect.fn("run")(function* ({ once, allowBigDelete }) {
    if (allowBigDelete && !once) {
      return yield* new UsageError({ detail: "--allow-big-delete goes with --once (one supervised pass)" })
    }
    const config = yield* commandConfig
    if (once) {
      const layer = runLayer(config).pipe(Layer.provide(Layer.succeed(RunKind, "once")))
      return yield* runOnce(allowBigDelete).pipe(Effect.scoped, Effect.provide(layer))
    }
    return yield* runDaemon().pipe(Effect.scoped, Effect.provide(daemonLayer(config)))
  })
).pipe(
  Command.withDescription(
    "Keep the mirror in line with the account (daemon; SIGHUP or SIGUSR1 polls at once), or one pass with --once"
  )
)

/** The readiness check allows this much time since the last successful poll, at least. */
export const MIN_FEED_MAX_AGE = Duration.minutes(2)

/** max(2 min, 3 × poll_interval): a poll may fail twice before the daemon turns unready. */
export const feedMaxAge = (config: AppConfig): Duration.Duration =>
  Duration.max(MIN_FEED_MAX_AGE, Duration.millis(3 * config.sync.poll_interval))

/** Everything the daemon runs on; see the diagram at the top. */
export const daemonLayer = (config: AppConfig) => {
  const observed = Layer.effect(
    ApiObserver,
    Metrics.use((metrics) =>
      Effect.succeed({ request: metrics.apiRequest, retry: metrics.retry, rateLimitWait: metrics.rateLimitWait })
    )
  )
  const status = Layer.effect(
    StatusSource,
    Effect.gen(function* () {
      const document = statusDocument(yield* Store, settingsFrom(config), yield* IntakeTables)
      return StatusSource.of({ document })
    })
  )
  const server = HealthServer.layer({ listen: config.server.listen, allowedHosts: config.server.allowed_hosts }).pipe(
    Layer.provide(status)
  )
  const webhooks = WebhookReceiver.layer({ listen: config.webhooks.listen, secrets: config.webhooks.secrets })
  // The ways releases come in (each off unless configured), all into the one intake queue.
  const intakeSurfaces = Layer.mergeAll(
    qbittorrentLayer(config),
    SabnzbdServer.layer({
      settings: config.sabnzbd,
      root: config.mirror.root,
      allowedHosts: config.server.allowed_hosts
    }),
    blackholeLayer(config.blackhole.watch),
    // Sonarr/Radarr told of failed releases, and the path doctor's report at start.
    arrLayer(config)
  ).pipe(Layer.provide(intakeLayer(config)))
  return Layer.mergeAll(server, webhooks, intakeSurfaces).pipe(
    Layer.provideMerge(runLayer(config, { waitForLogin: true }, { waitForSpace: true }).pipe(Layer.provide(observed))),
    Layer.provideMerge(
      Layer.mergeAll(
        Metrics.layer,
        Readiness.layer({ feedMaxAge: feedMaxAge(config) }),
        SdNotify.layer,
        pollRequestsLayer
      )
    )
  )
}

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

/**
 * `dlsync --once …` is `dlsync run --once …`. effect/cli runs a root command's own handler
 * only when no subcommand is named, and the root's flags are shared with every
 * subcommand, so the shortcut is an argument rewrite before parsing: `--once` with no
 * subcommand named becomes `run --once`.
 */
export const onceShortcut = (args: ReadonlyArray<string>, subcommands: ReadonlyArray<string>): ReadonlyArray<string> =>
  args.includes("--once") && !args.some((a) => subcommands.includes(a)) ? ["run", ...args] : args

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
