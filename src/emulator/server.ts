/**
 * The emulator's HTTP servers: the API origin ({auth_url} = root, {base_url} = /api/v1,
 * /_control with `control`) and the CDN origin on a second port, so links are another
 * origin as in production. Both run on node:http (on node:https with `apiTls`, `cdnTls`) and
 * share one pipeline (pipeline.ts).
 *
 * Areas plug in through the route lists below (`apiRoutes`, `controlRoutes`, `cdnRoutes`);
 * each gets the one EmulatorContext (context.ts) built here.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { CdnDownloads } from "./cdnDownloads.ts"
import { makeContentSource } from "./content.ts"
import type { EmulatorContext, EmulatorOptions, EmulatorUrls } from "./context.ts"
import { type ControlApi, makeControlApi } from "./control.ts"
import { Faults } from "./faults.ts"
import type { Route } from "./http.ts"
import { generateLibrary, parseLibrarySpec } from "./library.ts"
import { authStateArea, authStateControlRoutes, authStateRoutes, makeOAuthServer } from "./oauthArea.ts"
import { handleRequest } from "./pipeline.ts"
import { RequestLog } from "./requestLog.ts"
import { Router } from "./router.ts"
import { accountRoutes } from "./routes/account.ts"
import { cdnRoutes } from "./routes/cdn.ts"
import { changesRoutes } from "./routes/changes.ts"
import { controlRoutes as coreControlRoutes } from "./routes/control.ts"
import { filesRoutes } from "./routes/files.ts"
import { linkRoutes } from "./routes/links.ts"
import { ALL_SCOPES, EmulatorState } from "./state.ts"

/** startEmulator's options, re-exported for its callers. */
export type { EmulatorOptions } from "./context.ts"

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
    cdnDownloads: new CdnDownloads(options.cdnRatePerConnection ?? null),
    zip: { method: "stored", base: null },
    options,
    urls
  }
  if (options.library !== undefined) generateLibrary(state, state.primaryUser.id, parseLibrarySpec(options.library))
  const control = makeControlApi(context)

  const apiRouter = new Router([...apiRoutes(context), ...(options.control ? controlRoutes(context, control) : [])])
  const cdnRouter = new Router(cdnRoutes(context))
  /** One origin's server: plain HTTP, or https with `tls`; both route through the one pipeline. */
  const originServer = (router: Router, origin: "api" | "cdn", tls: EmulatorOptions["cdnTls"]): Server => {
    const serve = (req: IncomingMessage, res: ServerResponse) => {
      void handleRequest(context, router, origin, req, res)
    }
    return tls === undefined
      ? createServer({ keepAliveTimeout: 10_000 }, serve)
      : createHttpsServer({ keepAliveTimeout: 10_000, ...tls }, serve)
  }
  const apiServer = originServer(apiRouter, "api", options.apiTls)
  const cdnServer = originServer(cdnRouter, "cdn", options.cdnTls)
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
  urls.auth = `${options.apiTls === undefined ? "http" : "https"}://${hostPart}:${apiPort}`
  urls.base = `${urls.auth}/api/v1`
  urls.cdnOrigin = `${options.cdnTls === undefined ? "http" : "https"}://${hostPart}:${cdnPort}`
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
