/**
 * The one door to the network for the API client: it builds each request, adds the
 * headers the spec asks for, sends it, follows what may be followed, retries what may be
 * retried, and turns every outcome into either a response or an `ApiError`.
 *
 *   request ─► validate X-Request-ID ─► bearer (API origins only) ─► send ─┬─► 2xx/304 ─► ApiResponse
 *                  ▲                                                        ├─► 3xx (GET) ─► next hop
 *                  │                     401 + fresh credential (once) ◄────┤
 *                  └──────── retryPolicy (429, 408, 425, 5xx, transport) ◄──┴─► ApiError
 *                  │                                                        │
 *   rate gate (per group) ◄──────────── 429 + Retry-After closes it ◄───────┘
 *
 * Contracts:
 * - Under base_url every request sends `Accept: application/json`, `Authorization: Bearer …`
 *   and an `X-Request-ID` (the caller's, checked, or a generated one; the same on every
 *   attempt of one call). OAuth endpoints (auth_url) get no bearer.
 * - The bearer is attached per hop and only when the hop's origin is base_url's or
 *   auth_url's origin. Redirects are followed by hand, for GET only, so a redirect to a
 *   CDN, a webhook host or any other origin never receives it.
 * - Debug logs carry method, path (never the query), status and request id; never the
 *   bearer.
 * - Every attempt first passes its rate-limit group's gate (rateGate.ts): after a 429, no
 *   request of that group is sent until Retry-After has passed, whoever sends it, and the
 *   pace then comes back gradually. A wait longer than the schedule's `maxInlineWaitMs` is
 *   not waited: the call fails at once with RateLimited and the time left, unsent.
 *
 * Here: the exchange (headers, bearer, redirects) and the attempts (gate, refresh, retry).
 * The request and its building are apiRequest.ts, a failed attempt as an error
 * attemptFailure.ts (and classifyFailure.ts), the gates rateGates.ts, and the decoding of
 * a response body decodeBody.ts.
 */

import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { retrying } from "../pacing/retry.ts"
import { ApiEndpoints } from "./ApiEndpoints.ts"
import { ApiError, Unexpected } from "./ApiError.ts"
import { ApiTransport } from "./ApiTransport.ts"
import {
  type ApiRequest,
  type ApiResponse,
  checkRequestId,
  encodeBody,
  generateRequestId,
  lowerKeys
} from "./apiRequest.ts"
import { answeredStatus, fromWireFailure } from "./attemptFailure.ts"
import { Credentials } from "./Credentials.ts"
import { classifyFailure } from "./classifyFailure.ts"
import { makeRateGates } from "./rateGates.ts"
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule, retryDelay } from "./retryPolicy.ts"

export {
  type ApiRequest,
  type ApiResponse,
  header,
  REQUEST_ID_PATTERN,
  type RequestBody,
  segment
} from "./apiRequest.ts"
export { decodeBody } from "./decodeBody.ts"

/** Longest one exchange (connect, headers and whole body) may take before it counts as a transport failure. */
export const REQUEST_TIMEOUT_MS = 60_000
/** Redirect hops followed for one GET. */
export const MAX_REDIRECTS = 5
/** Largest response body read (a full page of records with stream detail is well under 1 MiB). */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024

export interface HttpSettings {
  readonly schedule: RetrySchedule
  readonly timeoutMs: number
  readonly maxResponseBytes: number
}

/** Tunables of the HTTP layer; tests shrink them. */
export const ApiHttpSettings = Context.Reference<HttpSettings>("dlsync/api/ApiHttpSettings", {
  defaultValue: () => ({
    schedule: DEFAULT_RETRY_SCHEDULE,
    timeoutMs: REQUEST_TIMEOUT_MS,
    maxResponseBytes: MAX_RESPONSE_BYTES
  })
})

/**
 * Sees each attempt's outcome and each retry, for the daemon's metrics. `operation` is the
 * route template ("GET /files/{file}"), never a concrete path, so labels stay bounded.
 * Required by the client: the daemon's is its metrics; every other command says it has none
 * (`ApiObserver.none`). Read when the layer is built.
 */
export interface ApiObserverShape {
  /** One attempt answered with `status`, or "network" when no response came. */
  readonly request: (operation: string, status: number | "network") => Effect.Effect<void>
  /** One retry (an attempt after the first) is about to be made. */
  readonly retry: (operation: string) => Effect.Effect<void>
  /** One attempt waited `millis` at its rate-limit gate (after a 429 of its group) before it was sent. */
  readonly rateLimitWait: (operation: string, millis: number) => Effect.Effect<void>
}

export class ApiObserver extends Context.Service<ApiObserver, ApiObserverShape>()("dlsync/api/ApiObserver") {
  /** No one counts the requests (every command but the daemon, which has metrics). */
  static readonly none: Layer.Layer<ApiObserver> = Layer.succeed(
    ApiObserver,
    ApiObserver.of({ request: () => Effect.void, retry: () => Effect.void, rateLimitWait: () => Effect.void })
  )
}

export class ApiHttp extends Context.Service<
  ApiHttp,
  {
    /** Sends a request; succeeds with any 2xx or 304 answer, fails with a classified ApiError. */
    send(request: ApiRequest): Effect.Effect<ApiResponse, ApiError>
  }
