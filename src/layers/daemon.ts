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
 */
import { Duration, Effect, Layer } from "effect"
import { ApiObserver } from "../api/ApiHttp.ts"
import { arrLayer } from "../arr/arrLayer.ts"
import { blackholeLayer } from "../blackhole/Blackhole.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { settingsFrom } from "../engine/EngineSettings.ts"
import { statusDocument } from "../engine/statusDocument.ts"
import { pollRequestsLayer } from "../events/PollRequests.ts"
import { intakeLayer } from "../intake/IntakeLive.ts"
import { qbittorrentLayer } from "../qbittorrent/QbittorrentServer.ts"
import { SabnzbdServer } from "../sabnzbd/SabnzbdServer.ts"
import { HealthServer } from "../server/HealthServer.ts"
import { Metrics } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { StatusSource } from "../server/StatusSource.ts"
import { SdNotify } from "../service/SdNotify.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import { WebhookReceiver } from "../webhooks/WebhookReceiver.ts"
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
    Layer.provideMerge(
      engineLayer(config, { waitForLogin: true }, { waitForSpace: true }).pipe(Layer.provide(observed))
    ),
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
