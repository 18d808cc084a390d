/**
 * Supported source services (GET /services), cached as the service asks: the body and its
 * ETag are kept separately for the list with and without `url_patterns`; within the
 * Cache-Control max-age (60 s privately) the cached body is served without a request,
 * after it the request carries If-None-Match and a 304 serves the cached body again.
 * `no-store` answers are not kept.
 */
import { Clock, Effect } from "effect"
import { ApiError, Protocol } from "./ApiError.ts"
import { type ApiHttp, decodeBody, header } from "./ApiHttp.ts"
import { ServiceList } from "./schemas/services.ts"

export interface ServicesApi {
  /** The list; with `urlPatterns`, each entry carries its `url_patterns` and meta its `pattern_version`. */
  list(options?: { readonly urlPatterns?: boolean }): Effect.Effect<ServiceList, ApiError>
}

/** Freshness of a response from its Cache-Control: seconds of max-age, 0 for no-cache, undefined for no-store. */
export const freshnessSeconds = (cacheControl: string | undefined): number | undefined => {
  if (cacheControl === undefined) return 0
  const directives = cacheControl
    .toLowerCase()
    .split(",")
    .map((d) => d.trim())
  if (directives.includes("no-store")) return undefined
  if (directives.includes("no-cache")) return 0
  const maxAge = directives.find((d) => d.startsWith("max-age="))?.slice("max-age=".length)
  return maxAge !== undefined && /^\d+$/.test(maxAge) ? Number(maxAge) : 0
}

export const makeServicesApi = (http: ApiHttp["Service"]): ServicesApi => {
  const cache = new Map<
    boolean,
    { readonly body: ServiceList; readonly etag: string | undefined; freshUntilMs: number }
  >()
  return {
    list: Effect.fn("ServicesApi.list")(function* (options = {}) {
      const withPatterns = options.urlPatterns === true
      const cached = cache.get(withPatterns)
      const now = yield* Clock.currentTimeMillis
      if (cached !== undefined && now < cached.freshUntilMs) return cached.body
      const response = yield* http.send({
        method: "GET",
        root: "api",
        path: "/services",
        query: withPatterns ? [["include", "url_patterns"]] : [],
        headers: cached?.etag !== undefined ? { "if-none-match": cached.etag } : {},
        idempotency: "idempotent"
      })
      const fresh = freshnessSeconds(header(response, "cache-control"))
      if (response.status === 304) {
        if (cached === undefined) {
          return yield* new ApiError({
            operation: response.operation,
            reason: new Protocol({
              status: 304,
              message: "304 Not Modified without a cached body to reuse",
              requestId: response.requestId
            })
          })
        }
        if (fresh === undefined) cache.delete(withPatterns)
        else cached.freshUntilMs = now + fresh * 1000
        return cached.body
      }
      const body = yield* decodeBody(ServiceList)(response)
      if (fresh === undefined) cache.delete(withPatterns)
      else cache.set(withPatterns, { body, etag: header(response, "etag"), freshUntilMs: now + fresh * 1000 })
      return body
    })
  }
}
