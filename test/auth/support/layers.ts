/** Client layers aimed at an emulator's URLs (no emulator import: child processes load this). */
import { Layer } from "effect"
import { ApiClient } from "../../../src/api/ApiClient.ts"
import { ApiEndpoints } from "../../../src/api/ApiEndpoints.ts"
import { ApiHttp, ApiHttpSettings, ApiObserver, type HttpSettings } from "../../../src/api/ApiHttp.ts"
import { ApiTransport } from "../../../src/api/ApiTransport.ts"
import { OAuthCredentials } from "../../../src/auth/OAuthCredentials.ts"
import { OAuthEndpoints } from "../../../src/auth/OAuthEndpoints.ts"
import { TokenStore } from "../../../src/auth/TokenStore.ts"

/** Fast retries for tests. */
export const FAST_SETTINGS: HttpSettings = {
  schedule: { baseDelayMs: 1, maxDelayMs: 4, maxAttempts: 3, maxInlineWaitMs: 2_000 },
  timeoutMs: 5_000,
  maxResponseBytes: 1024 * 1024
}

export interface Urls {
  readonly baseUrl: string
  readonly authUrl: string
}

/** Endpoints, undici and fast settings for the emulator. */
export const transportLayer = (e: Urls) =>
  Layer.mergeAll(
    ApiEndpoints.layer({ baseUrl: e.baseUrl, authUrl: e.authUrl }),
    ApiTransport.layerNodeHttp,
    Layer.succeed(ApiHttpSettings, FAST_SETTINGS)
  ).pipe(Layer.orDie)

/** OAuthEndpoints (and its transport) for the emulator. */
export const oauthLayer = (e: Urls) => OAuthEndpoints.layer.pipe(Layer.provideMerge(transportLayer(e)))

/** A full ApiClient on OAuth credentials from the token file in `stateDir`. */
export const oauthClientLayer = (e: Urls, stateDir: string) => {
  const credentials = OAuthCredentials.layer({ authUrl: e.authUrl }).pipe(
    Layer.provide(Layer.mergeAll(oauthLayer(e), TokenStore.layer(stateDir)))
  )
  return ApiClient.layer.pipe(
    Layer.provide(ApiHttp.layer),
    Layer.provide(ApiObserver.none),
    Layer.provideMerge(credentials),
    Layer.provideMerge(transportLayer(e)),
    Layer.orDie
  )
}