>()("dlsync/api/ApiHttp") {
  /** Needs an ApiTransport (see `layerLive` for node:http), the endpoints and the credentials. */
  static readonly layer = Layer.effect(
    ApiHttp,
    Effect.gen(function* () {
      const transport = yield* ApiTransport
      const endpoints = yield* ApiEndpoints
      const credentials = yield* Credentials
      const observer = yield* ApiObserver
      const apiOrigins = new Set([new URL(endpoints.baseUrl).origin, new URL(endpoints.authUrl).origin])
      const gates = makeRateGates()

      /** One exchange with one URL, redirects followed by hand for GET. */
      const exchange = Effect.fnUntraced(function* (
        request: ApiRequest,
        operation: string,
        requestId: string,
        bearer: Redacted.Redacted<string> | undefined,
        settings: HttpSettings
      ): Effect.fn.Return<ApiResponse, ApiError> {
        const root = request.root === "api" ? endpoints.baseUrl : endpoints.authUrl
        const body = yield* encodeBody(request.body, operation)
        let url = new URL(root + request.path)
        for (const [k, v] of request.query ?? []) url.searchParams.append(k, v)
        for (let hop = 0; ; hop++) {
          // Caller headers first: they can never replace the request id or smuggle a credential.
          const headers: Record<string, string> = {
            ...lowerKeys(request.headers ?? {}),
            accept: "application/json",
            "x-request-id": requestId
          }
          delete headers.authorization
          if (bearer !== undefined && apiOrigins.has(url.origin)) {
            headers.authorization = `Bearer ${Redacted.value(bearer)}`
          }
          if (body !== undefined) headers["content-type"] = body.contentType
          const started = yield* Clock.currentTimeMillis
          const response = yield* transport
            .exchange({
              method: request.method,
              url,
              headers,
              body: body?.bytes,
              timeoutMs: settings.timeoutMs,
              maxBytes: settings.maxResponseBytes
            })
            .pipe(Effect.mapError((failure) => fromWireFailure(failure, operation, settings, requestId)))
          const status = response.status
          const responseHeaders = response.headers
          const answeredId = responseHeaders["x-request-id"] ?? requestId
          yield* Effect.logDebug("api exchange").pipe(
            Effect.annotateLogs({
              method: request.method,
              path: url.pathname,
              status,
              requestId: answeredId,
              millis: (yield* Clock.currentTimeMillis) - started
            })
          )
          const location = responseHeaders.location
          if (status >= 300 && status < 400 && status !== 304) {
            const next = location !== undefined && URL.canParse(location, url.href) ? new URL(location, url) : undefined
            const followable =
              request.method === "GET" &&
              next !== undefined &&
              (next.protocol === "https:" || next.protocol === "http:") &&
              hop < MAX_REDIRECTS
            if (followable) {
              url = next
              continue
            }
            return yield* new ApiError({
              operation,
              reason: new Unexpected({
                status,
                message:
                  next === undefined
                    ? `redirect without a usable Location`
                    : `redirect to ${next.origin}${next.pathname} not followed`,
                requestId: answeredId
              })
            })
          }
          const result: ApiResponse = {
            operation,
            status,
            headers: responseHeaders,
            text: response.text,
            requestId: answeredId
          }
          if ((status >= 200 && status < 300) || status === 304) return result
          return yield* new ApiError({
            operation,
            reason: classifyFailure({
              status,
              body: parseJsonOrUndefined(response.text),
              requestId: answeredId,
              retryAfter: responseHeaders["retry-after"],
              wwwAuthenticate: responseHeaders["www-authenticate"],
              target: request.root,
              sentCursor: (request.query ?? []).some(([k]) => k === "cursor"),
              nowMs: yield* Clock.currentTimeMillis
            })
          })
        }
      })

      const send = Effect.fn("ApiHttp.send")(function* (request: ApiRequest): Effect.fn.Return<ApiResponse, ApiError> {
        const operation = `${request.method} ${request.template ?? request.path}`
        const settings = yield* ApiHttpSettings
        const requestId =
          request.requestId === undefined ? generateRequestId() : yield* checkRequestId(request.requestId, operation)
        let refreshed = false
        /** One attempt; a 401 answered with a credential that refreshed is sent once more within it. */
        const attempt: Effect.Effect<ApiResponse, ApiError> = Effect.gen(function* () {
          const waited = yield* gates.pass(operation, settings.schedule.maxInlineWaitMs)
          if (waited > 0) yield* observer.rateLimitWait(operation, waited)
          const bearer = request.root === "api" ? yield* credentials.bearer : undefined
          const outcome = yield* Effect.result(exchange(request, operation, requestId, bearer, settings))
          const answered = outcome._tag === "Success" ? outcome.success.status : answeredStatus(outcome.failure)
          if (answered !== undefined) yield* observer.request(operation, answered)
          if (outcome._tag === "Success") return outcome.success
          const error = outcome.failure
          if (error.reason._tag === "RateLimited") yield* gates.close(operation, error.reason.retryAfterMillis)
          if (error.reason._tag === "Unauthorized" && bearer !== undefined && !refreshed) {
            refreshed = true
            if (yield* credentials.refreshAfterUnauthorized(bearer)) return yield* attempt
          }
          return yield* error
        })
        return yield* retrying(
          attempt,
          (error, attempts, random) =>
            retryDelay({
              failure: error.reason,
              idempotency: request.idempotency,
              attempts,
              random,
              schedule: settings.schedule
            }),
          (error, attempts, delay) =>
            Effect.andThen(
              observer.retry(operation),
              Effect.logDebug("api retry").pipe(
                Effect.annotateLogs({ operation, attempt: attempts, reason: error.reason._tag, delayMillis: delay })
              )
            )
        )
      })

      return ApiHttp.of({ send })
    })
  )

  /** The production graph: node:http underneath. */
  static readonly layerLive = ApiHttp.layer.pipe(Layer.provide(ApiTransport.layerNodeHttp))
}

const parseJsonOrUndefined = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}
