/**
 * Everything the daemon (`dlsync run`) runs on, built in this order (each layer's build
 * needs what is above it):
 *
 *   Metrics · Readiness · SdNotify (watchdog pings) · PollRequests
 *     └─► engineLayer: instance lock ─► store ─► engine   (API requests observed by Metrics)
 *           └─► HealthServer on server.listen (StatusSource = the `status --json` document)
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
import { settingsFrom } from "../engine/EngineSettings.ts"
import { statusDocument } from "../engine/statusDocument.ts"
import { PollRequests } from "../events/PollRequests.ts"
import { intakeLayer } from "../intake/IntakeLive.ts"
import { HealthServer } from "../server/HealthServer.ts"
import { Metrics } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { StatusSource } from "../server/StatusSource.ts"
import { SdNotify } from "../service/SdNotify.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
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
  ).pipe(Layer.provide(intakeLayer(config)))
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
        PollRequests.layer
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
