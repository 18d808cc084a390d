/**
 * OAuth endpoints at auth_url: discovery, device authorization and the token endpoint
 * (authorization code with PKCE, refresh, device code). Form-encoded requests, no bearer,
 * no `data` envelope; failures carry the OAuth error object (reason `OAuth`, e.g.
 * `authorization_pending`, `slow_down`, `invalid_grant`). Polling policy (interval,
 * slow_down) belongs to the device-flow caller, not here.
 *
 * Token requests are never replayed once sent: a refresh token is invalidated by its
 * first use and a device code issues tokens once.
 */
import { Effect, Redacted } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import { type ApiHttp, decodeBody } from "./ApiHttp.ts"
import { checkClientId, checkCodeVerifier, checkNonEmpty, firstProblem } from "./requestChecks.ts"
import { DeviceAuthorization, OAuthServerMetadata, TokenResponse } from "./schemas/oauth.ts"

export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"

export type TokenGrant =
  | {
      readonly grantType: "authorization_code"
      readonly code: Redacted.Redacted<string>
      readonly codeVerifier: Redacted.Redacted<string>
      readonly clientId?: string
      readonly clientSecret?: Redacted.Redacted<string>
      readonly redirectUri?: string
    }
  | {
      readonly grantType: "refresh_token"
      readonly refreshToken: Redacted.Redacted<string>
      readonly clientId?: string
      readonly clientSecret?: Redacted.Redacted<string>
      readonly scope?: string
    }
  | {
      readonly grantType: typeof DEVICE_CODE_GRANT
      readonly clientId: string
      readonly deviceCode: Redacted.Redacted<string>
    }

export interface OAuthApi {
  /** GET /.well-known/oauth-authorization-server */
  readonly discover: Effect.Effect<OAuthServerMetadata, ApiError>
  /** POST /oauth/device/authorize */
  authorizeDevice(clientId: string): Effect.Effect<DeviceAuthorization, ApiError>
  /** POST /oauth/token */
  token(grant: TokenGrant): Effect.Effect<TokenResponse, ApiError>
}

export const makeOAuthApi = (http: ApiHttp["Service"]): OAuthApi => ({
  discover: http
    .send({ method: "GET", root: "auth", path: "/.well-known/oauth-authorization-server", idempotency: "idempotent" })
    .pipe(Effect.flatMap(decodeBody(OAuthServerMetadata)), Effect.withSpan("OAuthApi.discover")),
  authorizeDevice: Effect.fn("OAuthApi.authorizeDevice")(function* (clientId) {
    yield* refuseIf("POST /oauth/device/authorize", checkClientId(clientId))
    const response = yield* http.send({
      method: "POST",
      root: "auth",
      path: "/oauth/device/authorize",
      body: { _tag: "Form", fields: [["client_id", clientId]] },
      idempotency: "unsafe"
    })
    return yield* decodeBody(DeviceAuthorization)(response)
  }),
  token: Effect.fn("OAuthApi.token")(function* (grant) {
    yield* refuseIf("POST /oauth/token", checkGrant(grant))
    const response = yield* http.send({
      method: "POST",
      root: "auth",
      path: "/oauth/token",
      body: { _tag: "Form", fields: grantFields(grant) },
      idempotency: "unsafe"
    })
    return yield* decodeBody(TokenResponse)(response)
  })
})

/** The form fields of a token request, in the spec's names. */
export const grantFields = (grant: TokenGrant): ReadonlyArray<readonly [string, string]> => {
  const fields: Array<readonly [string, string]> = [["grant_type", grant.grantType]]
  const add = (name: string, value: string | Redacted.Redacted<string> | undefined) => {
    if (value !== undefined) fields.push([name, typeof value === "string" ? value : Redacted.value(value)])
  }
  switch (grant.grantType) {
    case "authorization_code":
      add("code", grant.code)
      add("code_verifier", grant.codeVerifier)
      add("client_id", grant.clientId)
      add("client_secret", grant.clientSecret)
      add("redirect_uri", grant.redirectUri)
      break
    case "refresh_token":
      add("refresh_token", grant.refreshToken)
      add("client_id", grant.clientId)
      add("client_secret", grant.clientSecret)
      add("scope", grant.scope)
      break
    case DEVICE_CODE_GRANT:
      add("client_id", grant.clientId)
      add("device_code", grant.deviceCode)
      break
  }
  return fields
}

// ---------------------------------------------------------------------------------------

const checkGrant = (grant: TokenGrant) => {
  const clientId = grant.clientId === undefined ? undefined : checkClientId(grant.clientId)
  switch (grant.grantType) {
    case "authorization_code":
      return firstProblem(
        checkNonEmpty("code", Redacted.value(grant.code)),
        checkCodeVerifier(Redacted.value(grant.codeVerifier)),
        clientId,
        grant.redirectUri !== undefined && !URL.canParse(grant.redirectUri)
          ? { field: "redirect_uri", message: "must be an absolute URI" }
          : undefined
      )
    case "refresh_token":
      return firstProblem(checkNonEmpty("refresh_token", Redacted.value(grant.refreshToken)), clientId)
    case DEVICE_CODE_GRANT:
      return firstProblem(clientId, checkNonEmpty("device_code", Redacted.value(grant.deviceCode)))
  }
}
