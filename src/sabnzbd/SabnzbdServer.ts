/**
 * The SABnzbd-compatible API: Sonarr, Radarr, Lidarr, Readarr and Prowlarr add dlsync as a
 * "SABnzbd" download client and talk to it as to SABnzbd 4.x:
 *
 *   GET|POST {base}/api?mode=…&apikey=…&output=json     (any {base}: "", "/sabnzbd", …)
 *     query + form fields (url-encoded or multipart) ─► sabnzbdApi.answer ─► JSON
 *
 * Off unless `[sabnzbd]` has an API key; then it listens on `sabnzbd.listen` (this host only
 * by default). A request whose Host is not this server's is 403 (HostCheck, with
 * `server.allowed_hosts`); a body over MAX_BODY_BYTES is 413 and a malformed one 400, both
 * with a SABnzbd error document. Requests are not logged (the API key is in the query).
 * A missing or wrong API key is answered 200 with SABnzbd's JSON error, as SABnzbd's report()
 * writes it, rather than SABnzbd 4's bare 403: the apps' test shows "API Key Incorrect" /
 * "API Key Required" only from a 2xx body (Sonarr Sabnzbd.cs TestAuthentication).
 * A listen failure fails the layer with HealthServerError naming sabnzbd.listen (one line, exit 78).
 */
import { ByteSize, Context, Effect, Layer, Predicate, Schema, Stream } from "effect"
import {
  HttpIncomingMessage,
  HttpRouter,
  HttpServer,
  type HttpServerRequest,
  HttpServerResponse,
  Multipart
} from "effect/http"
import type { SabnzbdSettings } from "../config/sabnzbdSettings.ts"
import { Intake } from "../intake/Intake.ts"
import { boundedHttpServer, type HealthServerError } from "../server/HealthServer.ts"
import { allowedHosts, hostCheck, isAllowedHost } from "../server/HostCheck.ts"
import { formatListen, isLoopback, type ListenAddress } from "../server/ListenAddress.ts"
import { formatBytes } from "../transfer/progressFormat.ts"
import { answer, failure, type Json, type SabnzbdCall } from "./sabnzbdApi.ts"
import { respond } from "./sabnzbdOutput.ts"

/** The largest request body taken: an NZB of a big season pack is tens of MB. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024

export interface SabnzbdServerOptions {
  readonly settings: SabnzbdSettings
  /** The mirror root (SABnzbd's complete_dir). */
  readonly root: string
  /** `server.allowed_hosts`: names besides the listen address and loopback that reach it. */
  readonly allowedHosts?: ReadonlyArray<string>
  /** Overrides MAX_BODY_BYTES (tests). */
  readonly maxBodyBytes?: number
}

export class SabnzbdServer extends Context.Service<
  SabnzbdServer,
  {
    /** The bound origin, e.g. "http://127.0.0.1:8085"; undefined when the API is off. */
    readonly url: string | undefined
  }
>()("dlsync/sabnzbd/SabnzbdServer") {
  /** The daemon's one line: `SabnzbdServer.layer({ settings: config.sabnzbd, root: config.mirror.root, allowedHosts })`. */
  static readonly layer = (options: SabnzbdServerOptions): Layer.Layer<SabnzbdServer, HealthServerError, Intake> => {
    const { listen, apiKey } = options.settings
    if (listen === "off" || apiKey._tag === "None")
      return Layer.succeed(SabnzbdServer, SabnzbdServer.of({ url: undefined }))
    return listening(listen, options, apiKey.value)
  }
}

// ---------------------------------------------------------------------------------------

