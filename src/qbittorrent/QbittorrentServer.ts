/**
 * The qBittorrent-compatible Web API v2 (`[qbittorrent]`): Sonarr, Radarr, Lidarr, Readarr
 * and Prowlarr add dlsync as a qBittorrent download client and send it releases; they poll
 * it and import from the mirror once an item is complete.
 *
 *   app ─► /api/v2/<scope>/<action> ─► cross-site check ─► auth (session, Basic, Bearer)
 *        ─► parameters (query + body, bounded) ─► endpoints.ts ─► Intake
 *
 * - A request a browser sends from another site's page is 403, as qBittorrent's CSRF check
 *   refuses it: by its Origin, else its Referer, else its Sec-Fetch-Site (anything but
 *   same-origin or none); the apps send none of them.
 * - auth/login is the only call without credentials, by POST only (405 otherwise, so no
 *   link or image on a page can sign in or count a failure); its body is read within a few
 *   KiB. Any other call without credentials is 403 and its body is not read, as qBittorrent
 *   answers (the apps' probe of app/webapiVersion counts on 403, never 401 or 404).
 *   Sessions and bans: Sessions.ts; bodies: requestForm.ts.
 * - Any Host is answered, as qBittorrent answers it by default: the credentials are the
 *   gate, so an app may reach dlsync by any name (a container name).
 * - An unknown path is 404; a changing call over GET is 405.
 *
 * Lifetime and bounds: server/LocalServer.ts (a listen failure names `qbittorrent.listen`:
 * dlsync exits 78 with one line).
 */
import { Context, Effect, Layer, Option } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { QbittorrentSettings } from "../config/qbittorrentSettings.ts"
import { Intake, type IntakeSource } from "../intake/Intake.ts"
import { isCrossSite } from "../server/crossSite.ts"
import { type HealthServerError, serveLocally } from "../server/LocalServer.ts"
import { CLOSE_CONNECTION } from "../server/requestBody.ts"
import { type Endpoint, makeEndpoints, text } from "./endpoints.ts"
import { CALL_LIMITS, type FormProblem, LOGIN_LIMITS, readForm } from "./requestForm.ts"
import { makeSessions, SESSION_COOKIE, type Sessions } from "./Sessions.ts"

export interface QbittorrentServerOptions {
  readonly settings: QbittorrentSettings
  readonly mirrorRoot: string
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
  ): Layer.Layer<QbittorrentServer, HealthServerError, Intake> =>
    Layer.effect(
      QbittorrentServer,
      Effect.map(
        serveLocally(
          {
            listen: options.settings.listen,
            setting: "qbittorrent.listen",
            name: "qBittorrent API",
            usage: "(for Sonarr, Radarr and Prowlarr)",
            exposure: "it adds and deletes downloads, so keep its password strong",
            requestTimeoutMs: REQUEST_TIMEOUT_MS
          },
          routes(options)
        ),
        (url) => QbittorrentServer.of({ url })
      )
    )
}

/** The layer the daemon adds: the API when `[qbittorrent]` is configured, else nothing. */
export const qbittorrentLayer = (config: {
  readonly qbittorrent: QbittorrentSettings | null
  readonly mirror: { readonly root: string }
}): Layer.Layer<never, HealthServerError, Intake> =>
  config.qbittorrent === null
    ? Layer.empty
    : Layer.effectDiscard(Effect.void).pipe(
        Layer.provide(
          QbittorrentServer.layer({
            settings: config.qbittorrent,
            mirrorRoot: config.mirror.root
          })
        )
      )

// ---------------------------------------------------------------------------------------

const API_PREFIX = "/api/v2/"

/** The longest a request may take to arrive: a few .torrent files over a slow link. */
const REQUEST_TIMEOUT_MS = 120_000

const routes = (options: QbittorrentServerOptions) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const intake = yield* Intake
      const { settings } = options
      const sessions = makeSessions({ username: settings.username, password: settings.password })
      const endpoints = makeEndpoints({
        intake,
        mirrorRoot: options.mirrorRoot,
        pathMap: settings.path_map,
        listen: settings.listen,
        username: settings.username,
        ...(options.fetchUrl === undefined ? {} : { fetchUrl: options.fetchUrl })
      })
      yield* router.add("*", `${API_PREFIX}*`, (request) => answer(request, sessions, endpoints))
      yield* router.add("*", "*", () => Effect.succeed(text(404, "Not Found")))
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
  if (isCrossSite(request)) return text(403, "cross-site request refused")

  if (path === "auth/login") {
    if (request.method !== "POST") return methodNotAllowed("POST")
    const form = yield* Effect.result(readForm(request, LOGIN_LIMITS))
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
  // Own names only: a path such as "constructor" is no endpoint.
  const endpoint = Object.hasOwn(endpoints, path) ? endpoints[path] : undefined
  if (endpoint === undefined) return text(404, "Not Found")
  if (endpoint.write ? request.method !== "POST" : request.method !== "GET" && request.method !== "POST") {
    return methodNotAllowed(endpoint.write ? "POST" : "GET, POST")
  }
  const form = yield* Effect.result(readForm(request, CALL_LIMITS))
  return form._tag === "Failure" ? formProblem(form.failure) : yield* endpoint.run(form.success)
})

const formProblem = (problem: FormProblem) => {
  const answer = text(problem.status, `${problem.problem}\n`)
  return problem.status === 408 || problem.status === 413
    ? HttpServerResponse.setHeaders(answer, CLOSE_CONNECTION)
    : answer
}

const methodNotAllowed = (allow: string) =>
  HttpServerResponse.text("Method Not Allowed", {
    status: 405,
    headers: { "cache-control": "no-store", allow }
  })
