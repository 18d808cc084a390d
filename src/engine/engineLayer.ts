/**
 * The live engine graph for one configuration, composed in one place:
 *
 *   credentials (OAuth tokens or API key) ─► ApiClient ─┬─► RemoteSync ─┐
 *   Database(state_dir) ─► Store ───────────────────────┤               ├─► MirrorPass
 *                      └─► TransferJournal ─► TransferEngine ─► TransferQueue ─┘
 *                              TransferLinks (POST download-link via ApiClient) ┘
 *   AuthStatus + ApiClient + Database ─► app state (appstate/mirrorAppState.ts: writer,
 *                       outbox, device record) ─► FileProgress ─► TransferDownloads, MirrorPass
 *   ProgressTracker + Store ─► liveTransfersPublisher (the transfers under way, for `status`)
 *   MirrorEvents (events/) ─► media refresh · hooks · notifications, each when configured
 *
 * `runLayer` adds the instance lock (one dlsync per state dir), taken before the database
 * is opened; `storeLayer` is the store alone, for `status` and `restore`.
 */
import { Effect, Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import { ApiEndpoints } from "../api/ApiEndpoints.ts"
import type { ApiError } from "../api/ApiError.ts"
import { ApiTransport } from "../api/ApiTransport.ts"
import type { AppStateWriter } from "../appstate/AppStateWriter.ts"
import { mirrorAppStateLayer, RunKind } from "../appstate/mirrorAppState.ts"
import type { LoginRequired, TokenStoreError } from "../auth/AuthError.ts"
import { credentialsFromConfig } from "../auth/credentialsFromConfig.ts"
import { OAuthEndpoints } from "../auth/OAuthEndpoints.ts"
import { remoteCleanupLayer } from "../cleanup/RemoteCleanup.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { mirrorEventsLayer } from "../events/MirrorEvents.ts"
import { hooksLayer } from "../hooks/Hooks.ts"
import { IntakeRunner } from "../intake/IntakeRunner.ts"
import { IntakeSettings } from "../intake/IntakeSettings.ts"
import { mediaRefreshLayer } from "../mediaservers/MediaRefresh.ts"
import { notifyLayer } from "../notify/Notify.ts"
import { postersLayer } from "../posters/Posters.ts"
import { Database, type OpenFailure } from "../store/Database.ts"
import { InstanceLock, type InstanceLocked } from "../store/instanceLock.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import type { StateDiskFull } from "../store/StoreError.ts"
import { LocalOps } from "../sync/localOps.ts"
import { Bandwidth } from "../transfer/Bandwidth.ts"
import { ProgressTracker } from "../transfer/ProgressTracker.ts"
import { TransferEngine } from "../transfer/TransferEngine.ts"
import { TransferFs } from "../transfer/TransferFs.ts"
import { TransferJournal } from "../transfer/TransferJournal.ts"
import { LinkError, TransferLinks } from "../transfer/TransferLinks.ts"
import { transferOptions } from "../transfer/TransferOptions.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"
import { EngineSettings } from "./EngineSettings.ts"
import { liveTransfersPublisher } from "./liveTransfersPublisher.ts"
import { MirrorPass } from "./MirrorPass.ts"
import { RemoteSync } from "./RemoteSync.ts"
import { TransferDownloads } from "./TransferDownloads.ts"

export type EngineBuildError = ApiError | LoginRequired | TokenStoreError | OpenFailure | StateDiskFull

/** The store of `state_dir`, opened and migrated. */
export const storeLayer = (config: AppConfig): Layer.Layer<Store | Database, OpenFailure> =>
  Store.layer.pipe(Layer.provideMerge(Database.layer(config.mirror.state_dir)))

/**
 * The longest wait for the service's rate limit on download links that `run --once` makes;
 * a longer Retry-After ends the pass with exit 75 (partial downloads kept) instead.
 */
export const ONCE_MAX_RATE_LIMIT_WAIT_MS = 5 * 60_000

/** Download links for the transfer engine: POST /files/{id}/download-link through the API client. */
export const transferLinksLayer: Layer.Layer<TransferLinks, never, ApiClient> = Layer.effect(
  TransferLinks,
  Effect.gen(function* () {
    const client = yield* ApiClient
    return TransferLinks.of({
      getLink: (fileId) =>
        client.files.downloadLink(fileId).pipe(
          Effect.map((link) => ({
            url: link.url,
            // No expiry given: usable until a CDN refusal asks for a fresh one.
            expiresAt: new Date(link.expires_at ?? "9999-12-31T23:59:59Z")
          })),
          Effect.mapError((error) => {
            const r = error.reason
            if (r._tag === "RateLimited") {
              return new LinkError({
                fileId,
                reason: "rate-limited",
                message: error.message,
                ...(r.retryAfterMillis === undefined ? {} : { retryAfterMillis: r.retryAfterMillis })
              })
            }
            const reason =
              r._tag === "NotFound"
                ? "not-found"
                : (r._tag === "Forbidden" || r._tag === "Conflict") && r.code === "resource_locked"
                  ? "locked"
                  : r._tag === "Conflict"
                    ? "not-found"
                    : "unavailable"
            return new LinkError({ fileId, reason, message: error.message })
          })
        )
    })
  })
)

/** Everything `run` needs, after the instance lock. */
/** The API client with the configured credential; Credentials and AuthStatus are kept in the output (app state reads AuthStatus). */
export const apiLayer = (config: AppConfig, login: { readonly waitForLogin?: boolean } = {}) =>
  ApiClient.layerLive({ baseUrl: config.service.base_url, authUrl: config.service.auth_url }).pipe(
    Layer.provideMerge(
      credentialsFromConfig(config, login).pipe(
        Layer.provide(OAuthEndpoints.layer),
        Layer.provide(ApiEndpoints.layer({ baseUrl: config.service.base_url, authUrl: config.service.auth_url })),
        Layer.provide(ApiTransport.layerUndici)
      )
    )
  )

export const runLayer = (
  config: AppConfig,
  /** The daemon starts without a usable sign-in and waits for `dlsync login`; a single pass fails at once (77). */
  login: { readonly waitForLogin?: boolean } = {},
  /** The daemon waits for disk space; a single pass fails at once (75). */
  space: { readonly waitForSpace?: boolean } = {}
): Layer.Layer<
  | MirrorPass
  | Store
  | Database
  | ProgressTracker
  | TransferQueue
  | TransferFs
  | LocalOps
  | EngineSettings
  | AppStateWriter
  | IntakeTables
  | IntakeRunner,
  EngineBuildError | InstanceLocked
> => {
  const api = apiLayer(config, login)
  const options = transferOptions({ ...config.transfers, waitForSpace: space.waitForSpace ?? false })
  const links = transferLinksLayer
  // run --once does not wait out a long rate limit: it ends (exit 75) and the next run resumes.
  const transferEngine = Layer.unwrap(
    Effect.gen(function* () {
      const once = (yield* RunKind) === "once"
      return TransferEngine.layer(once ? { ...options, maxRateLimitWaitMs: ONCE_MAX_RATE_LIMIT_WAIT_MS } : options)
    })
  )
  const transfers = TransferQueue.layer(options).pipe(
    Layer.provide(transferEngine),
    Layer.provide(links),
    Layer.provide(TransferJournal.layerDatabase),
    Layer.provide(Bandwidth.layer(options)),
    Layer.provideMerge(TransferFs.layer),
    Layer.provideMerge(ProgressTracker.layer)
  )
  const engine = MirrorPass.layer.pipe(
    Layer.provide(RemoteSync.layer),
    Layer.provide(TransferDownloads.layer),
    // Posters and remote cleanup run after each reconcile's downloads, when configured (the
    // daemon asks cleanup when a file comes of age).
    Layer.provideMerge(
      Layer.merge(postersLayer(config.posters), remoteCleanupLayer(config.cleanup, config.mirror.max_delete))
    ),
    Layer.merge(liveTransfersPublisher),
    // The intake queue's sender and follower, forked by the daemon (src/intake/IntakeRunner.ts).
    Layer.merge(IntakeRunner.layer.pipe(Layer.provide(IntakeSettings.fromConfig(config)))),
    Layer.provideMerge(mirrorAppStateLayer(config)),
    Layer.provideMerge(transfers),
    // The mirror root enters once, with the settings: local operations and transfers take it from there.
    Layer.provideMerge(Layer.unwrap(EngineSettings.use((settings) => Effect.succeed(LocalOps.layer(settings.root))))),
    Layer.provideMerge(EngineSettings.layer(config)),
    Layer.provide(api),
    Layer.provideMerge(IntakeTables.layer),
    Layer.provideMerge(storeLayer(config))
  )
  // What happened in the mirror, to those who asked to know.
  const afterLanding = Layer.mergeAll(
    mediaRefreshLayer(config.mirror.root, config),
    hooksLayer(config.mirror.root, config.hooks, process.env),
    notifyLayer(config.notify)
  )
  // The lock is taken before the database is opened, and released after it is closed.
  return engine.pipe(
    Layer.merge(afterLanding),
    Layer.provideMerge(mirrorEventsLayer),
    Layer.provide(InstanceLock.layer(config.mirror.state_dir))
  )
}
