/**
 * The emulator's HTTP servers: the API origin ({auth_url} = root, {base_url} = /api/v1,
 * /_control with `control`) and the CDN origin on a second port, so links are another
 * origin as in production. Both run on node:http and share one pipeline:
 *
 *   request ─► X-Request-ID ─► request log ─► route match (404 / 405) ─► fault (status_*)
 *     ─► body (8 MiB cap → 413) ─► bearer → Principal ─► AuthRule (401 / 403) ─► handler
 *     ─► render (JSON envelope, 204/304 without body, body faults)
 *
 * Areas plug in through the route lists below (`apiRoutes`, `controlRoutes`, `cdnRoutes`).
 * Faults apply to every route of both origins except the control API, which stays
 * reliable so that tests can always clear them. Items past their expires_at are swept
 * before each request (state.ts).
 */
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type ContentSource, makeContentSource } from "./content.ts"
import { type ControlApi, makeControlApi } from "./control.ts"
import { BodyWriter, type Fault, Faults } from "./faults.ts"
import { apiError, type Principal, type Route, type RouteRequest, type RouteResult } from "./http.ts"
import { generateLibrary, parseLibrarySpec } from "./library.ts"
import { authStateArea, authStateControlRoutes, authStateRoutes, makeOAuthServer } from "./oauthArea.ts"
import { type Origin, RequestLog } from "./requestLog.ts"
import { Router } from "./router.ts"
import { accountRoutes } from "./routes/account.ts"
import { cdnRoutes } from "./routes/cdn.ts"
import { changesRoutes } from "./routes/changes.ts"
import { controlRoutes as coreControlRoutes } from "./routes/control.ts"
import { filesRoutes } from "./routes/files.ts"
import { linkRoutes } from "./routes/links.ts"
import { type AccessTokens, ALL_SCOPES, EmulatorState } from "./state.ts"

export interface EmulatorOptions {
  /** Interface to listen on (default 127.0.0.1). */
  readonly host?: string
  /** API port (default 0: any free port). */
  readonly port?: number
  /** CDN port (default 0). */
  readonly cdnPort?: number
  /** Makes download links point at another server (e.g. nginx serving the same bytes). */
  readonly cdnBase?: string
  /** Serve `<dir>/<file id>` instead of generated content when such a file exists. */
  readonly contentDir?: string
  /** Enables the control API under /_control. */
  readonly control?: boolean
  /** Sample library to generate for the primary user (see library.ts). */
  readonly library?: string
  readonly linkTtlMs?: number
  readonly cursorTtlMs?: number
  /** Lifetime of OAuth access tokens (default 3600 s); tests shorten it to watch tokens expire. */
  readonly accessTokenLifetimeSeconds?: number
  /** Lets personal API keys read /files/changes (experiments only; the spec refuses them). */
  readonly allowApiKeyChanges?: boolean
}

/** What every area's routes get: state, collaborators and the (late-bound) public URLs. */
export interface EmulatorContext {
  readonly state: EmulatorState
  readonly tokens: AccessTokens
  readonly faults: Faults
  readonly requestLog: RequestLog
  readonly content: ContentSource
  readonly options: EmulatorOptions
  readonly urls: EmulatorUrls
}

export interface EmulatorUrls {
  /** Host root of the API origin, no trailing slash. */
  auth: string
  /** `${auth}/api/v1`. */
  base: string
  /** Where links point: `cdnBase`, else the CDN origin. */
  cdn: string
  /** The emulator's own CDN origin (posters and ZIPs are always served there). */
  cdnOrigin: string
}

export interface RunningEmulator {
  readonly baseUrl: string
  readonly authUrl: string
  /** Where download links point (`cdnBase` when given). */
  readonly cdnUrl: string
  /** The emulator's own CDN origin (posters, ZIPs, and links without `cdnBase`). */
  readonly cdnOrigin: string
  readonly controlUrl?: string
  /** The primary user's personal API key. */
  readonly apiKey: string
  readonly clientId: string
  /** A ready OAuth pair for the primary user with every scope. */
  readonly accessToken: string
  readonly refreshToken: string
  readonly state: EmulatorState
  readonly context: EmulatorContext
  /** The control operations, in process (the same as /_control). */
  readonly control: ControlApi
  close(): Promise<void>
}