const listening = (
  address: ListenAddress,
  options: SabnzbdServerOptions,
  apiKey: Parameters<typeof answer>[0]["apiKey"]
): Layer.Layer<SabnzbdServer, HealthServerError, Intake> => {
  const server = boundedHttpServer(address, "sabnzbd.listen")
  const allowed = allowedHosts(address, options.allowedHosts ?? [])
  const guard = hostCheck(allowed)
  // An app in another container reaches dlsync by a name the check does not know: say which, once.
  const warned = new Set<string>()
  const warnRefused = (request: HttpServerRequest.HttpServerRequest) => {
    const host = (request.headers.host ?? "").slice(0, 100)
    if (isAllowedHost(host, allowed) || warned.has(host) || warned.size >= 16) return Effect.void
    warned.add(host)
    return Effect.logWarning(
      `SABnzbd API: refused a request addressed to ${JSON.stringify(host)}; if an app reaches dlsync by that name, add it to server.allowed_hosts`
    )
  }
  const apiOptions = { apiKey, root: options.root, pathMap: options.settings.pathMap }
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES
  const routes = Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      yield* router.add("*", "*", (request) => Effect.andThen(warnRefused(request), guard(serveApi)(request)))
    })
  )
  const serveApi = (request: HttpServerRequest.HttpServerRequest) =>
    isApiPath(request.url)
      ? readCall(request, maxBody).pipe(
          Effect.flatMap((call) => Effect.map(answer(apiOptions, call), (reply) => respond(call.params, reply))),
          Effect.catchTag("BadRequest", (bad) => Effect.succeed(json(bad.status, failure(bad.problem))))
        )
      : Effect.succeed(HttpServerResponse.text("not found\n", { status: 404 }))
  const serving = HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true })
  const announced = Layer.effect(
    SabnzbdServer,
    Effect.gen(function* () {
      const intake = yield* Intake
      // The apps' test fails unless their category is listed: the configured ones exist from the start.
      yield* Effect.forEach(
        options.settings.categories,
        (name) =>
          intake
            .createCategory("sabnzbd", name)
            .pipe(
              Effect.catchTag("IntakeError", (error) =>
                Effect.logWarning(`sabnzbd.categories: cannot create ${JSON.stringify(name)}: ${error.problem}`)
              )
            ),
        { discard: true }
      )
      const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
      yield* Effect.logInfo(
        `SABnzbd API listening on ${url} (in the app: host and port of ${url}, API key from sabnzbd.api_key)`
      )
      if (!isLoopback(address)) {
        yield* Effect.logWarning(
          `SABnzbd API ${url} is reachable from other hosts (sabnzbd.listen = "${formatListen(address)}"); it adds downloads for whoever has the API key`
        )
      }
      return SabnzbdServer.of({ url })
    })
  )
  return Layer.merge(serving, announced).pipe(Layer.provide(server))
}

/** `…/api` or `…/api/` under any base. */
const isApiPath = (url: string): boolean => /\/api\/?$/.test(new URL(url, "http://localhost").pathname)

class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  status: Schema.Number,
  problem: Schema.String
}) {}

/** The call's parameters (query, then form fields; the first value of each) and files, within `maxBody` bytes. */
const readCall = (
  request: HttpServerRequest.HttpServerRequest,
  maxBody: number
): Effect.Effect<SabnzbdCall, BadRequest> => {
  const params = new Map<string, string>()
  const put = (key: string, value: string) => {
    if (!params.has(key)) params.set(key, value)
  }
  for (const [key, value] of new URL(request.url, "http://localhost").searchParams) put(key, value)
  const contentType = (request.headers["content-type"] ?? "").toLowerCase()
  const tooLarge = new BadRequest({
    status: 413,
    problem: `request body too large: at most ${formatBytes(maxBody)}`
  })
  if (request.method !== "POST") return Effect.succeed({ params, files: [] })
  if (Number(request.headers["content-length"] ?? 0) > maxBody) return Effect.fail(tooLarge)

  if (contentType.startsWith("multipart/form-data")) {
    const files: Array<SabnzbdCall["files"][number]> = []
    return Stream.runForEach(request.multipartStream, (part) =>
      part._tag === "Field"
        ? Effect.sync(() => put(part.key, part.value))
        : Effect.map(part.contentEffect, (content) => {
            files.push({ key: part.key, name: part.name, content })
          })
    ).pipe(
      Effect.as({ params, files }),
      Effect.provideContext(Multipart.limitsServices({ maxTotalSize: maxBody, maxFileSize: maxBody, maxParts: 64 })),
      Effect.mapError((error) =>
        error.reason._tag === "Parse" || error.reason._tag === "InternalError"
          ? new BadRequest({
              status: 400,
              problem: "malformed multipart/form-data body: send the NZB as the `name` field"
            })
          : tooLarge
      )
    )
  }
  return request.urlParamsBody.pipe(
    Effect.map((body) => {
      for (const [key, value] of body) if (Predicate.isString(value)) put(key, value)
      return { params, files: [] }
    }),
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBody)),
    Effect.mapError((error) =>
      error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
        ? tooLarge
        : new BadRequest({ status: 400, problem: "malformed request body" })
    )
  )
}

const json = (status: number, body: Json) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store", pragma: "no-cache" } })
