/**
 * Download and selection routes under {base_url}, and their control operations under
 * /_control. The spec names no OAuth scope for these operations, so any OAuth token or a
 * personal API key is accepted.
 */

import { isJsonObject } from "../appStorageBody.ts"
import type { DownloadLifecycle } from "../downloadLifecycle.ts"
import type { Downloads } from "../downloads.ts"
import { type AuthRule, apiError, type Route, type RouteRequest, type RouteResult } from "../http.ts"
import type { WebhookDelays, WebhookSender } from "../webhooks.ts"

export const downloadsRoutes = (downloads: Downloads): ReadonlyArray<Route> => [
  {
    method: "POST",
    path: "/api/v1/downloads",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.create(request.principal, request)
  },
  {
    method: "POST",
    path: "/api/v1/downloads/upload",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.upload(request.principal, request)
  },
  {
    method: "GET",
    path: "/api/v1/downloads",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.list(request.principal, request.url.searchParams)
  },
  {
    method: "GET",
    path: "/api/v1/downloads/:download",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.get(request.principal, request.params.download ?? "")
  },
  {
    method: "DELETE",
    path: "/api/v1/downloads/:download",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.remove(request.principal, request.params.download ?? "")
  },
  {
    method: "POST",
    path: "/api/v1/downloads/:download/cancel",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.cancel(request.principal, request.params.download ?? "")
  },
  {
    method: "POST",
    path: "/api/v1/downloads/:download/retry",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.retry(request.principal, request.params.download ?? "")
  },
  {
    method: "GET",
    path: "/api/v1/download-selections/:selection",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.getSelection(request.principal, request.params.selection ?? "")
  },
  {
    method: "POST",
    path: "/api/v1/download-selections/:selection/choices",
    auth: ANY_CREDENTIAL,
    handle: (request) => downloads.choose(request.principal, request.params.selection ?? "", request)
  }
]

/**
 * Control operations:
 * - GET  /_control/downloads → `{data: [{id, user_id, status}]}`
 * - POST /_control/downloads/tick → applies transitions due by the clock
 * - POST /_control/downloads/:download/advance | /complete → 204, 409 when it cannot move
 * - POST /_control/downloads/:download/fail `{message?}` → 204, 409 when not active
 * - POST /_control/downloads/:download/block `{message?}` | /unblock → 204, 409 otherwise
 * - POST /_control/downloads/timings `{processing_ms?, downloading_ms?, finalizing_ms?}` → 204
 * - POST /_control/webhooks/settings `{allow_loopback_http?, min_interval_ms?, backoff_base_ms?,
 *   backoff_max_ms?, retry_after_max_ms?, retry_after_unit_ms?, request_timeout_ms?}` → 204
 * - GET  /_control/webhooks/attempts → every delivery attempt so far
 * - GET  /_control/webhooks/secret?credential=apiKey:<user>|oauth:<client> → `{data: {secret}}`
 */
