/**
 * Picks the credential for this run: OAuth tokens when `dlsync login` stored some for this
 * service, else the personal API key (`service.api_key`, `service.api_key_file` or
 * `DLSYNC_SERVICE_API_KEY`, already read by loadConfig), else "not signed in".
 *
 * With an API key, app state and app storage are off (the service accepts only OAuth
 * there): `AuthStatus.appStateAvailable` is false and one notice says so at startup.
 */
import { Effect, Layer, Option } from "effect"
import { Credentials } from "../api/Credentials.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { LoginRequired, type TokenStoreError } from "./AuthError.ts"
import { AuthStatus, OAuthCredentials } from "./OAuthCredentials.ts"
import type { OAuthEndpoints } from "./OAuthEndpoints.ts"
import { TokenStore } from "./TokenStore.ts"

/** The notice logged once when running on an API key. */
export const API_KEY_NOTICE =
  "using the personal API key: per-file progress in app state and the device record in app storage are off (they need OAuth; run `dlsync login` to turn them on)"

/**
 * `waitForLogin` (the daemon): with no credential at all, run on OAuth anyway; every API
 * call then fails with `login_required` (the mirror stays untouched) until `dlsync login`
 * stores tokens, which the running process picks up. Without it (`run --once`, `status`),
 * no credential is LoginRequired at once (exit 77).
 */
export const credentialsFromConfig = (
  config: AppConfig,
  options: { readonly waitForLogin?: boolean } = {}
): Layer.Layer<Credentials | AuthStatus, LoginRequired | TokenStoreError, OAuthEndpoints> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const store = yield* TokenStore
      const stored = yield* store.read
      const forThisService = Option.filter(stored, (t) => t.authUrl === config.service.auth_url)
      if (Option.isSome(forThisService)) {
        return OAuthCredentials.layer({ authUrl: config.service.auth_url })
      }
      if (Option.isSome(config.service.api_key)) {
        yield* Effect.logInfo(API_KEY_NOTICE)
        return Layer.merge(Credentials.apiKey(config.service.api_key.value), AuthStatus.apiKey)
      }
      if (options.waitForLogin === true) {
        yield* Effect.logWarning("login required: run `dlsync login`; waiting for it")
        return OAuthCredentials.layer({ authUrl: config.service.auth_url })
      }
      if (Option.isSome(stored)) {
        return yield* new LoginRequired({
          reason: "other_service",
          detail: `the stored sign-in is for ${stored.value.authUrl}, not ${config.service.auth_url}`
        })
      }
      return yield* new LoginRequired({
        reason: "not_signed_in",
        detail: "not signed in and no API key set (service.api_key, service.api_key_file or DLSYNC_SERVICE_API_KEY)"
      })
    })
  ).pipe(Layer.provide(TokenStore.layer(config.mirror.state_dir)))
