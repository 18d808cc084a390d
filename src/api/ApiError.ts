/**
 * The one error of the API client. `reason` tells what happened, so callers branch on
 * data (`Effect.catchReason("ApiError", "CursorExpired", …)` or the predicates below)
 * rather than on status codes. Every reason from a response keeps its status, the error
 * code and message when the body had them, and the response's X-Request-ID.
 *
 * | reason           | when                                                         |
 * | ---------------- | ------------------------------------------------------------ |
 * | RateLimited      | 429; `retryAfterMillis` from Retry-After when usable          |
 * | Unauthorized     | 401 (missing, invalid or expired credential)                  |
 * | Forbidden        | 403 (scope, verification, credential kind)                    |
 * | PaymentRequired  | 402 (quota or payment restriction)                            |
 * | NotFound         | 404                                                           |
 * | Conflict         | 409                                                           |
 * | CursorExpired    | 410 `cursor_expired`: drop the cursor, restart without one    |
 * | InvalidCursor    | 422 on a request that sent a cursor, about that cursor        |
 * | Precondition     | 412 (If-Match / If-None-Match failed): re-read, merge, retry  |
 * | Validation       | 400, 413, 415, 422 with `details.fields` when given           |
 * | Server           | 5xx, 408, 425: the service could not answer now               |
 * | OAuth            | a 4xx OAuth error object from an OAuth endpoint               |
 * | Unexpected       | any other non-success status (3xx, 405, other 410s, …)        |
 * | Transport        | no response: connection failure, reset, timeout               |
 * | Protocol         | a response that breaks the spec (undecodable body, bad field) |
 * | ClientValidation | refused before sending: the request itself is invalid         |
 */
import { Duration, Effect, Option, Schema } from "effect"

const fromResponse = {
  status: Schema.Number,
  code: Schema.optionalKey(Schema.String),
  message: Schema.String,
  requestId: Schema.optionalKey(Schema.String)
}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...fromResponse,
  /** The delay the service asked for, already capped; absent when Retry-After was missing or unusable. */
  retryAfterMillis: Schema.optionalKey(Schema.Number)
}) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  ...fromResponse,
  /** The WWW-Authenticate challenge, when sent. */
  challenge: Schema.optionalKey(Schema.String)
}) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fromResponse) {}
export class PaymentRequired extends Schema.TaggedError<PaymentRequired>()("PaymentRequired", fromResponse) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fromResponse) {}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fromResponse) {}
export class CursorExpired extends Schema.TaggedError<CursorExpired>()("CursorExpired", fromResponse) {}
export class InvalidCursor extends Schema.TaggedError<InvalidCursor>()("InvalidCursor", fromResponse) {}
export class Precondition extends Schema.TaggedError<Precondition>()("Precondition", fromResponse) {}

export class Validation extends Schema.TaggedError<Validation>()("Validation", {
  ...fromResponse,
  /** `details.fields`: request field name → messages. */
  fields: Schema.Record(Schema.String, Schema.Array(Schema.String))
}) {}

export class Server extends Schema.TaggedError<Server>()("Server", fromResponse) {}

export class OAuth extends Schema.TaggedError<OAuth>()("OAuth", {
  status: Schema.Number,
  /** The OAuth `error` value, e.g. `authorization_pending`, `invalid_grant`. */
  error: Schema.String,
  message: Schema.String,
  hint: Schema.optionalKey(Schema.String),
  requestId: Schema.optionalKey(Schema.String)
}) {}

export class Unexpected extends Schema.TaggedError<Unexpected>()("Unexpected", fromResponse) {}

export class Transport extends Schema.TaggedError<Transport>()("Transport", {
  message: Schema.String,
  /** True only when the request provably never reached the server (refused, DNS failure). */
  neverSent: Schema.Boolean,
  timedOut: Schema.Boolean,
  /** OpenSSL's verdict when the server's certificate was refused (certificateVerdict.ts): never retried. */
  certificate: Schema.optionalKey(Schema.String)
}) {}

export class Protocol extends Schema.TaggedError<Protocol>()("Protocol", {
  status: Schema.optionalKey(Schema.Number),
  message: Schema.String,
  /** Path of the offending field in the body, e.g. `data[3].size_bytes`. */
  field: Schema.optionalKey(Schema.String),
  requestId: Schema.optionalKey(Schema.String)
}) {}

