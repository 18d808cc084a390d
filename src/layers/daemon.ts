/**
 * Everything the daemon (`dlsync run`) runs on, built in this order (each layer's build
 * needs what is above it):
 *
 *   Metrics · Readiness · SdNotify (watchdog pings) · PollRequests
 *     └─► engineLayer: instance lock ─► store ─► engine   (API requests observed by Metrics)
 *           └─► HealthServer on server.listen (StatusSource = the `status --json` document),
 *               with the web page and its API (src/web/: DaemonControl, the intake, EventStream)
 *               WebhookReceiver on webhooks.listen (verified deliveries → PollRequests)
 *               the intake's ways in (qBittorrent and SABnzbd APIs, blackhole folder) and
 *               the *arr apps' failure reports, on one intake queue
 *                 └─► runDaemon (engine/Daemon.ts): READY=1 … STOPPING=1
 *
 * The webhook receiver, the intake's ways in and the *arr reports are each off unless
 * configured, and their code is imported only when they are on (`whenOn`): an idle daemon
 * that uses none of them does not hold their source, bytecode and libraries (chokidar).
 */
import { Duration, Effect, Layer, type Scope } from "effect"
import { ApiObserver } from "../api/ApiHttp.ts"
import { RunKind } from "../appstate/mirrorAppState.ts"
import { configuredApps } from "../arr/ArrApp.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { DaemonControl } from "../engine/DaemonControl.ts"
import { DaemonRequests } from "../engine/DaemonRequests.ts"
import { settingsFrom } from "../engine/EngineSettings.ts"
import { cachedMirrorSummary } from "../engine/mirrorSummary.ts"
import { SignedInAccount } from "../engine/SignedInAccount.ts"
import { statusDocument } from "../engine/statusDocument.ts"
import { PollRequests } from "../events/PollRequests.ts"
import type { Intake } from "../intake/Intake.ts"
import { intakeLayer } from "../intake/IntakeLive.ts"
import { HealthServer } from "../server/HealthServer.ts"
import { Metrics } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { StatusSource } from "../server/StatusSource.ts"
import { SdNotify } from "../service/SdNotify.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import { EventStream } from "../web/EventStream.ts"
import { webPageLayer } from "../web/WebPage.ts"
import { engineLayer } from "./engine.ts"

/** The readiness check allows this much time since the last successful poll, at least. */
export const MIN_FEED_MAX_AGE = Duration.minutes(2)

/** max(2 min, 3 × poll_interval): a poll may fail twice before the daemon turns unready. */
export const feedMaxAge = (config: AppConfig): Duration.Duration =>
  Duration.max(MIN_FEED_MAX_AGE, Duration.millis(3 * config.sync.poll_interval))

export const daemonLayer = (config: AppConfig) => {
  const observed = Layer.effect(
    ApiObserver,
    Metrics.use((metrics) =>
      Effect.succeed({ request: metrics.apiRequest, retry: metrics.retry, rateLimitWait: metrics.rateLimitWait })
    )
  )
  // The `status --json` document, its mirror summary kept until the store changes, with what
  // only the daemon knows (the owner's controls, the account).
  const status = Layer.effect(
    StatusSource,
    Effect.gen(function* () {
      const store = yield* Store
      const settings = settingsFrom(config)
      const control = yield* DaemonControl
      const account = yield* SignedInAccount
      const document = statusDocument(store, settings, yield* IntakeTables, {
        summary: cachedMirrorSummary(store, settings),
        daemon: Effect.all({ controls: control.state, account: account.current })
      })
      return StatusSource.of({ document })
    })
  )
  // The intake, one for every surface and the web page.
  const intake = intakeLayer(config)
  // The web page and its API on the status server (src/web/), with the owner's controls.
  const listen = config.server.listen
  const server = Layer.unwrap(
    Effect.gen(function* () {
      const context = yield* Effect.context<DaemonControl | Intake | EventStream | StatusSource>()
      return HealthServer.layer({
        listen,
        allowedHosts: config.server.allowed_hosts,
        ...(listen === "off"
          ? {}
          : { page: webPageLayer(config, listen).pipe(Layer.provide(Layer.succeedContext(context))) })
      })
    })
  ).pipe(
    Layer.provide(status),
    Layer.provide(EventStream.layer),
    Layer.provide(Layer.merge(DaemonControl.layer, SignedInAccount.layer)),
    Layer.provide(intake)
  )
  const webhooks = whenOn(
    config.webhooks.listen !== "off",
    () => import("../webhooks/WebhookReceiver.ts"),
    ({ WebhookReceiver }) => WebhookReceiver.layer({ listen: config.webhooks.listen, secrets: config.webhooks.secrets })
  )
  // The ways releases come in (each off unless configured), all into the one intake queue.
  const intakeSurfaces = Layer.mergeAll(
    whenOn(
      config.qbittorrent !== null,
      () => import("../qbittorrent/QbittorrentServer.ts"),
      ({ qbittorrentLayer }) => qbittorrentLayer(config)
    ),
    whenOn(
      config.sabnzbd.listen !== "off" && config.sabnzbd.apiKey._tag === "Some",
      () => import("../sabnzbd/SabnzbdServer.ts"),
      ({ SabnzbdServer }) =>
        SabnzbdServer.layer({
          settings: config.sabnzbd,
          root: config.mirror.root
        })
    ),
    whenOn(
      config.blackhole.watch !== undefined,
      () => import("../blackhole/Blackhole.ts"),
      ({ blackholeLayer }) => blackholeLayer(config.blackhole.watch)
    ),
    // Sonarr/Radarr told of failed releases, and the path doctor's report at start.
    whenOn(
      configuredApps(config).length > 0,
      () => import("../arr/arrLayer.ts"),
      ({ arrLayer }) => arrLayer(config)
    )
  ).pipe(Layer.provide(intake))
  return Layer.mergeAll(server, webhooks, intakeSurfaces).pipe(
    Layer.provideMerge(
      engineLayer(config, { waitForLogin: true }, { waitForSpace: true }).pipe(
        Layer.provide([observed, RunKind.daemon])
      )
    ),
    Layer.provideMerge(
      Layer.mergeAll(
        Metrics.layer,
        Readiness.layer({ feedMaxAge: feedMaxAge(config) }),
        SdNotify.layer,
        PollRequests.layer,
        DaemonRequests.layer
      )
    )
  )
}

/**
 * `layer`, of a module imported as the daemon starts, if `on`; else nothing is loaded. What
 * it provides is not needed by the rest (each is a server or a loop of its own); what it
 * holds is released with the daemon.
 */
const whenOn = <M, A, E, R>(
  on: boolean,
  load: () => Promise<M>,
  layer: (module: M) => Layer.Layer<A, E, R>
): Layer.Layer<never, E, Exclude<R, Scope.Scope>> =>
  on ? Layer.effectDiscard(Effect.flatMap(Effect.promise(load), (module) => Layer.build(layer(module)))) : Layer.empty
