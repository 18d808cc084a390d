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
 */

import { Clock, Context, Duration, Effect, Layer, Random, Redacted, Schema, SchemaIssue } from "effect"
import { ApiEndpoints } from "./ApiEndpoints.ts"
import {
  ApiError,
  type ApiErrorReason,
  ClientValidation,
  Protocol,
  RateLimited,
  Transport,
  Unexpected
} from "./ApiError.ts"
import { ApiTransport, type WireFailure } from "./ApiTransport.ts"
import { Credentials } from "./Credentials.ts"
import { classifyFailure } from "./classifyFailure.ts"
import { errorCodes, provablyNeverSent } from "./neverSent.ts"
import { admit, closeGate, type RateGate, rateLimitGroup } from "./rateGate.ts"
import { DEFAULT_RETRY_SCHEDULE, type Idempotency, type RetrySchedule, retryDelay } from "./retryPolicy.ts"

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
 * The default does nothing: the client depends on no observer. Read when the layer is built.
 */
export interface ApiObserverShape {
  /** One attempt answered with `status`, or "network" when no response came. */
  readonly request: (operation: string, status: number | "network") => Effect.Effect<void>
  /** One retry (an attempt after the first) is about to be made. */
  readonly retry: (operation: string) => Effect.Effect<void>
  /** One attempt waited `millis` at its rate-limit gate (after a 429 of its group) before it was sent. */
  readonly rateLimitWait: (operation: string, millis: number) => Effect.Effect<void>
}

export const ApiObserver = Context.Reference<ApiObserverShape>("dlsync/api/ApiObserver", {
  defaultValue: () => ({ request: () => Effect.void, retry: () => Effect.void, rateLimitWait: () => Effect.void })
})

export type RequestBody =
  | { readonly _tag: "Json"; readonly value: unknown }
  | { readonly _tag: "Form"; readonly fields: ReadonlyArray<readonly [string, string]> }
  | { readonly _tag: "Multipart"; readonly form: FormData }

export interface ApiRequest {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  /** `api`: under base_url, with the bearer. `auth`: under auth_url, without it. */
  readonly root: "api" | "auth"
  /** Relative to the root, starting with "/"; dynamic segments already encoded (see `segment`). */
  readonly path: string
  /** Path with placeholders for errors and logs, e.g. `/files/{file}`. Defaults to `path`. */
  readonly template?: string
  readonly query?: ReadonlyArray<readonly [string, string]>
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: RequestBody
  readonly idempotency: Idempotency
  /** A caller-chosen X-Request-ID (1..100 visible ASCII characters). */
  readonly requestId?: string
}

export interface ApiResponse {
  /** e.g. `GET /files/{file}`: names the operation in errors. */
  readonly operation: string
  readonly status: number
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>
  /** The raw body text ("" for 204, 304 and empty bodies). */
  readonly text: string
  /** The response's X-Request-ID, else the one sent. */
  readonly requestId: string
}

export class ApiHttp extends Context.Service<
  ApiHttp,
  {
    /** Sends a request; succeeds with any 2xx or 304 answer, fails with a classified ApiError. */
    send(request: ApiRequest): Effect.Effect<ApiResponse, ApiError>
  }
