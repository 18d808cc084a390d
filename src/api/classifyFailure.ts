/**
 * Turns a non-success response into an `ApiErrorReason`. Pure: the caller passes the
 * status, the parsed body (or undefined when it was empty or not JSON), the headers that
 * matter and the clock reading.
 *
 * Under base_url the body should be the public error envelope; at auth_url, the OAuth
 * error object. A body that is neither still yields a reason from the status alone: a
 * proxy's HTML 502 is a Server failure, not a Protocol one.
 */
import { Option, Schema } from "effect"
import {
  type ApiErrorReason,
  Conflict,
  CursorExpired,
  Forbidden,
  InvalidCursor,
  NotFound,
  OAuth,
  PaymentRequired,
  Precondition,
  RateLimited,
  Server,
  Unauthorized,
  Unexpected,
  Validation
} from "./ApiError.ts"
import { isRetryableStatus, parseRetryAfter } from "./retryPolicy.ts"
import { ERROR_CODES, ErrorEnvelope } from "./schemas/errorEnvelope.ts"
import { OAuthErrorBody } from "./schemas/oauth.ts"

export interface FailedResponse {
  readonly status: number
  readonly body: unknown
  readonly requestId: string | undefined
  readonly retryAfter: string | undefined
  readonly wwwAuthenticate: string | undefined
  /** Which family answered: the API (error envelope) or the OAuth endpoints (OAuth error object). */
  readonly target: "api" | "auth"
  /** Whether the request carried a `cursor` (a 422 then speaks about it). */
  readonly sentCursor: boolean
  readonly nowMs: number
}

export const classifyFailure = (r: FailedResponse): ApiErrorReason => {
  const envelope = Option.getOrUndefined(decodeEnvelope(r.body))
  const oauth = r.target === "auth" ? Option.getOrUndefined(decodeOAuth(r.body)) : undefined
  const code = envelope?.error.code ?? oauth?.error
  const message =
    envelope?.error.message ?? oauth?.message ?? oauth?.error_description ?? defaultMessage(r.status, code)
  const base = {
    status: r.status,
    message,
    ...(code !== undefined ? { code } : {}),
    ...(r.requestId !== undefined ? { requestId: r.requestId } : {})
  }
  const fields = envelope?.error.details?.fields

  if (r.status === 429) {
    const retryAfterMillis = parseRetryAfter(r.retryAfter, r.nowMs)
    return new RateLimited(retryAfterMillis === undefined ? base : { ...base, retryAfterMillis })
  }
  if (isRetryableStatus(r.status)) return new Server(base)
  if (oauth !== undefined) {
    return new OAuth({
      status: r.status,
      error: oauth.error,
      message,
      ...(oauth.hint !== undefined ? { hint: oauth.hint } : {}),
      ...(r.requestId !== undefined ? { requestId: r.requestId } : {})
    })
  }
  switch (r.status) {
    case 401:
      return new Unauthorized(r.wwwAuthenticate === undefined ? base : { ...base, challenge: r.wwwAuthenticate })
    case 402:
      return new PaymentRequired(base)
    case 403:
      return new Forbidden(base)
    case 404:
      return new NotFound(base)
    case 409:
      return new Conflict(base)
    case 410:
      return code === ERROR_CODES.cursorExpired ? new CursorExpired(base) : new Unexpected(base)
    case 412:
      return new Precondition(base)
    case 422:
      if (r.sentCursor && (fields === undefined || "cursor" in fields || (code ?? "").includes("cursor"))) {
        return new InvalidCursor(base)
      }
      return new Validation({ ...base, fields: fields ?? {} })
    case 400:
    case 413:
    case 415:
      return new Validation({ ...base, fields: fields ?? {} })
    default:
      return new Unexpected(base)
  }
}

const decodeEnvelope = Schema.decodeUnknownOption(ErrorEnvelope)
const decodeOAuth = Schema.decodeUnknownOption(OAuthErrorBody)

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "bad request",
  401: "missing or invalid credential",
  402: "account quota or payment restriction",
  403: "access denied",
  404: "not found",
  408: "request timeout",
  409: "conflict",
  410: "gone",
  412: "precondition failed",
  413: "request too large",
  415: "unsupported content type",
  422: "invalid request",
  425: "too early",
  429: "rate limit reached"
}

const defaultMessage = (status: number, code: string | undefined): string => {
  const text = STATUS_TEXT[status] ?? (status >= 500 ? "server error" : `unexpected HTTP status ${status}`)
  return code === undefined ? text : `${text} (${code})`
}
