/**
 * The qBittorrent-compatible Web API v2 (`[qbittorrent]`): Sonarr, Radarr, Lidarr, Readarr
 * and Prowlarr add dlsync as a qBittorrent download client and send it releases; they poll
 * it and import from the mirror once an item is complete.
 *
 *   app ─► /api/v2/<scope>/<action> ─► Host check ─► auth (session, Basic, Bearer)
 *        ─► parameters (query + body, bounded) ─► endpoints.ts ─► Intake
 *
 * - Every request whose Host is not this server's is 403 (HostCheck: DNS rebinding); a name
 *   the apps use to reach dlsync (a container name) goes in `server.allowed_hosts`.
 * - auth/login is the only call without credentials; any other call without them is 403,
 *   as qBittorrent answers (the apps' probe of app/webapiVersion counts on 403, never 401
 *   or 404). Sessions and bans: Sessions.ts.
 * - A request a browser sends from another site's page (its Origin is not this server) is
 *   403, as qBittorrent's CSRF check refuses it; the apps send no Origin.
 * - An unknown path is 404; a changing call over GET is 405.
 *
 * Lifetime: listening once the layer is built; a listen failure (port in use) fails the
 * layer with HealthServerError, naming `qbittorrent.listen`, so dlsync exits 78 with one
 * line, as for the health endpoint.
 */
import { Context, Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServer, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { QbittorrentSettings } from "../config/qbittorrentSettings.ts"
import { Intake, type IntakeSource } from "../intake/Intake.ts"
import { boundedHttpServer, type HealthServerError } from "../server/HealthServer.ts"
import { allowedHosts, hostCheck } from "../server/HostCheck.ts"
import { formatListen, isLoopback } from "../server/ListenAddress.ts"
import { type Endpoint, makeEndpoints, text } from "./endpoints.ts"
import { type FormProblem, readForm } from "./requestForm.ts"
import { makeSessions, SESSION_COOKIE, type Sessions } from "./Sessions.ts"

export interface QbittorrentServerOptions {
  readonly settings: QbittorrentSettings
  readonly mirrorRoot: string
  /** `server.allowed_hosts`: names besides the listen address and loopback that reach it. */
  readonly allowedHosts: ReadonlyArray<string>
  /** Where `urls=https://…` sources come from; fetchTorrentUrl unless a test says otherwise. */
  readonly fetchUrl?: (url: string) => Effect.Effect<IntakeSource, string>
}

export class QbittorrentServer extends Context.Service<
  QbittorrentServer,
  {
    /** The bound origin, e.g. "http://127.0.0.1:8080". */
    readonly url: string
  }
>()("dlsync/qbittorrent/QbittorrentServer") {
  static readonly layer = (
    options: QbittorrentServerOptions
  ): Layer.Layer<QbittorrentServer, HealthServerError, Intake> => {
    const address = options.settings.listen
    const server = boundedHttpServer(address, "qbittorrent.listen")
    const serving = HttpRouter.serve(routes(options), { disableLogger: true, disableListenLog: true })
    const announced = Layer.effect(
      QbittorrentServer,
      Effect.gen(function* () {
        const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
        yield* Effect.logInfo(`qBittorrent API listening on ${url} (for Sonarr, Radarr and Prowlarr)`)
        if (!isLoopback(address)) {
          yield* Effect.logWarning(
            `qBittorrent API ${url} is reachable from other hosts (qbittorrent.listen = "${formatListen(address)}"); it adds and deletes downloads, so keep its password strong`
          )
        }
        return QbittorrentServer.of({ url })
      })
    )
    return Layer.merge(serving, announced).pipe(Layer.provide(server))
  }
}

/** The layer the daemon adds: the API when `[qbittorrent]` is configured, else nothing. */
export const qbittorrentLayer = (config: {
  readonly qbittorrent: QbittorrentSettings | null
  readonly mirror: { readonly root: string }
  readonly server: { readonly allowed_hosts: ReadonlyArray<string> }
}): Layer.Layer<never, HealthServerError, Intake> =>
  config.qbittorrent === null
    ? Layer.empty
    : Layer.effectDiscard(Effect.void).pipe(
        Layer.provide(
          QbittorrentServer.layer({
            settings: config.qbittorrent,
            mirrorRoot: config.mirror.root,
            allowedHosts: config.server.allowed_hosts
          })
        )
      )

// ---------------------------------------------------------------------------------------

const API_PREFIX = "/api/v2/"

const routes = (options: QbittorrentServerOptions) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const intake = yield* Intake
      const { settings } = options
      const guard = hostCheck(allowedHosts(settings.listen, options.allowedHosts))
      const sessions = makeSessions({ username: settings.username, password: settings.password })
      const endpoints = makeEndpoints({
        intake,
        mirrorRoot: options.mirrorRoot,
        pathMap: settings.path_map,
        listen: settings.listen,
        username: settings.username,
        ...(options.fetchUrl === undefined ? {} : { fetchUrl: options.fetchUrl })
      })
      yield* router.add(
        "*",
        `${API_PREFIX}*`,
        guard((request) => answer(request, sessions, endpoints))
      )
      yield* router.add(
        "*",
        "*",
        guard(() => Effect.succeed(text(404, "Not Found")))
      )
    })
  )

