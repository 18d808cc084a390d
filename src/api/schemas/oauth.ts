/** OAuth shapes: server metadata, device authorization, token response, error object. */
import { Schema } from "effect"
import { SafeInt } from "./common.ts"

/** Known OAuth error codes; others pass as strings. */
export const OAUTH_ERRORS = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unsupported_grant_type",
  "authorization_pending",
  "slow_down",
  "access_denied",
  "expired_token"
] as const

/** Fields of the metadata document are not shown; RFC 8414 names are decoded when present. */
export const OAuthServerMetadata = Schema.StructWithRest(
  Schema.Struct({
    issuer: Schema.optionalKey(Schema.String),
    authorization_endpoint: Schema.optionalKey(Schema.String),
    token_endpoint: Schema.optionalKey(Schema.String),
    device_authorization_endpoint: Schema.optionalKey(Schema.String),
    grant_types_supported: Schema.optionalKey(Schema.Array(Schema.String)),
    scopes_supported: Schema.optionalKey(Schema.Array(Schema.String)),
    token_endpoint_auth_methods_supported: Schema.optionalKey(Schema.Array(Schema.String))
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type OAuthServerMetadata = typeof OAuthServerMetadata.Type

/** Answer of POST /oauth/device/authorize. */
export const DeviceAuthorization = Schema.Struct({
  device_code: Schema.String,
  /** Pattern `^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$`; shown to the user, so not re-checked. */
  user_code: Schema.String,
  verification_uri: Schema.String,
  verification_uri_complete: Schema.String,
  expires_in: SafeInt.check(Schema.isGreaterThan(0)),
  interval: SafeInt.check(Schema.isGreaterThan(0))
})
export type DeviceAuthorization = typeof DeviceAuthorization.Type

/** Answer of POST /oauth/token for every grant. */
export const TokenResponse = Schema.Struct({
  token_type: Schema.String,
  expires_in: SafeInt.check(Schema.isGreaterThan(0)),
  access_token: Schema.String.check(Schema.isNonEmpty()),
  refresh_token: Schema.String.check(Schema.isNonEmpty())
})
export type TokenResponse = typeof TokenResponse.Type

/** The OAuth error object: a string `error` with optional `message` and `hint`. */
export const OAuthErrorBody = Schema.Struct({
  error: Schema.String,
  message: Schema.optionalKey(Schema.String),
  hint: Schema.optionalKey(Schema.String),
  error_description: Schema.optionalKey(Schema.String)
})
export type OAuthErrorBody = typeof OAuthErrorBody.Type
