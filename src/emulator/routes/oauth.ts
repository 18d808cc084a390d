/**
 * OAuth routes on `{auth_url}` (discovery, device authorization, the device verification
 * page, browser authorization, token endpoint) and their control operations under
 * `/_control/oauth`.
 *
 * The OAuth endpoints take only `application/x-www-form-urlencoded` bodies with each
 * parameter at most once (RFC 6749 §3.2); anything else is `invalid_request`.
 */
import type { ServerResponse } from "node:http"
import { apiError, oauthError, type Route, type RouteRequest, type RouteResult } from "../http.ts"
import type { OAuthServer } from "../oauth.ts"
import { NO_STORE } from "../oauthResponses.ts"

export const oauthRoutes = (oauth: OAuthServer): ReadonlyArray<Route> => [
  {
    method: "GET",
    path: "/.well-known/oauth-authorization-server",
    auth: { kind: "none" },
    handle: () => ({ kind: "json", status: 200, body: oauth.metadata() })
  },
  {
    method: "POST",
    path: "/oauth/device/authorize",
    auth: { kind: "none" },
    handle: (request) => withForm(request, (form) => oauth.deviceAuthorize(form))
  },
  {
    method: "GET",
    path: "/oauth/authorize",
    auth: { kind: "none" },
    handle: (request) => oauth.authorize(request.url.searchParams)
  },
  {
    method: "POST",
    path: "/oauth/token",
    auth: { kind: "none" },
    handle: (request) => withForm(request, (form) => oauth.token(form))
  },
  {
    method: "GET",
    path: "/device",
    auth: { kind: "none" },
    handle: (request, response) => html(response, 200, devicePage(request.url.searchParams.get("user_code") ?? "", ""))
  },
  {
    method: "POST",
    path: "/device",
    auth: { kind: "none" },
    handle: (request, response) => {
      const form = parseForm(request)
      if (typeof form === "string") return html(response, 400, devicePage("", form))
      const userCode = form.get("user_code") ?? ""
      const done = form.get("action") === "deny" ? oauth.denyDevice(userCode) : oauth.approveDevice(userCode)
      return done
        ? html(
            response,
            200,
            page(form.get("action") === "deny" ? "Access denied." : "Device approved. You can close this page.")
          )
        : html(response, 404, devicePage(userCode, "Unknown, expired or already answered code."))
    }
  }
]

/**
 * Control operations (JSON bodies):
 * - POST /_control/oauth/device/approve `{user_code, user_id?}` → 204, 404 when not pending
 * - POST /_control/oauth/device/deny `{user_code}` → 204, 404 when not pending
 * - POST /_control/oauth/revoke `{token}` or `{user_id, client_id?}` → 200 `{data: {revoked}}`
 * - POST /_control/oauth/tokens `{user_id, client_id, scopes?}` → 200 token pair
 */
export const oauthControlRoutes = (oauth: OAuthServer): ReadonlyArray<Route> => [
  {
    method: "POST",
    path: "/_control/oauth/device/approve",
    auth: { kind: "none" },
    handle: (request) =>
      withJson(request, (body) => {
        const userCode = stringField(body, "user_code")
        if (userCode === undefined) return apiError(422, "validation_failed", "user_code is required")
        const ok = oauth.approveDevice(userCode, stringField(body, "user_id"))
        return ok ? { kind: "empty", status: 204 } : apiError(404, "not_found", "No pending device code")
      })
  },
  {
    method: "POST",
    path: "/_control/oauth/device/deny",
    auth: { kind: "none" },
    handle: (request) =>
      withJson(request, (body) => {
        const userCode = stringField(body, "user_code")
        if (userCode === undefined) return apiError(422, "validation_failed", "user_code is required")
        return oauth.denyDevice(userCode)
          ? { kind: "empty", status: 204 }
          : apiError(404, "not_found", "No pending device code")
      })
  },
  {
    method: "POST",
    path: "/_control/oauth/revoke",
    auth: { kind: "none" },
    handle: (request) =>
      withJson(request, (body) => {
        const token = stringField(body, "token")
        const userId = stringField(body, "user_id")
        if (token !== undefined)
          return { kind: "json", status: 200, body: { data: { revoked: oauth.revoke(token) ? 1 : 0 } } }
        if (userId !== undefined) {
          const revoked = oauth.revokeAll(userId, stringField(body, "client_id"))
          return { kind: "json", status: 200, body: { data: { revoked } } }
        }
        return apiError(422, "validation_failed", "token or user_id is required")
      })
  },
  {
    method: "POST",
    path: "/_control/oauth/tokens",
    auth: { kind: "none" },
    handle: (request) =>
      withJson(request, (body) => {
        const userId = stringField(body, "user_id")
        const clientId = stringField(body, "client_id")
        const scopes = body.scopes
        if (userId === undefined || clientId === undefined) {
          return apiError(422, "validation_failed", "user_id and client_id are required")
        }
        const list = Array.isArray(scopes) ? scopes.filter((s): s is string => typeof s === "string") : undefined
        return { kind: "json", status: 200, body: oauth.issueTokens(userId, clientId, list ?? []), headers: NO_STORE }
      })
  }
]

/**
 * The verification page at `verification_uri`: the emulator has no login, so the page acts
 * as the emulator's default user (the primary user) and approves or denies a user code.
 */
const devicePage = (userCode: string, problem: string): string =>
  page(
    `${problem ? `<p role="alert">${escapeHtml(problem)}</p>` : ""}<form method="post" action="/device">` +
      `<label>Code <input name="user_code" value="${escapeHtml(userCode)}" autocomplete="off"></label> ` +
      `<button name="action" value="approve">Approve</button> <button name="action" value="deny">Deny</button></form>`
  )

const page = (body: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Device sign-in</title></head><body><h1>Device sign-in</h1>${body}</body></html>`

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const html = (response: ServerResponse, status: number, text: string): RouteResult => {
  const bytes = Buffer.from(text, "utf8")
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": String(bytes.length),
    "cache-control": "no-store"
  })
  response.end(bytes)
  return { kind: "raw" }
}

/** Parses a form-encoded OAuth request body, rejecting other content types and repeated parameters. */
export const parseForm = (request: Pick<RouteRequest, "headers" | "body">): URLSearchParams | string => {
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
  if (type !== "application/x-www-form-urlencoded") {
    return "Content-Type must be application/x-www-form-urlencoded"
  }
  const form = new URLSearchParams(request.body.toString("utf8"))
  const seen = new Set<string>()
  for (const key of form.keys()) {
    if (seen.has(key)) return `Parameter ${key} is repeated`
    seen.add(key)
  }
  return form
}

const withForm = (request: RouteRequest, f: (form: URLSearchParams) => RouteResult): RouteResult => {
  const form = parseForm(request)
  return typeof form === "string" ? oauthError(400, "invalid_request", { message: form }, NO_STORE) : f(form)
}

const withJson = (request: RouteRequest, f: (body: Record<string, unknown>) => RouteResult): RouteResult => {
  let body: unknown
  try {
    body = request.body.length === 0 ? {} : JSON.parse(request.body.toString("utf8"))
  } catch {
    return apiError(400, "invalid_json", "The body is not valid JSON")
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return apiError(422, "validation_failed", "The body must be a JSON object")
  }
  return f(Object.fromEntries(Object.entries(body)))
}

const stringField = (body: Record<string, unknown>, key: string): string | undefined => {
  const v = body[key]
  return typeof v === "string" && v !== "" ? v : undefined
}
