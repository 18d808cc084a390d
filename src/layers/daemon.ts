/**
 * Everything the daemon (`dlsync run`) runs on, built in this order (each layer's build
 * needs what is above it):
 *
 *   Metrics · Readiness · SdNotify (watchdog pings)
 *     └─► engineLayer: instance lock ─► store ─► engine   (API requests observed by Metrics)
 *           └─► HealthServer on server.listen (StatusSource = the `status --json` document)
 *                 └─► runDaemon (engine/Daemon.ts): READY=1 … STOPPING=1
 */
import { Duration, Effect, Layer } from "effect"
import { ApiObserver } from "../api/ApiHttp.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { settingsFrom } from "../engine/EngineSettings.ts"
import { statusDocument } from "../engine/statusDocument.ts"
import { HealthServer } from "../server/HealthServer.ts"
import { Metrics } from "../server/Metrics.ts"
import { Readiness } from "../server/Readiness.ts"
import { StatusSource } from "../server/StatusSource.ts"
import { SdNotify } from "../service/SdNotify.ts"
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
    Store.use((store) => Effect.succeed(StatusSource.of({ document: statusDocument(store, settingsFrom(config)) })))
  )
  const server = HealthServer.layer({ listen: config.server.listen, allowedHosts: config.server.allowed_hosts }).pipe(
    Layer.provide(status)
  )
  return server.pipe(
    Layer.provideMerge(
      engineLayer(config, { waitForLogin: true }, { waitForSpace: true }).pipe(Layer.provide(observed))
    ),
    Layer.provideMerge(
      Layer.mergeAll(Metrics.layer, Readiness.layer({ feedMaxAge: feedMaxAge(config) }), SdNotify.layer)
    )
  )
}