export const downloadsControlRoutes = (lifecycle: DownloadLifecycle, webhooks: WebhookSender): ReadonlyArray<Route> => [
  {
    method: "GET",
    path: "/_control/downloads",
    auth: NONE,
    handle: () => {
      lifecycle.tick()
      return {
        kind: "json",
        status: 200,
        body: { data: lifecycle.snapshot().map((d) => ({ id: d.id, user_id: d.userId, status: d.status })) }
      }
    }
  },
  {
    method: "POST",
    path: "/_control/downloads/tick",
    auth: NONE,
    handle: () => {
      lifecycle.tick()
      return { kind: "empty", status: 204 }
    }
  },
  stepRoute("advance", "cannot_advance", CANNOT_ADVANCE, (id) => lifecycle.advance(id)),
  stepRoute("complete", "cannot_advance", CANNOT_ADVANCE, (id) => lifecycle.complete(id)),
  stepRoute("fail", "cannot_fail", "Unknown or not active", (id, message) => lifecycle.fail(id, message), {
    message: "Failed by the control API"
  }),
  stepRoute(
    "block",
    "cannot_block",
    "Unknown, or neither queued nor active",
    (id, message) => lifecycle.block(id, message),
    { message: "Blocked by the control API" }
  ),
  stepRoute("unblock", "cannot_unblock", "Unknown or not blocked", (id) => lifecycle.unblock(id)),
  {
    method: "POST",
    path: "/_control/downloads/timings",
    auth: NONE,
    handle: (request) =>
      withObject(request, (body) => {
        const fields = ["processing_ms", "downloading_ms", "finalizing_ms"] as const
        const problems = fields.filter((f) => body[f] !== undefined && !isDelay(body[f]))
        if (problems.length > 0) return apiError(422, "validation_failed", `${problems.join(", ")}: not a delay in ms`)
        const current = lifecycle.timings
        lifecycle.timings = {
          processingMs: delay(body.processing_ms) ?? current.processingMs,
          downloadingMs: delay(body.downloading_ms) ?? current.downloadingMs,
          finalizingMs: delay(body.finalizing_ms) ?? current.finalizingMs
        }
        lifecycle.tick()
        return { kind: "empty", status: 204 }
      })
  },
  {
    method: "POST",
    path: "/_control/webhooks/settings",
    auth: NONE,
    handle: (request) =>
      withObject(request, (body) => {
        const allow = body.allow_loopback_http
        if (allow !== undefined && typeof allow !== "boolean") {
          return apiError(422, "validation_failed", "allow_loopback_http must be a boolean")
        }
        const names = {
          min_interval_ms: "minIntervalMs",
          backoff_base_ms: "backoffBaseMs",
          backoff_max_ms: "backoffMaxMs",
          retry_after_max_ms: "retryAfterMaxMs",
          retry_after_unit_ms: "retryAfterUnitMs",
          request_timeout_ms: "requestTimeoutMs"
        } as const
        const bad = Object.keys(names).filter((k) => body[k] !== undefined && !isDelay(body[k]))
        if (bad.length > 0) return apiError(422, "validation_failed", `${bad.join(", ")}: not a delay in ms`)
        const delays: WebhookDelays = {}
        for (const [field, option] of Object.entries(names)) {
          const value = delay(body[field])
          if (value !== undefined) Object.assign(delays, { [option]: value })
        }
        webhooks.configure(delays)
        if (allow !== undefined) webhooks.allowLoopbackHttp = allow
        return { kind: "empty", status: 204 }
      })
  },
  {
    method: "GET",
    path: "/_control/webhooks/attempts",
    auth: NONE,
    handle: () => ({
      kind: "json",
      status: 200,
      body: {
        data: webhooks.attempts.map((a) => ({
          event_id: a.eventId,
          url: a.url,
          started_at: new Date(a.startedAt).toISOString(),
          outcome: a.outcome
        })),
        meta: { pending: webhooks.pending() }
      }
    })
  },
  {
    method: "GET",
    path: "/_control/webhooks/secret",
    auth: NONE,
    handle: (request) => {
      const credential = request.url.searchParams.get("credential") ?? ""
      if (!/^(apiKey|oauth):.+/.test(credential)) {
        return apiError(422, "validation_failed", "credential must be apiKey:<user id> or oauth:<client id>")
      }
      return { kind: "json", status: 200, body: { data: { secret: webhooks.secretFor(credential) } } }
    }
  }
]

/** A control body as a JSON object (empty body = {}); 400 when it is not JSON, 422 when not an object. */
const withObject = (
  request: RouteRequest,
  f: (body: Readonly<Record<string, unknown>>) => RouteResult
): RouteResult => {
  let body: unknown
  try {
    body = request.body.length === 0 ? {} : JSON.parse(request.body.toString("utf8"))
  } catch {
    return apiError(400, "invalid_json", "The body is not valid JSON")
  }
  return isJsonObject(body) ? f(body) : apiError(422, "validation_failed", "The body must be a JSON object")
}

/** The optional `{message}` of a control body. */
/**
 * POST /_control/downloads/:download/<step>: 204 once `move` moved the download, else 409
 * `code`. With `message`, the body's `{message?}` (that text by default) goes to `move`.
 */
const stepRoute = (
  step: string,
  code: string,
  detail: string,
  move: (id: string, message: string) => boolean,
  options?: { readonly message: string }
): Route => ({
  method: "POST",
  path: `/_control/downloads/:download/${step}`,
  auth: NONE,
  handle: (request) => {
    const moved = (message: string): RouteResult =>
      move(request.params.download ?? "", message) ? { kind: "empty", status: 204 } : apiError(409, code, detail)
    return options === undefined ? moved("") : withMessage(request, options.message, moved)
  }
})

const CANNOT_ADVANCE = "Unknown, finished, or queued behind a concurrency cap"

const withMessage = (request: RouteRequest, fallback: string, f: (message: string) => RouteResult): RouteResult =>
  withObject(request, (body) => f(typeof body.message === "string" ? body.message : fallback))

const isDelay = (value: unknown): boolean => typeof value === "number" && Number.isFinite(value) && value >= 0

const delay = (value: unknown): number | undefined => (typeof value === "number" && isDelay(value) ? value : undefined)

const ANY_CREDENTIAL: AuthRule = { kind: "bearer", apiKey: true, oauthScopes: [] }
const NONE: AuthRule = { kind: "none" }