/**
 * Every API route, by area. An area adds its list here (OAuth, file state, app storage,
 * downloads and selections: `...oauthRoutes(context)` and so on).
 */
const apiRoutes = (context: EmulatorContext): ReadonlyArray<Route> => [
  ...accountRoutes(context),
  ...filesRoutes(context),
  ...changesRoutes(context),
  ...linkRoutes(context),
  ...authStateRoutes(context)
]

/** Control routes under /_control, by area (device approval, download advance, …). */
const controlRoutes = (context: EmulatorContext, control: ControlApi): ReadonlyArray<Route> => [
  ...coreControlRoutes(context, control),
  ...authStateControlRoutes(context)
]

/** Largest request body any route accepts; more is 413. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024

export const startEmulator = async (options: EmulatorOptions = {}): Promise<RunningEmulator> => {
  const host = options.host ?? "127.0.0.1"
  const state = new EmulatorState({
    ...(options.linkTtlMs === undefined ? {} : { linkTtlMs: options.linkTtlMs }),
    ...(options.cursorTtlMs === undefined ? {} : { cursorTtlMs: options.cursorTtlMs })
  })
  const urls: EmulatorUrls = { auth: "", base: "", cdn: "", cdnOrigin: "" }
  const context: EmulatorContext = {
    state,
    tokens: makeOAuthServer(
      state,
      () => urls.auth,
      options.accessTokenLifetimeSeconds === undefined
        ? {}
        : { accessTokenLifetimeSeconds: options.accessTokenLifetimeSeconds }
    ),
    faults: new Faults(),
    requestLog: new RequestLog(),
    content: makeContentSource(options.contentDir),
    options,
    urls
  }
  if (options.library !== undefined) generateLibrary(state, state.primaryUser.id, parseLibrarySpec(options.library))
  const control = makeControlApi(context)

  const apiRouter = new Router([...apiRoutes(context), ...(options.control ? controlRoutes(context, control) : [])])
  const cdnRouter = new Router(cdnRoutes(context))
  const apiServer = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    void handle(context, apiRouter, "api", req, res)
  })
  const cdnServer = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    void handle(context, cdnRouter, "cdn", req, res)
  })
  const apiPort = await listen(apiServer, host, options.port ?? 0)
  let cdnPort: number
  try {
    cdnPort = await listen(cdnServer, host, options.cdnPort ?? 0)
  } catch (error) {
    authStateArea(context).dispose()
    await closeServer(apiServer)
    throw error
  }
  const hostPart = host.includes(":") ? `[${host}]` : host
  urls.auth = `http://${hostPart}:${apiPort}`
  urls.base = `${urls.auth}/api/v1`
  urls.cdnOrigin = `http://${hostPart}:${cdnPort}`
  urls.cdn = options.cdnBase?.replace(/\/+$/, "") ?? urls.cdnOrigin

  const pair = context.tokens.issue(state.primaryUser.id, state.defaultClientId, ALL_SCOPES)
  return {
    baseUrl: urls.base,
    authUrl: urls.auth,
    cdnUrl: urls.cdn,
    cdnOrigin: urls.cdnOrigin,
    ...(options.control ? { controlUrl: `${urls.auth}/_control` } : {}),
    apiKey: state.primaryUser.apiKey,
    clientId: state.defaultClientId,
    accessToken: pair.accessToken,
    refreshToken: pair.refreshToken,
    state,
    context,
    control,
    close: async () => {
      authStateArea(context).dispose()
      await Promise.all([closeServer(apiServer), closeServer(cdnServer)])
    }
  }
}

/** The X-Request-ID a response carries: the client's when it is 1..100 visible characters. */
export const responseRequestId = (incoming: string | ReadonlyArray<string> | undefined): string => {
  if (typeof incoming === "string" && /^[\x21-\x7e]{1,100}$/.test(incoming)) return incoming
  return `req_${randomBytes(12).toString("hex")}`
}

