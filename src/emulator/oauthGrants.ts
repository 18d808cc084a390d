/**
 * The OAuth server's grants and the tokens they hold: one grant per authorization (user,
 * client, scopes), with one live refresh token and the access tokens minted for it.
 *
 * Invariants:
 * - A refresh token works once: rotating it kills it and mints a new pair on the same grant.
 * - Revoking a grant kills every token it holds.
 * - Time is `now()` (ms since epoch) so tests advance a clock instead of sleeping.
 */
import { randomBytes } from "node:crypto"
import type { Principal } from "./http.ts"

export interface TokenPair {
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly access_token: string
  readonly refresh_token: string
  readonly scope: string
}

export interface Grant {
  readonly userId: string
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
}

export class OAuthGrants {
  readonly #now: () => number
  readonly #accessTokenLifetimeSeconds: number
  readonly #grants = new Map<string, StoredGrant>()
  readonly #accessTokens = new Map<string, AccessToken>()
  readonly #refreshTokens = new Map<string, string>()

  constructor(now: () => number, accessTokenLifetimeSeconds: number) {
    this.#now = now
    this.#accessTokenLifetimeSeconds = accessTokenLifetimeSeconds
  }

  /** Opens a new grant and mints its first token pair. */
  issue(userId: string, clientId: string, scopes: ReadonlyArray<string>): TokenPair {
    const grantId = randomToken("g")
    this.#grants.set(grantId, { userId, clientId, scopes: [...scopes] })
    return this.#mint(grantId)
  }

  /** The principal behind a live access token, or undefined (unknown, expired or revoked). */
  resolveAccessToken(token: string): Principal | undefined {
    const access = this.#accessTokens.get(token)
    if (access === undefined || access.expiresAt <= this.#now()) return undefined
    const grant = this.#grants.get(access.grantId)
    if (grant === undefined) return undefined
    return { kind: "oauth", userId: grant.userId, clientId: grant.clientId, scopes: new Set(grant.scopes) }
  }

  /** The grant a refresh token belongs to, or undefined (unknown, used or revoked). */
  ofRefreshToken(refreshToken: string): Grant | undefined {
    const grantId = this.#refreshTokens.get(refreshToken)
    return grantId === undefined ? undefined : this.#grants.get(grantId)
  }

  /**
   * Spends a live refresh token (one `ofRefreshToken` found): it dies, and its grant, now
   * with `scopes`, gets a new pair.
   */
  rotate(refreshToken: string, scopes: ReadonlyArray<string>): TokenPair {
    const grantId = this.#refreshTokens.get(refreshToken)!
    this.#refreshTokens.delete(refreshToken)
    this.#grants.get(grantId)!.scopes = scopes
    return this.#mint(grantId)
  }

  /** Revokes the grant behind an access or refresh token (both tokens die). */
  revoke(token: string): boolean {
    const grantId = this.#accessTokens.get(token)?.grantId ?? this.#refreshTokens.get(token)
    if (grantId === undefined || !this.#grants.has(grantId)) return false
    this.#drop(grantId)
    return true
  }

  /** Revokes every grant of a user (optionally only of one client); returns how many. */
  revokeAll(userId: string, clientId?: string): number {
    let n = 0
    for (const [id, grant] of this.#grants) {
      if (grant.userId === userId && (clientId === undefined || grant.clientId === clientId)) {
        this.#drop(id)
        n++
      }
    }
    return n
  }

  #mint(grantId: string): TokenPair {
    const grant = this.#grants.get(grantId)!
    const access = randomToken("at")
    const refresh = randomToken("rt")
    this.#accessTokens.set(access, { grantId, expiresAt: this.#now() + this.#accessTokenLifetimeSeconds * 1000 })
    this.#refreshTokens.set(refresh, grantId)
    return {
      token_type: "Bearer",
      expires_in: this.#accessTokenLifetimeSeconds,
      access_token: access,
      refresh_token: refresh,
      scope: grant.scopes.join(" ")
    }
  }

  #drop(grantId: string): void {
    this.#grants.delete(grantId)
    for (const [t, a] of this.#accessTokens) if (a.grantId === grantId) this.#accessTokens.delete(t)
    for (const [t, g] of this.#refreshTokens) if (g === grantId) this.#refreshTokens.delete(t)
  }
}

/** An opaque token: a prefix naming its kind and 24 random bytes. */
export const randomToken = (prefix: string): string => `${prefix}_${randomBytes(24).toString("base64url")}`

interface StoredGrant {
  readonly userId: string
  readonly clientId: string
  scopes: ReadonlyArray<string>
}

interface AccessToken {
  readonly grantId: string
  readonly expiresAt: number
}
