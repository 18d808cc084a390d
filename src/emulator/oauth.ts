/**
 * The emulator's OAuth authorization server: clients, device authorization, authorization
 * codes with PKCE, the token endpoint's three grants, and access-token resolution for the
 * API routes.
 *
 * Invariants:
 * - A refresh token works once: using it kills it and returns a replacement (rotation,
 *   oauthGrants.ts).
 * - A device code issues tokens once; an authorization code is exchanged once.
 * - The device polling interval starts at 5 s, grows by 5 s on each `slow_down` and never
 *   shrinks; "too fast" is measured from the previous poll (the first poll is never too fast).
 * - Token responses and errors carry `Cache-Control: no-store` and `Pragma: no-cache`;
 *   every 401 carries `WWW-Authenticate`.
 * - Time is `now()` (ms since epoch) so tests advance a clock instead of sleeping.
 */
import { createHash, randomInt } from "node:crypto"
import type { Principal, RouteResult } from "./http.ts"
import { DEVICE_CLIENT_ID, defaultClients, type OAuthClient } from "./oauthClients.ts"
import { OAuthGrants, randomToken, type TokenPair } from "./oauthGrants.ts"
import { RateLimiter } from "./oauthRateLimiter.ts"
import { challenge, invalidClient, tokenError, tokenOk } from "./oauthResponses.ts"
import { type AccessTokens, ALL_SCOPES } from "./state.ts"

export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
export const DEVICE_CODE_LIFETIME_SECONDS = 600
export const DEVICE_INTERVAL_SECONDS = 5
export const DEVICE_AUTHORIZE_PER_MINUTE = 30
export const AUTHORIZATION_CODE_LIFETIME_SECONDS = 600
export const USER_CODE_PATTERN = /^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$/
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/

export interface OAuthOptions {
  /** The service's `{auth_url}` (no trailing slash); a function because the port is bound late. */
  readonly authUrl: () => string
  readonly now: () => number
  /** The user who approves browser authorizations. */
  readonly defaultUserId: string
  /** Id of the public Device Flow client (the one `dlsync emulator` prints); default DEVICE_CLIENT_ID. */
  readonly deviceClientId?: string
  /** Access-token lifetime; default one hour. */
  readonly accessTokenLifetimeSeconds?: number
}

/** The OAuth server's state; every method is synchronous and deterministic given `now`. */
export class OAuthServer implements AccessTokens {
  readonly clients: ReadonlyMap<string, OAuthClient>
  readonly #options: OAuthOptions
  readonly #grants: OAuthGrants
  readonly #deviceCodes = new Map<string, DeviceCode>()
  readonly #userCodes = new Map<string, string>()
  readonly #authorizationCodes = new Map<string, AuthorizationCode>()
  readonly #deviceRate = new RateLimiter(DEVICE_AUTHORIZE_PER_MINUTE, 60_000)

  constructor(options: OAuthOptions) {
    this.#options = options
    this.#grants = new OAuthGrants(options.now, options.accessTokenLifetimeSeconds ?? 3600)
    this.clients = new Map(defaultClients(options.deviceClientId ?? DEVICE_CLIENT_ID).map((c) => [c.id, c]))
  }