>()("dlsync/api/ApiHttp") {
  /** Needs an ApiTransport (see `layerLive` for undici), the endpoints and the credentials. */
  static readonly layer = Layer.effect(
    ApiHttp,
    Effect.gen(function* () {
      const transport = yield* ApiTransport
      const endpoints = yield* ApiEndpoints
      const credentials = yield* Credentials
      const observer = yield* ApiObserver
      const apiOrigins = new Set([new URL(endpoints.baseUrl).origin, new URL(endpoints.authUrl).origin])
      /** Rate-limit groups held back by a 429, by group; an open group has no entry. */
      const gates = new Map<string, RateGate>()

      /**
       * Waits until the group's gate lets one request through. A wait beyond what one call
       * waits inline fails at once with RateLimited (nothing sent), the time left as its delay.
       */
      const passGate = Effect.fnUntraced(function* (
        operation: string,
        settings: HttpSettings
      ): Effect.fn.Return<void, ApiError> {
        const group = rateLimitGroup(operation)
        let waited = 0
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          const { gate, waitMs } = admit(gates.get(group), now)
          if (gate === undefined) gates.delete(group)
          else gates.set(group, gate)
          if (waitMs === 0) break
          if (waited + waitMs > settings.schedule.maxInlineWaitMs) {
            return yield* new ApiError({
              operation,
              reason: new RateLimited({
                status: 429,
                message: "rate limit reached: the service asked to wait (Retry-After) after an earlier request",
                retryAfterMillis: waitMs
              })
            })
          }
          waited += waitMs
          yield* Effect.sleep(Duration.millis(waitMs))
        }
        if (waited > 0) yield* observer.rateLimitWait(operation, waited)
      })

      /** A 429 holds back every request of its group (see rateGate.ts). */
      const onRateLimited = Effect.fnUntraced(function* (operation: string, retryAfterMillis: number | undefined) {
        const group = rateLimitGroup(operation)
        const now = yield* Clock.currentTimeMillis
        const before = gates.get(group)
        const after = closeGate(before, now, retryAfterMillis)
        gates.set(group, after)
        if (before === undefined || before.pausedUntil <= now) {
          yield* Effect.logInfo("rate limited: holding these requests until Retry-After passes").pipe(
            Effect.annotateLogs({ operation, waitMillis: after.pausedUntil - now })
          )
        }
      })

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
        for (let attempts = 1; ; attempts++) {
          yield* passGate(operation, settings)
          const bearer = request.root === "api" ? yield* credentials.bearer : undefined
          const outcome = yield* Effect.result(exchange(request, operation, requestId, bearer, settings))
          const answered = outcome._tag === "Success" ? outcome.success.status : answeredStatus(outcome.failure)
          if (answered !== undefined) yield* observer.request(operation, answered)
          if (outcome._tag === "Success") return outcome.success
          const error = outcome.failure
          if (error.reason._tag === "RateLimited") yield* onRateLimited(operation, error.reason.retryAfterMillis)
          if (error.reason._tag === "Unauthorized" && bearer !== undefined && !refreshed) {
            refreshed = true
            if (yield* credentials.refreshAfterUnauthorized(bearer)) {
              attempts--
              continue
            }
          }
          const delay = retryDelay({
            failure: error.reason,
            idempotency: request.idempotency,
            attempts,
            random: yield* Random.next,
            schedule: settings.schedule
          })
          if (delay === undefined) return yield* error
          yield* observer.retry(operation)
          yield* Effect.logDebug("api retry").pipe(
            Effect.annotateLogs({ operation, attempt: attempts, reason: error.reason._tag, delayMillis: delay })
          )
          yield* Effect.sleep(Duration.millis(delay))
        }
      })

      return ApiHttp.of({ send })
    })
  )

  /** The production graph: undici underneath. */
  static readonly layerLive = ApiHttp.layer.pipe(Layer.provide(ApiTransport.layerUndici))
}

/** Encodes one dynamic path segment (identifiers, keys) so it cannot change the path. */
export const segment = (value: string): string => encodeURIComponent(value)

/** The X-Request-ID rule: 1..100 visible ASCII characters (the spec allows 1..100; a header cannot carry more). */
export const REQUEST_ID_PATTERN = /^[\x21-\x7e]{1,100}$/

/**
 * Decodes a JSON response body with `schema`. A body that is not JSON, or a documented
 * field of the wrong type, fails with a Protocol reason naming the field path and the
 * request id.
 */
export const decodeBody = <S extends Schema.Decoder<unknown>>(schema: S) => {
  // Synchronous (every response schema is): a third faster than decodeUnknownEffect on a 100-record page.
  const decode = Schema.decodeUnknownExit(schema)
  return (response: ApiResponse): Effect.Effect<S["Type"], ApiError> => {
    const protocol = (message: string, field?: string) =>
      new ApiError({
        operation: response.operation,
        reason: new Protocol({
          status: response.status,
          message,
          requestId: response.requestId,
          ...(field !== undefined ? { field } : {})
        })
      })
    let json: unknown
    try {
      json = JSON.parse(response.text)
    } catch {
      return Effect.fail(protocol(response.text === "" ? "expected a JSON body, got none" : "body is not valid JSON"))
    }
    return decode(json).pipe(
      Effect.mapError((e) => {
        const first = formatIssue(e.issue)[0]
        const field = first?.path === undefined || first.path.length === 0 ? undefined : renderPath(first.path)
        const message = truncate(first?.message ?? e.message, 200)
        return protocol(field === undefined ? message : `${field}: ${message}`, field)
      })
    )
  }
}

