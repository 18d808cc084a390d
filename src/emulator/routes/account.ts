/**
 * GET /account, GET /services (ETag per variant, If-None-Match → 304, private max-age=60),
 * POST /cache/check (read-only: no credit, no download, nothing reserved).
 */
import { createHash } from "node:crypto"
import { formatMicros } from "../clock.ts"
import type { EmulatorContext } from "../context.ts"
import { ok, type Route, type RouteRequest, type RouteResult, readJsonObject, validationFailed } from "../http.ts"
import { noneMatch } from "../range.ts"
import { PATTERN_VERSION, SERVICES } from "../services.ts"
import { callerOf } from "./common.ts"

/** Most hashes one cache check accepts. */
export const MAX_CACHE_HASHES = 100

export const accountRoutes = (context: EmulatorContext): ReadonlyArray<Route> => [
  {
    method: "GET",
    path: "/api/v1/account",
    auth: { kind: "bearer", apiKey: true, oauthScopes: ["user:read"] },
    handle: (request) => getAccount(context, request)
  },
  {
    method: "GET",
    path: "/api/v1/services",
    auth: { kind: "bearer", apiKey: true, oauthScopes: ["downloads:read"] },
    handle: (request) => listServices(request)
  },
  {
    method: "POST",
    path: "/api/v1/cache/check",
    auth: { kind: "bearer", apiKey: true, oauthScopes: [] },
    handle: (request) => checkCache(context, request)
  }
]

const getAccount = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const user = callerOf(context, request)
  const { account } = user
  return ok({
    id: user.id,
    name: account.name,
    email: account.email,
    email_verified: account.emailVerified,
    created_at: formatMicros(account.createdAt),
    plan: account.plan,
    credits: { remaining: account.creditsRemaining },
    limits: account.limits
  })
}

const listServices = (request: RouteRequest): RouteResult => {
  const include = request.url.searchParams.get("include")
  const parts = include === null || include === "" ? [] : include.split(",").map((part) => part.trim())
  const unknown = parts.filter((part) => part !== "url_patterns")
  if (unknown.length > 0)
    return validationFailed({ include: [`unknown value ${unknown.join(", ")}; allowed: url_patterns`] })
  const withPatterns = parts.includes("url_patterns")
  const body = withPatterns
    ? { data: SERVICES, meta: { pattern_version: PATTERN_VERSION } }
    : { data: SERVICES.map(({ url_patterns: _, ...rest }) => rest) }
  const etag = `"${createHash("sha256").update(JSON.stringify(body)).digest("base64url").slice(0, 27)}"`
  const headers = { ETag: etag, "Cache-Control": "private, max-age=60", Vary: "Authorization" }
  if (noneMatch(request.headers["if-none-match"], etag)) return { kind: "empty", status: 304, headers }
  return { kind: "json", status: 200, body, headers }
}

const checkCache = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const body = readJsonObject(request)
  if (!body.ok) return body.error
  const hashes = body.value.hashes
  const messages: Array<string> = []
  if (!Array.isArray(hashes)) messages.push("must be an array of info hashes")
  else {
    if (hashes.length === 0) messages.push("must not be empty")
    if (hashes.length > MAX_CACHE_HASHES) messages.push(`must hold at most ${MAX_CACHE_HASHES} hashes`)
    if (!hashes.every((hash) => typeof hash === "string" && INFO_HASH.test(hash))) {
      messages.push("every hash must be 40 hexadecimal or 32 base32 characters")
    } else if (new Set(hashes.map((hash: string) => hash.toLowerCase())).size !== hashes.length) {
      messages.push("must not repeat a hash")
    }
  }
  if (messages.length > 0 || !Array.isArray(hashes)) return validationFailed({ hashes: messages })
  return ok(hashes.map((hash: string) => ({ hash, cached: context.state.cachedHashes.has(hash.toLowerCase()) })))
}

const INFO_HASH = /^([a-fA-F0-9]{40}|[a-zA-Z2-7]{32})$/