  /** RFC 8414 metadata served at `/.well-known/oauth-authorization-server`. */
  metadata(): Record<string, unknown> {
    const base = this.#options.authUrl()
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      device_authorization_endpoint: `${base}/oauth/device/authorize`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token", DEVICE_GRANT],
      scopes_supported: ALL_SCOPES,
      token_endpoint_auth_methods_supported: ["none", "client_secret_post"],
      code_challenge_methods_supported: ["S256"]
    }
  }

  /** POST /oauth/device/authorize. */
  deviceAuthorize(form: URLSearchParams): RouteResult {
    const now = this.#options.now()
    const clientId = form.get("client_id") ?? ""
    const retryAfter = this.#deviceRate.hit(clientId, now)
    if (retryAfter !== undefined) {
      return tokenError(429, "slow_down", { message: "Too many device authorization requests" }, retryAfter)
    }
    if (!UUID_PATTERN.test(clientId)) return tokenError(400, "invalid_request", { message: "client_id must be a UUID" })
    const client = this.clients.get(clientId)
    if (client === undefined || client.disabled || !client.deviceFlow || client.secret !== undefined) {
      return invalidClient("Client not found, disabled, or not permitted for Device Flow")
    }
    const scopes = parseScopes(form.get("scope"))
    if (scopes === undefined) return tokenError(400, "invalid_request", { message: "Unknown scope" })
    const deviceCode = randomToken("dc")
    const userCode = this.#newUserCode()
    this.#deviceCodes.set(deviceCode, {
      clientId,
      userCode,
      scopes,
      expiresAt: now + DEVICE_CODE_LIFETIME_SECONDS * 1000,
      intervalSeconds: DEVICE_INTERVAL_SECONDS,
      lastPollAt: undefined,
      status: { kind: "pending" }
    })
    this.#userCodes.set(userCode, deviceCode)
    const verificationUri = `${this.#options.authUrl()}/device`
    return tokenOk({
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
      expires_in: DEVICE_CODE_LIFETIME_SECONDS,
      interval: DEVICE_INTERVAL_SECONDS
    })
  }

  /**
   * GET /oauth/authorize: the emulator's user consents at once. Errors before the client and
   * redirect URI are trusted are answered directly (400/401); later ones go back to the
   * redirect URI as `error=…`, as RFC 6749 §4.1.2.1 says.
   */
  authorize(query: URLSearchParams): RouteResult {
    const client = this.clients.get(query.get("client_id") ?? "")
    if (client === undefined || client.disabled) return invalidClient("Unknown or disabled client")
    const redirectUri = query.get("redirect_uri") ?? ""
    if (!client.redirectUris.includes(redirectUri)) {
      return tokenError(400, "invalid_request", { message: "redirect_uri must equal a registered value exactly" })
    }
    const state = query.get("state")
    const back = (params: Record<string, string>): RouteResult => {
      const target = new URL(redirectUri)
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v)
      if (state !== null) target.searchParams.set("state", state)
      return { kind: "empty", status: 302, headers: { location: target.toString(), "cache-control": "no-store" } }
    }
    if (query.get("response_type") !== "code") {
      return back({ error: "unsupported_response_type", error_description: "response_type must be code" })
    }
    const challenge = query.get("code_challenge") ?? ""
    if (query.get("code_challenge_method") !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
      return back({ error: "invalid_request", error_description: "PKCE with code_challenge_method=S256 is required" })
    }
    const scopes = parseScopes(query.get("scope"))
    if (scopes === undefined) return back({ error: "invalid_scope", error_description: "Unknown scope" })
    const code = randomToken("ac")
    this.#authorizationCodes.set(code, {
      clientId: client.id,
      userId: this.#options.defaultUserId,
      redirectUri,
      challenge,
      scopes,
      expiresAt: this.#options.now() + AUTHORIZATION_CODE_LIFETIME_SECONDS * 1000,
      used: false
    })
    return back({ code })
  }

  /** POST /oauth/token. */
  token(form: URLSearchParams): RouteResult {
    const grantType = form.get("grant_type")
    switch (grantType) {
      case null:
      case "":
        return tokenError(400, "invalid_request", { message: "grant_type is required" })
      case "authorization_code":
        return this.#authorizationCodeGrant(form)
      case "refresh_token":
        return this.#refreshGrant(form)
      case DEVICE_GRANT:
        return this.#deviceGrant(form)
      default:
        return tokenError(400, "unsupported_grant_type", {
          message: `Unsupported grant_type ${grantType}`,
          hint: `Use one of: authorization_code, refresh_token, ${DEVICE_GRANT}`
        })
    }
  }

  /** The principal behind a live access token, or undefined (unknown, expired or revoked). */
  resolveAccessToken(token: string): Principal | undefined {
    return this.#grants.resolveAccessToken(token)
  }

  /** Issues a fresh grant with a token pair directly (the emulator's `--json` ready pair). */
  issueTokens(userId: string, clientId: string, scopes: ReadonlyArray<string>): TokenPair {
    return this.#grants.issue(userId, clientId, scopes)
  }

  /** `AccessTokens.issue`: the same as `issueTokens`, in the shape the server's `--json` output takes. */
  issue(
    userId: string,
    clientId: string,
    scopes: ReadonlyArray<string>
  ): { readonly accessToken: string; readonly refreshToken: string } {
    const pair = this.issueTokens(userId, clientId, scopes)
    return { accessToken: pair.access_token, refreshToken: pair.refresh_token }
  }

  /** Control: the user approves a device code. False when the user code is unknown or no longer pending. */
  approveDevice(userCode: string, userId: string = this.#options.defaultUserId): boolean {
    return this.#decide(userCode, { kind: "approved", userId })
  }

  /** Control: the user refuses a device code. */
  denyDevice(userCode: string): boolean {
    return this.#decide(userCode, { kind: "denied" })
  }

  /** Control: revokes the grant behind an access or refresh token (both tokens die). */
  revoke(token: string): boolean {
    return this.#grants.revoke(token)
  }

  /** Control: revokes every grant of a user (optionally only of one client); returns how many. */
  revokeAll(userId: string, clientId?: string): number {
    return this.#grants.revokeAll(userId, clientId)
  }

  #decide(userCode: string, status: DeviceStatus): boolean {
    const deviceCode = this.#userCodes.get(userCode.trim().toUpperCase())
    const device = deviceCode === undefined ? undefined : this.#deviceCodes.get(deviceCode)
    if (device === undefined || device.status.kind !== "pending" || device.expiresAt <= this.#options.now()) {
      return false
    }
    device.status = status
    return true
  }

  #deviceGrant(form: URLSearchParams): RouteResult {
    const clientId = form.get("client_id")
    const deviceCode = form.get("device_code")
    if (!clientId || !deviceCode) {
      return tokenError(400, "invalid_request", { message: "client_id and device_code are required" })
    }
    const client = this.clients.get(clientId)
    if (client === undefined || client.disabled || !client.deviceFlow) {
      return invalidClient("Client not found, disabled, or not permitted for Device Flow")
    }
    const device = this.#deviceCodes.get(deviceCode)
    if (device === undefined || device.clientId !== clientId) {
      return tokenError(400, "invalid_grant", { message: "Unknown device_code" })
    }
    if (device.status.kind === "issued") {
      return tokenError(400, "invalid_grant", { message: "This device code has already issued tokens" })
    }
    const now = this.#options.now()
    if (now >= device.expiresAt) return tokenError(400, "expired_token", { message: "The device code has expired" })
    const tooFast = device.lastPollAt !== undefined && now - device.lastPollAt < device.intervalSeconds * 1000
    device.lastPollAt = now
    if (tooFast) {
      device.intervalSeconds += 5
      return tokenError(400, "slow_down", { message: `Poll at most every ${device.intervalSeconds} seconds` })
    }
    switch (device.status.kind) {
      case "pending":
        return tokenError(400, "authorization_pending", { message: "Waiting for the user" })
      case "denied":
        return tokenError(400, "access_denied", { message: "The user refused the request" })
      case "approved": {
        const pair = this.issueTokens(device.status.userId, clientId, device.scopes)
        device.status = { kind: "issued" }
        return tokenOk(pair)
      }
    }
  }

  #authorizationCodeGrant(form: URLSearchParams): RouteResult {
    const code = form.get("code")
    const verifier = form.get("code_verifier")
    if (!code || verifier === null) {
      return tokenError(400, "invalid_request", { message: "code and code_verifier are required" })
    }
    if (!CODE_VERIFIER_PATTERN.test(verifier)) {
      return tokenError(400, "invalid_request", { message: "code_verifier must match ^[A-Za-z0-9._~-]{43,128}$" })
    }
    const entry = this.#authorizationCodes.get(code)
    const clientId = form.get("client_id") ?? entry?.clientId
    if (clientId === undefined) return tokenError(400, "invalid_grant", { message: "Unknown authorization code" })
    const client = this.#authenticate(clientId, form.get("client_secret"))
    if (typeof client === "string") return invalidClient(client)
    if (entry === undefined || entry.used || entry.expiresAt <= this.#options.now()) {
      return tokenError(400, "invalid_grant", { message: "Unknown, used or expired authorization code" })
    }
    if (entry.clientId !== client.id) {
      return tokenError(400, "invalid_grant", { message: "The code was issued to another client" })
    }
    if (form.get("redirect_uri") !== entry.redirectUri) {
      return tokenError(400, "invalid_grant", { message: "redirect_uri differs from the authorization request" })
    }
    if (createHash("sha256").update(verifier).digest("base64url") !== entry.challenge) {
      return tokenError(400, "invalid_grant", { message: "code_verifier does not match code_challenge" })
    }
    entry.used = true
    return tokenOk(this.issueTokens(entry.userId, client.id, entry.scopes))
  }

  #refreshGrant(form: URLSearchParams): RouteResult {
    const refreshToken = form.get("refresh_token")
    if (!refreshToken) return tokenError(400, "invalid_request", { message: "refresh_token is required" })
    const grant = this.#grants.ofRefreshToken(refreshToken)
    const clientId = form.get("client_id") ?? grant?.clientId
    if (clientId === undefined) {
      return tokenError(400, "invalid_grant", { message: "Unknown, used or revoked refresh token" })
    }
    const client = this.#authenticate(clientId, form.get("client_secret"))
    if (typeof client === "string") return invalidClient(client)
    if (grant === undefined) {
      return tokenError(400, "invalid_grant", { message: "Unknown, used or revoked refresh token" })
    }
    if (grant.clientId !== client.id) {
      return tokenError(
        401,
        "invalid_request",
        { message: "The refresh token does not belong to this client" },
        undefined,
        challenge("invalid_request")
      )
    }
    const requested = form.get("scope")
    let scopes = grant.scopes
    if (requested !== null) {
      const narrowed = parseScopes(requested)
      if (narrowed === undefined || narrowed.some((s) => !grant.scopes.includes(s))) {
        return tokenError(400, "invalid_request", { message: "scope must be a subset of the original grant" })
      }
      scopes = narrowed
    }
    return tokenOk(this.#grants.rotate(refreshToken, scopes))
  }

  /** The authenticated client, or the reason it is not (→ 401 invalid_client). */
  #authenticate(clientId: string, secret: string | null): OAuthClient | string {
    const client = this.clients.get(clientId)
    if (client === undefined || client.disabled) return "Unknown or disabled client"
    if (client.secret === undefined) return secret === null ? client : "Public clients have no client_secret"
    return secret === client.secret ? client : "client_secret missing or wrong"
  }

  #newUserCode(): string {
    for (;;) {
      const chars = Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)])
      const code = `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`
      if (!this.#userCodes.has(code)) return code
    }
  }
}

type DeviceStatus =
  | { readonly kind: "pending" }
  | { readonly kind: "approved"; readonly userId: string }
  | { readonly kind: "denied" }
  | { readonly kind: "issued" }

interface DeviceCode {
  readonly clientId: string
  readonly userCode: string
  readonly scopes: ReadonlyArray<string>
  readonly expiresAt: number
  intervalSeconds: number
  lastPollAt: number | undefined
  status: DeviceStatus
}

interface AuthorizationCode {
  readonly clientId: string
  readonly userId: string
  readonly redirectUri: string
  readonly challenge: string
  readonly scopes: ReadonlyArray<string>
  readonly expiresAt: number
  used: boolean
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const USER_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

/** Space-separated scopes; absent or empty means every scope; undefined when one is unknown. */
const parseScopes = (raw: string | null): ReadonlyArray<string> | undefined => {
  const scopes = (raw ?? "").split(" ").filter((s) => s !== "")
  if (scopes.length === 0) return ALL_SCOPES
  return scopes.every((s) => KNOWN_SCOPES.has(s)) ? [...new Set(scopes)] : undefined
}

const KNOWN_SCOPES: ReadonlySet<string> = new Set(ALL_SCOPES)
