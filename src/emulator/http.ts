/**
 * The emulator's route contract. Each area of the service (files, change feed, CDN,
 * OAuth, file state, app storage, downloads, control API) exports a list of `Route`s;
 * the server (server.ts) matches the method and path, resolves the bearer into a
 * `Principal`, enforces the route's `auth` rule, applies injected faults, stamps
 * X-Request-ID and renders the result. Handlers see plain data and return plain data.
 *
 * Plain node:http rather than an Effect HttpServer: the CDN must serve ≥ 1 GB/s on
 * loopback and the emulator must be able to misbehave at the socket level (resets,
 * truncated bodies), which wants direct access to the response.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Fault } from "./faults.ts"

/** Who made a request, resolved from `Authorization: Bearer …`. */
export type Principal =
  | { readonly kind: "apiKey"; readonly userId: string }
  | {
      readonly kind: "oauth"
      readonly userId: string
      readonly clientId: string
      readonly scopes: ReadonlySet<string>
    }

/**
 * Which credentials a route accepts, as the spec lists them per operation.
 * - `none`: no bearer (OAuth endpoints, CDN, discovery).
 * - `bearer`: a personal API key when `apiKey` is true; an OAuth token when `oauthScopes`
 *   is not null, and then it must hold every listed scope ([] = any OAuth token).
 *   A missing or unknown bearer is 401 with the error envelope; a known credential of a
 *   kind the route does not take, or lacking a scope, is 403.
 */
export type AuthRule =
  | { readonly kind: "none" }
  | { readonly kind: "bearer"; readonly apiKey: boolean; readonly oauthScopes: ReadonlyArray<string> | null }

export interface RouteRequest {
  readonly method: string
  readonly url: URL
  /** Path parameters, from `:name` segments of the route's path, URL-decoded. */
  readonly params: Readonly<Record<string, string>>
  readonly headers: IncomingMessage["headers"]
  /** The whole request body (empty for GET). The server caps it at 8 MiB. */
  readonly body: Buffer
  /** The X-Request-ID that the response will carry (the client's, when valid). */
  readonly requestId: string
  /** Present whenever the route's rule is `bearer` (the server rejected the request otherwise). */
  readonly principal: Principal | undefined
  readonly raw: IncomingMessage
  /**
   * The injected fault firing for this request, if any. The server applies status, body
   * and JSON faults itself; routes that write raw bodies pass it to `BodyWriter`, and the
   * CDN reads its own kinds (faults.ts).
   */
  readonly fault: Fault | undefined
}

export type RouteResult =
  /** A JSON body; the server sets Content-Type and Content-Length. */
  | {
      readonly kind: "json"
      readonly status: number
      readonly body: unknown
      readonly headers?: Readonly<Record<string, string>>
    }
  /** A binary body (posters); the server sets Content-Length. */
  | {
      readonly kind: "bytes"
      readonly status: number
      readonly body: Buffer
      readonly headers?: Readonly<Record<string, string>>
    }
  /** No body: 204, 304, and HEAD answers. */
  | { readonly kind: "empty"; readonly status: number; readonly headers?: Readonly<Record<string, string>> }
  /** The handler wrote the response itself (CDN bodies, ZIP streams). */
  | { readonly kind: "raw" }

/** The JSON variant, which error helpers return so callers can add headers by spreading. */
export type JsonResult = Extract<RouteResult, { readonly kind: "json" }>

export interface Route {
  readonly method: "GET" | "HEAD" | "POST" | "PUT" | "DELETE"
  /** Absolute path on the emulator's origin with `:param` segments, e.g. "/api/v1/files/:file/state". */
  readonly path: string
  readonly auth: AuthRule
  readonly handle: (request: RouteRequest, response: ServerResponse) => RouteResult | Promise<RouteResult>
}

/** The public error envelope of the spec. */
export const apiError = (
  status: number,
  code: string,
  message: string,
  fields?: Readonly<Record<string, ReadonlyArray<string>>>
): JsonResult => ({
  kind: "json",
  status,
  body: { error: fields ? { code, message, details: { fields } } : { code, message } }
})

/** The OAuth error object of the spec (no envelope). */
export const oauthError = (
  status: number,
  error: string,
  extra?: { readonly message?: string; readonly hint?: string },
  headers?: Readonly<Record<string, string>>
): JsonResult => ({
  kind: "json",
  status,
  body: { error, ...extra },
  ...(headers ? { headers } : {})
})

/**
 * The JSON object of a request body, or the error answer: 415 unless the content type is
 * application/json, 400 `invalid_json` when it does not parse, 422 when it is not an object.
 */
export const readJsonObject = (
  request: RouteRequest
):
  | { readonly ok: true; readonly value: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly error: RouteResult } => {
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
  if (type !== "application/json") {
    return { ok: false, error: apiError(415, "unsupported_media_type", "Content-Type must be application/json") }
  }
  let value: unknown
  try {
    value = JSON.parse(request.body.toString("utf8"))
  } catch {
    return { ok: false, error: apiError(400, "invalid_json", "The request body is not valid JSON") }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: validationFailed({ body: ["must be a JSON object"] }) }
  }
  return { ok: true, value: Object.fromEntries(Object.entries(value)) }
}

/** A 422 `validation_failed` answer naming the offending fields. */
export const validationFailed = (fields: Readonly<Record<string, ReadonlyArray<string>>>): JsonResult =>
  apiError(422, "validation_failed", "The request has invalid fields", fields)

/** `{ data, meta? }` with status 200 unless told otherwise. */
export const ok = (
  data: unknown,
  meta?: unknown,
  status = 200,
  headers?: Readonly<Record<string, string>>
): RouteResult => ({
  kind: "json",
  status,
  body: meta === undefined ? { data } : { data, meta },
  ...(headers ? { headers } : {})
})

/** A request header as one string (repeated headers joined with ", "), or undefined. */
export const headerValue = (headers: IncomingMessage["headers"], name: string): string | undefined => {
  const value = headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(", ") : value
}
