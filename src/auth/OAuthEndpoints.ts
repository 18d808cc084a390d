/**
 * The OAuth endpoints dlsync talks to: device authorization and the token endpoint, found
 * by discovery at `{auth_url}/.well-known/oauth-authorization-server` and, when discovery
 * fails or names another origin, at the spec's paths (`/oauth/device/authorize`,
 * `/oauth/token`).
 *
 * Invariants:
 * - A discovered endpoint is used only when it lies under `auth_url` (same origin, same
 *   path prefix): a refresh token or device code is never sent anywhere else.
 * - Requests are form-encoded, carry no bearer, and are never replayed once sent (a
 *   refresh token dies on first use; a device code issues tokens once).
 * - Discovery runs at most once per layer, on first use.
 */
import { Context, Effect, Layer } from "effect"
import { ApiEndpoints } from "../api/ApiEndpoints.ts"
import { ApiError, ClientValidation } from "../api/ApiError.ts"
import { ApiHttp, ApiObserver, decodeBody } from "../api/ApiHttp.ts"
import type { ApiTransport } from "../api/ApiTransport.ts"
import { Credentials } from "../api/Credentials.ts"
import { grantFields, makeOAuthApi, type TokenGrant } from "../api/oauth.ts"
import { DeviceAuthorization, TokenResponse } from "../api/schemas/oauth.ts"

/** The spec's paths, relative to auth_url. */
export const SPEC_PATHS: OAuthPaths = { deviceAuthorization: "/oauth/device/authorize", token: "/oauth/token" }

export interface OAuthPaths {
  readonly deviceAuthorization: string
  readonly token: string
}

export class OAuthEndpoints extends Context.Service<
  OAuthEndpoints,
  {
    /** The paths in use (discovered or the spec's), relative to auth_url. */
    readonly paths: Effect.Effect<OAuthPaths>
    /** POST device authorization with the client id and the scopes asked for. */
    authorizeDevice(clientId: string, scopes: ReadonlyArray<string>): Effect.Effect<DeviceAuthorization, ApiError>
    /** POST the token endpoint. */
    token(grant: TokenGrant): Effect.Effect<TokenResponse, ApiError>
  }
>()("dlsync/auth/OAuthEndpoints") {
  /** Needs the endpoints and an ApiTransport; uses its own ApiHttp that never sends a bearer. */
  static readonly layer: Layer.Layer<OAuthEndpoints, never, ApiEndpoints | ApiTransport> = Layer.effect(
    OAuthEndpoints,
    Effect.gen(function* () {
      const http = yield* ApiHttp
      const { authUrl } = yield* ApiEndpoints
      const paths = yield* Effect.cached(
        makeOAuthApi(http).discover.pipe(
          Effect.map((metadata) => ({
            deviceAuthorization: underRoot(authUrl, metadata.device_authorization_endpoint),
            token: underRoot(authUrl, metadata.token_endpoint)
          })),
          Effect.tap((found) =>
            found.deviceAuthorization === undefined || found.token === undefined
              ? Effect.logWarning("OAuth discovery named no usable endpoint under auth_url; using the spec's paths")
              : Effect.void
          ),
          Effect.map((found) => ({
            deviceAuthorization: found.deviceAuthorization ?? SPEC_PATHS.deviceAuthorization,
            token: found.token ?? SPEC_PATHS.token
          })),
          Effect.catch((e) =>
            Effect.logWarning("OAuth discovery failed; using the spec's paths").pipe(
              Effect.annotateLogs({ error: e.message }),
              Effect.as(SPEC_PATHS)
            )
          )
        )
      )
      const post = (path: string, fields: ReadonlyArray<readonly [string, string]>) =>
        http.send({ method: "POST", root: "auth", path, body: { _tag: "Form", fields }, idempotency: "unsafe" })
      return OAuthEndpoints.of({
        paths,
        authorizeDevice: Effect.fn("OAuthEndpoints.authorizeDevice")(function* (clientId, scopes) {
          const { deviceAuthorization } = yield* paths
          const fields: Array<readonly [string, string]> = [["client_id", clientId]]
          if (scopes.length > 0) fields.push(["scope", scopes.join(" ")])
          return yield* decodeBody(DeviceAuthorization)(yield* post(deviceAuthorization, fields))
        }),
        token: Effect.fn("OAuthEndpoints.token")(function* (grant) {
          const { token } = yield* paths
          return yield* decodeBody(TokenResponse)(yield* post(token, grantFields(grant)))
        })
      })
    })
  ).pipe(
    // Fresh: layers are memoized by identity, and the application's ApiHttp carries the real credentials.
    Layer.provide(Layer.fresh(ApiHttp.layer)),
    Layer.provide(Layer.merge(noBearer(), ApiObserver.none))
  )
}

/** The path of `url` relative to `root` when it lies under it, else undefined. */
export const underRoot = (root: string, url: string | undefined): string | undefined => {
  if (url === undefined || !URL.canParse(url)) return undefined
  const target = new URL(url)
  const base = new URL(root)
  if (target.origin !== base.origin || target.search !== "" || target.hash !== "") return undefined
  const prefix = base.pathname.replace(/\/+$/, "")
  if (!target.pathname.startsWith(`${prefix}/`)) return undefined
  return target.pathname.slice(prefix.length)
}

// ---------------------------------------------------------------------------------------

/** OAuth requests go to the auth root, which never asks for a bearer; asking anyway is a bug. */
function noBearer(): Layer.Layer<Credentials> {
  const refuse = new ApiError({
    operation: "OAuth request",
    reason: new ClientValidation({ field: "Authorization", message: "OAuth endpoints take no bearer" })
  })
  return Layer.succeed(
    Credentials,
    Credentials.of({ bearer: Effect.fail(refuse), refreshAfterUnauthorized: () => Effect.succeed(false) })
  )
}
