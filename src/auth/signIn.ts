/**
 * `dlsync login` without the terminal: run the device flow, store the pair for this
 * service, and read the account it signed in to.
 *
 * Invariants: the pair is durably stored (under the refresh lock, so a running daemon
 * never reads half of a change) before the account is fetched; the account is fetched
 * with the new access token against base_url only.
 */
import { Clock, Effect, Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import { ApiEndpoints } from "../api/ApiEndpoints.ts"
import type { ApiError } from "../api/ApiError.ts"
import { ApiHttp, ApiObserver } from "../api/ApiHttp.ts"
import type { ApiTransport } from "../api/ApiTransport.ts"
import { Credentials } from "../api/Credentials.ts"
import type { Account } from "../api/schemas/account.ts"
import type { DeviceLoginFailed, TokenStoreError } from "./AuthError.ts"
import { type DeviceLoginOptions, deviceLogin, toStoredTokens } from "./deviceLogin.ts"
import type { OAuthEndpoints } from "./OAuthEndpoints.ts"
import { TokenStore } from "./TokenStore.ts"

export interface SignInResult {
  readonly account: Account
  /** The token file written. */
  readonly path: string
}

export const signIn = Effect.fn("signIn")(function* (
  options: DeviceLoginOptions
): Effect.fn.Return<
  SignInResult,
  DeviceLoginFailed | ApiError | TokenStoreError,
  OAuthEndpoints | TokenStore | ApiEndpoints | ApiTransport
> {
  const store = yield* TokenStore
  const { authUrl } = yield* ApiEndpoints
  const response = yield* deviceLogin(options)
  const tokens = toStoredTokens(response, {
    authUrl,
    clientId: options.clientId,
    scopes: options.scopes,
    nowMs: yield* Clock.currentTimeMillis
  })
  yield* store.withLock(store.write(tokens))
  const account = yield* Effect.gen(function* () {
    const client = yield* ApiClient
    return yield* client.account.get
  }).pipe(
    Effect.provide(
      Layer.fresh(ApiClient.layer).pipe(
        Layer.provide(Layer.fresh(ApiHttp.layer)),
        Layer.provide(Layer.merge(Credentials.apiKey(tokens.accessToken), ApiObserver.none))
      ),
      { local: true }
    )
  )
  return { account, path: store.path }
})