const handle = async (
  context: EmulatorContext,
  router: Router,
  origin: Origin,
  req: IncomingMessage,
  res: ServerResponse
): Promise<void> => {
  const requestId = responseRequestId(req.headers["x-request-id"])
  res.setHeader("X-Request-ID", requestId)
  const method = req.method ?? "GET"
  const logged = context.requestLog.record({
    at: context.state.clock.nowMs(),
    origin,
    method,
    path: req.url ?? "/",
    headers: req.headers,
    requestId
  })
  const settle = () => {
    logged.status ??= res.statusCode
  }
  res.on("finish", settle)
  res.on("close", settle)
  try {
    context.state.sweepExpired()
    let url: URL
    try {
      // Prefixing (not resolving against a base) keeps "//host/x" a path, not another authority.
      const target = req.url ?? "/"
      if (!target.startsWith("/")) throw new TypeError("not an origin-form target")
      url = new URL(`http://emulator.invalid${target}`)
    } catch {
      await render(res, method, apiError(400, "invalid_request", "The request target is not a valid URL"), undefined)
      return
    }
    const match = router.match(method, url.pathname)
    if (match.kind === "notFound") {
      const fault = context.faults.take(method, url.pathname, undefined)
      await render(res, method, statusFault(fault) ?? apiError(404, "not_found", "No such route"), fault)
      return
    }
    if (match.kind === "methodNotAllowed") {
      await render(
        res,
        method,
        {
          ...apiError(405, "method_not_allowed", `Method ${method} is not allowed here`),
          headers: { Allow: match.allow.join(", ") }
        },
        undefined
      )
      return
    }
    // The control plane stays reliable whatever the faults say (a test must be able to clear them).
    const fault = match.route.path.startsWith("/_control")
      ? undefined
      : context.faults.take(method, url.pathname, match.route.path)
    const faulted = statusFault(fault)
    if (faulted) {
      req.resume()
      await render(res, method, faulted, fault)
      return
    }
    const body = await readBody(req)
    if (body === "tooLarge") {
      res.setHeader("Connection", "close")
      await render(res, method, apiError(413, "payload_too_large", "The request body exceeds 8 MiB"), undefined)
      return
    }
    const auth = authorize(context, match.route, req.headers.authorization)
    if (!auth.ok) {
      await render(res, method, auth.error, fault)
      return
    }
    const request: RouteRequest = {
      method,
      url,
      params: match.params,
      headers: req.headers,
      body,
      requestId,
      principal: auth.principal,
      raw: req,
      fault
    }
    const result = await match.route.handle(request, res)
    await render(res, method, result, fault)
  } catch (error) {
    process.stderr.write(
      `emulator: ${method} ${req.url}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
    )
    if (!res.headersSent) await render(res, method, apiError(500, "internal_error", "Internal error"), undefined)
    else res.destroy()
  }
}

type AuthOutcome =
  | { readonly ok: true; readonly principal: Principal | undefined }
  | { readonly ok: false; readonly error: RouteResult }

const REALM = 'Bearer realm="download-service"'

const authorize = (context: EmulatorContext, route: Route, header: string | undefined): AuthOutcome => {
  const rule = route.auth
  if (rule.kind === "none") return { ok: true, principal: undefined }
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "")
  const token = match?.[1]
  if (token === undefined) {
    return {
      ok: false,
      error: {
        ...apiError(401, "unauthorized", "A bearer credential is required"),
        headers: { "WWW-Authenticate": REALM }
      }
    }
  }
  const principal = context.state.apiKeyPrincipal(token) ?? context.tokens.resolveAccessToken(token)
  if (principal === undefined) {
    return {
      ok: false,
      error: {
        ...apiError(401, "unauthorized", "The credential is invalid or expired"),
        headers: { "WWW-Authenticate": `${REALM}, error="invalid_token"` }
      }
    }
  }
  if (principal.kind === "apiKey") {
    if (rule.apiKey) return { ok: true, principal }
    return { ok: false, error: apiError(403, "forbidden", "Personal API keys are not accepted by this operation") }
  }
  if (rule.oauthScopes === null) {
    return { ok: false, error: apiError(403, "forbidden", "OAuth tokens are not accepted by this operation") }
  }
  const missing = rule.oauthScopes.filter((scope) => !principal.scopes.has(scope))
  if (missing.length > 0) {
    return {
      ok: false,
      error: {
        ...apiError(403, "insufficient_scope", `The token lacks the scope ${missing.join(" ")}`),
        headers: { "WWW-Authenticate": `${REALM}, error="insufficient_scope", scope="${rule.oauthScopes.join(" ")}"` }
      }
    }
  }
  return { ok: true, principal }
}

const statusFault = (fault: Fault | undefined): RouteResult | undefined => {
  if (fault === undefined) return undefined
  switch (fault.kind) {
    case "status_429":
      return {
        ...apiError(429, "rate_limited", "Too many requests"),
        headers: { "Retry-After": String(fault.retryAfterSeconds ?? 1) }
      }
    case "status_500":
      return apiError(500, "internal_error", "Injected server error")
    case "status_503": {
      const result = apiError(503, "service_unavailable", "Injected unavailability")
      return fault.retryAfterSeconds === undefined
        ? result
        : { ...result, headers: { "Retry-After": String(fault.retryAfterSeconds) } }
    }
    default:
      return undefined
  }
}

const render = async (
  res: ServerResponse,
  method: string,
  result: RouteResult,
  fault: Fault | undefined
): Promise<void> => {
  if (result.kind === "raw") return
  if (res.headersSent) return
  if (result.kind === "empty" || result.status === 204 || result.status === 304) {
    res.writeHead(result.status, result.headers)
    res.end()
    return
  }
  let bytes: Buffer
  if (result.kind === "bytes") {
    bytes = result.body
    res.writeHead(result.status, { "Content-Length": String(bytes.length), ...result.headers })
  } else {
    let body = result.body
    if (fault?.kind === "duplicate_items") body = duplicateItems(body)
    let text = JSON.stringify(body)
    if (fault?.kind === "malformed_json") text = text.slice(0, Math.max(1, Math.floor(text.length / 2)))
    bytes = Buffer.from(text, "utf8")
    res.writeHead(result.status, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Length": String(bytes.length),
      "Cache-Control": "no-store",
      ...result.headers
    })
  }
  if (method === "HEAD") {
    res.end()
    return
  }
  const writer = new BodyWriter(res, fault, bytes.length)
  if (await writer.write(bytes)) await writer.end()
}

const duplicateItems = (body: unknown): unknown => {
  if (typeof body !== "object" || body === null || !("data" in body) || !Array.isArray(body.data)) return body
  return { ...body, data: body.data.flatMap((item: unknown) => [item, item]) }
}

const readBody = (req: IncomingMessage): Promise<Buffer | "tooLarge"> => {
  const declared = Number(req.headers["content-length"] ?? "0")
  if (declared > MAX_BODY_BYTES) {
    req.resume()
    return Promise.resolve("tooLarge")
  }
  return new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let tooLarge = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) tooLarge = true
      else chunks.push(chunk)
    })
    req.on("end", () => resolve(tooLarge ? "tooLarge" : Buffer.concat(chunks)))
    req.on("error", reject)
  })
}

const listen = (server: Server, host: string, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      const address = server.address()
      if (address === null || typeof address === "string") reject(new Error("server has no TCP address"))
      else resolve((address satisfies AddressInfo).port)
    })
  })

const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