export class ClientValidation extends Schema.TaggedError<ClientValidation>()("ClientValidation", {
  /** The request parameter at fault, e.g. `limit`, `hashes[2]`, `X-Request-ID`. */
  field: Schema.String,
  message: Schema.String
}) {}

export const ApiErrorReason = Schema.Union([
  RateLimited,
  Unauthorized,
  Forbidden,
  PaymentRequired,
  NotFound,
  Conflict,
  CursorExpired,
  InvalidCursor,
  Precondition,
  Validation,
  Server,
  OAuth,
  Unexpected,
  Transport,
  Protocol,
  ClientValidation
])
export type ApiErrorReason = typeof ApiErrorReason.Type

export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  /** What was attempted, e.g. `GET /files/changes`. Never carries a query string. */
  operation: Schema.String,
  reason: ApiErrorReason
}) {
  override get message(): string {
    const r = this.reason
    const parts: Array<string> = []
    if ("status" in r && r.status !== undefined) parts.push(`status ${r.status}`)
    if ("code" in r && r.code !== undefined) parts.push(`code ${r.code}`)
    if (r._tag === "OAuth") parts.push(`error ${r.error}`)
    if (r._tag === "Protocol" && r.field !== undefined) parts.push(`field ${r.field}`)
    if (r._tag === "ClientValidation") parts.push(`field ${r.field}`)
    if ("requestId" in r && r.requestId !== undefined) parts.push(`request id ${r.requestId}`)
    const detail = parts.length > 0 ? ` (${parts.join(", ")})` : ""
    return `${this.operation}: ${r._tag}: ${r.message}${detail}`
  }
}

/** 410 `cursor_expired` on the change feed. */
export const isCursorExpired = (e: ApiError): boolean => e.reason._tag === "CursorExpired"

/** 422 about a sent cursor: the value was altered or incomplete. */
export const isInvalidCursor = (e: ApiError): boolean => e.reason._tag === "InvalidCursor"

/** Either cursor failure: the spec's answer to both is to drop the cursor and restart without one. */
export const mustRestartFeed = (e: ApiError): boolean => isCursorExpired(e) || isInvalidCursor(e)

/** 412: the If-Match / If-None-Match condition failed; re-read, merge, retry. */
export const isPrecondition = (e: ApiError): boolean => e.reason._tag === "Precondition"

export const isRateLimited = (e: ApiError): boolean => e.reason._tag === "RateLimited"

/** The delay a 429 asked for, when it gave a usable one. */
export const retryAfter = (e: ApiError): Option.Option<Duration.Duration> =>
  e.reason._tag === "RateLimited" && e.reason.retryAfterMillis !== undefined
    ? Option.some(Duration.millis(e.reason.retryAfterMillis))
    : Option.none()

/** 401 or 403: the credential is missing, invalid, lacks a scope or is of the wrong kind. */
export const isAuthProblem = (e: ApiError): boolean => e.reason._tag === "Unauthorized" || e.reason._tag === "Forbidden"

export const isUnauthorized = (e: ApiError): boolean => e.reason._tag === "Unauthorized"
export const isForbidden = (e: ApiError): boolean => e.reason._tag === "Forbidden"

/** 402: quota or payment restriction on the account. */
export const isPaymentRequired = (e: ApiError): boolean => e.reason._tag === "PaymentRequired"

export const isNotFound = (e: ApiError): boolean => e.reason._tag === "NotFound"

/** Worth trying again later: rate limiting, a server-side failure, or no response at all. */
export const isTransient = (e: ApiError): boolean =>
  e.reason._tag === "RateLimited" || e.reason._tag === "Server" || e.reason._tag === "Transport"

/** The OAuth `error` code of an OAuth endpoint failure (e.g. `slow_down`). */
export const oauthError = (e: ApiError): Option.Option<string> =>
  e.reason._tag === "OAuth" ? Option.some(e.reason.error) : Option.none()

/** Builds an ApiError for a request refused before sending. */
export const clientValidation = (operation: string, field: string, message: string): ApiError =>
  new ApiError({ operation, reason: new ClientValidation({ field, message }) })

/** Fails with a ClientValidation reason when `problem` is set; succeeds otherwise. */
export const refuseIf = (
  operation: string,
  problem: { readonly field: string; readonly message: string } | undefined
): Effect.Effect<void, ApiError> =>
  problem === undefined ? Effect.void : Effect.fail(clientValidation(operation, problem.field, problem.message))