/** The response header value, lower-cased name. */
export const header = (response: ApiResponse, name: string): string | undefined => response.headers[name.toLowerCase()]

// ---------------------------------------------------------------------------------------

const formatIssue = (issue: SchemaIssue.Issue) => SchemaIssue.makeFormatterStandardSchemaV1()(issue).issues

/** `["data", 3, "size_bytes"]` → `data[3].size_bytes`. */
const renderPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path
    .map((s) => (typeof s === "object" ? s.key : s))
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("")

const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max)}…`)

const generateRequestId = (): string => `dlsync-${crypto.randomUUID()}`

const checkRequestId = (id: string, operation: string): Effect.Effect<string, ApiError> =>
  REQUEST_ID_PATTERN.test(id)
    ? Effect.succeed(id)
    : Effect.fail(
        new ApiError({
          operation,
          reason: new ClientValidation({
            field: "X-Request-ID",
            message: `must be 1 to 100 visible ASCII characters, got ${id.length} characters`
          })
        })
      )

/** A request body as bytes with its media type. */
interface EncodedBody {
  readonly bytes: string | Uint8Array
  readonly contentType: string
}

const encodeBody = (
  body: RequestBody | undefined,
  operation: string
): Effect.Effect<EncodedBody | undefined, ApiError> => {
  if (body === undefined) return Effect.succeed(undefined)
  const invalid = (cause: unknown) =>
    new ApiError({
      operation,
      reason: new ClientValidation({ field: "body", message: `cannot be encoded: ${String(cause)}` })
    })
  switch (body._tag) {
    case "Form": {
      const form = new URLSearchParams()
      for (const [k, v] of body.fields) form.append(k, v)
      return Effect.succeed({ bytes: form.toString(), contentType: "application/x-www-form-urlencoded" })
    }
    case "Multipart":
      // The platform's own multipart encoder (boundary and all), read into memory: uploads are small files.
      return Effect.tryPromise({
        try: async () => {
          const encoded = new Response(body.form)
          return {
            bytes: new Uint8Array(await encoded.arrayBuffer()),
            contentType: encoded.headers.get("content-type") ?? "multipart/form-data"
          }
        },
        catch: invalid
      })
    case "Json":
      return Effect.try({
        try: () => ({ bytes: JSON.stringify(body.value), contentType: "application/json" }),
        catch: invalid
      })
  }
}

/** The status an attempt was answered with; "network" without an answer; undefined if never sent. */
const answeredStatus = (error: ApiError): number | "network" | undefined => {
  const reason = error.reason
  if (reason._tag === "ClientValidation") return undefined
  if (reason._tag === "Transport") return "network"
  return "status" in reason && reason.status !== undefined ? reason.status : "network"
}

const lowerKeys = (headers: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))

const parseJsonOrUndefined = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

const fromWireFailure = (
  failure: WireFailure,
  operation: string,
  settings: HttpSettings,
  requestId: string
): ApiError => {
  const reason: ApiErrorReason = (() => {
    switch (failure.stage) {
      case "invalid":
        return new ClientValidation({ field: "request", message: `cannot be sent: ${String(failure.cause)}` })
      case "connect": {
        const codes = errorCodes(failure.cause)
        return new Transport({
          message: `connection failed${codes.length > 0 ? ` (${codes.join(", ")})` : ""}`,
          neverSent: provablyNeverSent(failure.cause),
          timedOut: codes.some((c) => c.includes("TIMEOUT"))
        })
      }
      case "timeout":
        return new Transport({
          message: `no complete answer within ${settings.timeoutMs} ms`,
          neverSent: false,
          timedOut: true
        })
      case "too-large":
        return new Protocol({
          status: failure.status ?? 0,
          message: `response body exceeds ${settings.maxResponseBytes} bytes`,
          requestId: failure.headers["x-request-id"] ?? requestId
        })
      case "body":
        return new Transport({
          message: "the response could not be read to the end",
          neverSent: false,
          timedOut: false
        })
    }
  })()
  return new ApiError({ operation, reason })
}
