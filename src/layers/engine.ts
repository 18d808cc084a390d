/**
 * The live engine graph for one configuration:
 *
 *   credentials (OAuth tokens or API key) ─► ApiClient ─┬─► RemoteSync ─┐     (service.ts)
 *   Database(state_dir) ─► Store ───────────────────────┤               ├─► MirrorPass
 *                      └─► TransferJournal ─► TransferEngine ─► TransferQueue ─┘
 *                              TransferLinks (POST download-link via ApiClient) ┘
 *   AuthStatus + ApiClient + Database ─► app state (appstate/mirrorAppState.ts: writer,
 *                       outbox, device record) ─► FileProgress ─► TransferDownloads, MirrorPass
 *   ProgressTracker + Store ─► liveTransfersPublisher (the transfers under way, for `status`)
 *   TransferPause (the queue pausable) · RuntimeBandwidth (a limit set now): the web page's controls
 *   MirrorEvents (events/) ─► media refresh · hooks · notifications, each when configured
 *
 * `engineLayer` adds the instance lock (one dlsync per state dir), taken before the
 * database is opened. The daemon (daemon.ts), `run --once` (`onceLayer`) and the demo run
 * on it.
 */
import { Effect, Layer } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import type { ApiError } from "../api/ApiError.ts"
import { ApiObserver } from "../api/ApiHttp.ts"
import type { AppStateWriter } from "../appstate/AppStateWriter.ts"
import { mirrorAppStateLayer, RunKind } from "../appstate/mirrorAppState.ts"
import type { LoginRequired, TokenStoreError } from "../auth/AuthError.ts"
import { type RemoteCleanup, remoteCleanupLayer } from "../cleanup/RemoteCleanup.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { EngineSettings } from "../engine/EngineSettings.ts"
import { type LiveTransfersFeed, liveTransfersPublisher } from "../engine/liveTransfersPublisher.ts"
import { MirrorPass } from "../engine/MirrorPass.ts"
import { RemoteSync } from "../engine/RemoteSync.ts"
import { type RuntimeBandwidth, runtimeBandwidthLayer } from "../engine/runtimeBandwidth.ts"
import { TransferDownloads } from "../engine/TransferDownloads.ts"
import { transferLinksLayer } from "../engine/transferLinksLayer.ts"
import { pausableTransferQueue, type TransferPause } from "../engine/transferPause.ts"
import { MirrorEvents } from "../events/MirrorEvents.ts"
import { hooksLayer } from "../hooks/Hooks.ts"
import { IntakeRunner } from "../intake/IntakeRunner.ts"
import { IntakeSettings } from "../intake/IntakeSettings.ts"
import { mediaRefreshLayer } from "../mediaservers/MediaRefresh.ts"
import { notifyLayer } from "../notify/Notify.ts"
import { postersLayer } from "../posters/Posters.ts"
import type { Database, OpenFailure } from "../store/Database.ts"
import { InstanceLock, type InstanceLocked } from "../store/instanceLock.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import type { Store } from "../store/Store.ts"
import type { StateDiskFull } from "../store/StoreError.ts"
import { LocalOps } from "../sync/localOps.ts"
import { ProgressTracker } from "../transfer/ProgressTracker.ts"
import { TransferEngine } from "../transfer/TransferEngine.ts"
import { TransferFs } from "../transfer/TransferFs.ts"
import { TransferJournal } from "../transfer/TransferJournal.ts"
import { transferOptions } from "../transfer/TransferOptions.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"
import { ZipDownloads } from "../transfer/zip/ZipDownloads.ts"
import { apiLayer } from "./service.ts"
import { storeLayer } from "./store.ts"

export type EngineBuildError = ApiError | LoginRequired | TokenStoreError | OpenFailure | StateDiskFull

/**
 * The longest wait for the service's rate limit on download links that `run --once` makes;
 * a longer Retry-After ends the pass with exit 75 (partial downloads kept) instead.
 */
export const ONCE_MAX_RATE_LIMIT_WAIT_MS = 5 * 60_000

/** Everything a pass needs, after the instance lock. */
export const engineLayer = (
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
  | IntakeRunner
  | MirrorEvents
  | RemoteCleanup
  | TransferPause
  | RuntimeBandwidth
  | LiveTransfersFeed
  | ApiClient,
  EngineBuildError | InstanceLocked,
  ApiObserver | RunKind
> => {
  const api = apiLayer(config, login)
  const options = transferOptions({ ...config.transfers, waitForSpace: space.waitForSpace ?? false })
  // run --once does not wait out a long rate limit: it ends (exit 75) and the next run resumes.
  const transferEngine = Layer.unwrap(
    Effect.gen(function* () {
      const { once } = yield* RunKind
      return TransferEngine.layer(once ? { ...options, maxRateLimitWaitMs: ONCE_MAX_RATE_LIMIT_WAIT_MS } : options)
    })
  )
  // The queue pausable and the bandwidth limit settable while the daemon runs (the web page).
  const transfers = pausableTransferQueue.pipe(
    Layer.provide(TransferQueue.layer(options)),
    Layer.provide(transferEngine),
    Layer.provide(transferLinksLayer),
    Layer.provide(TransferJournal.layerDatabase),
    Layer.provideMerge(runtimeBandwidthLayer(options)),
    Layer.provideMerge(TransferFs.layer),
    Layer.provideMerge(ProgressTracker.layer)
  )
  const engine = MirrorPass.layer.pipe(
    Layer.provide(RemoteSync.layer),
    Layer.provide(TransferDownloads.layer),
    Layer.provide(ZipDownloads.layer(options)),
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
    Layer.provideMerge(api),
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
    Layer.provideMerge(MirrorEvents.layer),
    Layer.provide(InstanceLock.layer(config.mirror.state_dir))
  )
}

/** `engineLayer` for `run --once`: a single pass, which fails at once without a sign-in or disk space; no metrics. */
export const onceLayer = (config: AppConfig) =>
  engineLayer(config).pipe(Layer.provide(Layer.merge(RunKind.once, ApiObserver.none)))
