/**
 * `dlsync login` (cli/login.ts): signs in with the OAuth device flow. Prints the verification URL and the
 * user code (and a QR code on a terminal), waits for approval, stores the tokens in the
 * state dir and prints the account. Refusal or an expired code fail with
 * DeviceLoginFailed (exit 77); a missing `service.client_id` is a ConfigError (exit 78).
 */
import { Console, Effect, Layer, Option } from "effect"
import type { DeviceAuthorization } from "../api/schemas/oauth.ts"
import { renderQrCode } from "../auth/qrCode.ts"
import { signIn } from "../auth/signIn.ts"
import { TokenStore } from "../auth/TokenStore.ts"
import { commandConfig } from "../cli/commandConfig.ts"
import { configError } from "../config/ConfigError.ts"
import { serviceLayer } from "../layers/service.ts"

export const login = Effect.fn("login")(function* () {
  const config = yield* commandConfig
  if (Option.isNone(config.service.client_id)) {
    return yield* configError(
      "service.client_id",
      "required for `dlsync login`: the OAuth client id registered for dlsync (Device Flow enabled)",
      config.file ?? "environment"
    )
  }
  const result = yield* signIn({
    clientId: config.service.client_id.value,
    scopes: config.service.scopes,
    prompt: showPrompt
  }).pipe(Effect.provide(Layer.merge(serviceLayer(config), TokenStore.layer(config.mirror.state_dir))))
  yield* Console.log(`Signed in to ${result.account.name} <${result.account.email}> (account ${result.account.id}).`)
  yield* Console.log(`Tokens stored in ${result.path} (readable by this user only).`)
})

/** What the user needs to approve the sign-in elsewhere. */
export const promptText = (authorization: DeviceAuthorization): string =>
  [
    "To sign in, open this page on any device and approve the code:",
    "",
    `  ${authorization.verification_uri_complete}`,
    "",
    `  code: ${authorization.user_code}   (or enter it at ${authorization.verification_uri})`,
    "",
    `Waiting for approval (the code expires in ${Math.round(authorization.expires_in / 60)} minutes)…`
  ].join("\n")

const showPrompt = (authorization: DeviceAuthorization): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* Console.log(promptText(authorization))
    if (process.stdout.isTTY) yield* Console.log(`\n${renderQrCode(authorization.verification_uri_complete)}`)
  })