const answer = Effect.fnUntraced(function* (
  request: HttpServerRequest.HttpServerRequest,
  sessions: Sessions,
  endpoints: Readonly<Record<string, Endpoint>>
) {
  const path = new URL(request.url, "http://localhost").pathname.slice(API_PREFIX.length).replace(/\/+$/, "")
  const client = Option.getOrElse(request.remoteAddress, () => "unknown")
  const sid = request.cookies[SESSION_COOKIE]
  const read = Effect.result(readForm(request))
  if (isCrossSite(request)) return text(403, "cross-site request refused")

  if (path === "auth/login") {
    if (request.method !== "POST" && request.method !== "GET") return methodNotAllowed
    const form = yield* read
    if (form._tag === "Failure") return formProblem(form.failure)
    const outcome = yield* sessions.login(
      client,
      form.success.get("username") ?? "",
      form.success.get("password") ?? ""
    )
    switch (outcome._tag) {
      case "Banned":
        return text(403, "Your IP address has been banned after too many failed authentication attempts.")
      case "Refused":
        return text(200, "Fails.")
      case "SignedIn":
        return HttpServerResponse.setHeader(
          text(200, "Ok."),
          "set-cookie",
          `${SESSION_COOKIE}=${outcome.sid}; HttpOnly; Path=/; SameSite=Strict`
        )
    }
  }

  const access = yield* sessions.access(client, sid, request.headers.authorization)
  if (access === "banned") {
    return text(403, "Your IP address has been banned after too many failed authentication attempts.")
  }
  if (access === "refused") return text(403, "Forbidden")

  if (path === "auth/logout") {
    yield* sessions.logout(sid)
    return HttpServerResponse.setHeader(
      text(200, ""),
      "set-cookie",
      `${SESSION_COOKIE}=; HttpOnly; Path=/; Max-Age=0; SameSite=Strict`
    )
  }
  const endpoint = endpoints[path]
  if (endpoint === undefined) return text(404, "Not Found")
  if (endpoint.write ? request.method !== "POST" : request.method !== "GET" && request.method !== "POST") {
    return methodNotAllowed
  }
  const form = yield* read
  return form._tag === "Failure" ? formProblem(form.failure) : yield* endpoint.run(form.success)
})

/** Whether a browser sent this from a page of another origin (Origin's host is not the Host). */
const isCrossSite = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const origin = request.headers.origin
  if (origin === undefined) return false
  try {
    return new URL(origin).host.toLowerCase() !== (request.headers.host ?? "").toLowerCase()
  } catch {
    return true
  }
}

const formProblem = (problem: FormProblem) => text(problem.status, `${problem.problem}\n`)

const methodNotAllowed = HttpServerResponse.text("Method Not Allowed", {
  status: 405,
  headers: { "cache-control": "no-store", allow: "GET, POST" }
})
