/**
 * The Download Service as the configuration names it:
 *
 *   ApiTransport (node:http) ─► ApiEndpoints (base_url, auth_url) ─► OAuthEndpoints   = serviceLayer
 *     └─► credentials (stored OAuth tokens, or the API key) ─► ApiClient           = apiLayer
 *
 * `login` signs in on `serviceLayer`; `config check --online` and the engine call the
 * API through `apiLayer`.
 */
import { Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import { ApiEndpoints, type Endpoints } from "../api/ApiEndpoints.ts"
import { ApiTransport } from "../api/ApiTransport.ts"
import { credentialsFromConfig } from "../auth/credentialsFromConfig.ts"
import { OAuthEndpoints } from "../auth/OAuthEndpoints.ts"
import type { AppConfig } from "../config/loadConfig.ts"

const endpointsOf = (config: AppConfig): Endpoints => ({
  baseUrl: config.service.base_url,
  authUrl: config.service.auth_url
})

/** The service's endpoints, the transport to them and its OAuth endpoints (kept in the output). */
export const serviceLayer = (config: AppConfig) =>
  OAuthEndpoints.layer.pipe(
    Layer.provideMerge(ApiEndpoints.layer(endpointsOf(config))),
    Layer.provideMerge(ApiTransport.layerNodeHttp)
  )

/** The API client with the configured credential; Credentials and AuthStatus are kept in the output (app state reads AuthStatus). */
export const apiLayer = (
  config: AppConfig,
  /** The daemon starts without a usable sign-in and waits for `dlsync login`; anything else fails at once (77). */
  login: { readonly waitForLogin?: boolean } = {}
) =>
  ApiClient.layerLive(endpointsOf(config)).pipe(
    Layer.provideMerge(credentialsFromConfig(config, login).pipe(Layer.provide(serviceLayer(config))))
  )
