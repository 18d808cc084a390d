/**
 * The daemon's HTTP endpoint for service managers, probes and Prometheus:
 *
 *   GET|HEAD /healthz     200 "ok" while the process serves requests (liveness)
 *   GET|HEAD /readyz      200 when ready, 503 when not; JSON with each check (Readiness)
 *   GET|HEAD /metrics     Prometheus text exposition format (Metrics)
 *   GET|HEAD /api/status  the `status --json` document (StatusSource)
 *
 * A request whose Host header is not this server's (HostCheck: DNS rebinding) is 403.
 * Any other method on these paths is 405 with `Allow: GET, HEAD`; any other path is 404.
 * HEAD answers like GET without a body. Responses are never cached. Requests are not
 * logged (a scrape every 15 s would drown the journal).
 *
 * Lifetime: the layer listens when built and, when its scope closes, stops accepting,
 * lets in-flight requests finish (up to SHUTDOWN_GRACE) and closes. A listen failure
 * (port in use, address not on this host) fails the layer with HealthServerError.
 * With `listen: "off"` nothing listens and `url` is undefined.
 *
 * Bounded: a probe, a scraper and a dashboard need a handful of connections, so at most
 * MAX_CONNECTIONS are held; one more is closed at once, and a connection that sends no
 * complete request head within HEADERS_TIMEOUT_MS is closed (checked every
 * CONNECTIONS_CHECK_MS). Unbounded, 10,000 idle connections held ≈ 100 MB that the process
 * never gave back (bench/memory.ts).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { allowedHosts, hostCheck } from "./HostCheck.ts"
import { formatListen, isLoopback, type ListenAddress, type ListenSetting } from "./ListenAddress.ts"
import { listenFailure } from "./listenFailure.ts"
import { Metrics, PROMETHEUS_CONTENT_TYPE } from "./Metrics.ts"
import { NodeHttp } from "./nodeHttp.ts"
import { Readiness } from "./Readiness.ts"
import { StatusSource } from "./StatusSource.ts"

export interface HealthServerOptions {
  readonly listen: ListenSetting
  /** `server.allowed_hosts`: names besides the listen address and loopback that reach it. */
  readonly allowedHosts?: ReadonlyArray<string>
}

export class HealthServerError extends Schema.TaggedError<HealthServerError>()("HealthServerError", {
  /** The configured address, as written in its setting (`server.listen`, `qbittorrent.listen`). */
  listen: Schema.String,
  /** The system error code (EADDRINUSE, EACCES, EADDRNOTAVAIL, ...), when there is one. */
  code: Schema.UndefinedOr(Schema.String),
  message: Schema.String
}) {}

export class HealthServer extends Context.Service<
  HealthServer,
  {
    /** The bound origin, e.g. "http://127.0.0.1:8686"; undefined when the endpoint is off. */
    readonly url: string | undefined
  }
>()("dlsync/server/HealthServer") {
  static readonly layer = (
    options: HealthServerOptions
  ): Layer.Layer<HealthServer, HealthServerError, Metrics | Readiness | StatusSource> =>
    options.listen === "off"
      ? Layer.succeed(HealthServer, HealthServer.of({ url: undefined }))
      : listening(options.listen, options.allowedHosts ?? [])
}

/** How long in-flight requests may run once shutdown starts. */
export const SHUTDOWN_GRACE = Duration.seconds(5)

/** The most connections held at once; more are closed as they arrive. */
export const MAX_CONNECTIONS = 64

/** A connection must send a complete request head within this long, or it is closed. */
export const HEADERS_TIMEOUT_MS = 10_000

/** How often connections are checked against HEADERS_TIMEOUT_MS (Node's default is 30 s). */
const CONNECTIONS_CHECK_MS = 1_000

/**
 * An HTTP server listening on `address` with the bounds above and SHUTDOWN_GRACE, for every
 * local server of dlsync; a listen failure is a HealthServerError naming the setting `key`.
 */
export const boundedHttpServer = (
  address: ListenAddress,
  key: string
): Layer.Layer<HttpServer.HttpServer, HealthServerError> =>
  Layer.effect(
    HttpServer.HttpServer,
    NodeHttpServer.make(createBoundedServer, {
      port: address.port,
      ...(address.host === undefined ? {} : { host: address.host }),
      gracefulShutdownTimeout: SHUTDOWN_GRACE
    }).pipe(Effect.mapError((error) => listenError(address, error.cause, key)))
  )

const createBoundedServer = () => {
  const server = NodeHttp.createServer({
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS
  })
  server.maxConnections = MAX_CONNECTIONS
  return server
}

const listening = (
  address: ListenAddress,
  configuredHosts: ReadonlyArray<string>
): Layer.Layer<HealthServer, HealthServerError, Metrics | Readiness | StatusSource> => {
  const server = boundedHttpServer(address, "server.listen")
  const serving = HttpRouter.serve(routes(hostCheck(allowedHosts(address, configuredHosts))), {
    disableLogger: true,
    disableListenLog: true
  })
  const announced = Layer.effect(
    HealthServer,
    Effect.gen(function* () {
      const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
      yield* Effect.logInfo(`health endpoint listening on ${url}`)
      if (!isLoopback(address)) {
        yield* Effect.logWarning(
          `health endpoint ${url} is reachable from other hosts (server.listen = "${formatListen(address)}"); /api/status shows file names`
        )
      }
      return HealthServer.of({ url })
    })
  )
  return Layer.merge(serving, announced).pipe(Layer.provide(server))
}

const routes = (guard: ReturnType<typeof hostCheck>) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const metrics = yield* Metrics
      const readiness = yield* Readiness
      const status = yield* StatusSource
      // Every route answers only an allowed Host, and only GET and HEAD.
      const serve = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        guard(readOnly(handler))

      yield* router.add("*", "/healthz", serve(Effect.succeed(text(200, "ok\n"))))
      yield* router.add(
        "*",
        "/readyz",
        serve(
          Effect.map(readiness.report, (report) =>
            HttpServerResponse.jsonUnsafe(report, { status: report.ready ? 200 : 503, headers: NO_STORE })
          )
        )
      )
      yield* router.add(
        "*",
        "/metrics",
        serve(
          Effect.map(metrics.render, (body) =>
            HttpServerResponse.text(body, { contentType: PROMETHEUS_CONTENT_TYPE, headers: NO_STORE })
          )
        )
      )
      yield* router.add(
        "*",
        "/api/status",
        serve(
          status.document.pipe(
            Effect.flatMap((document) => HttpServerResponse.json(document, { headers: NO_STORE })),
            Effect.orDie,
            Effect.catchDefect((defect) =>
              Effect.as(Effect.logError("status document unavailable", defect), text(500, "status unavailable\n"))
            )
          )
        )
      )
      yield* router.add(
        "*",
        "*",
        guard(() => Effect.succeed(text(404, "not found\n")))
      )
    })
  )

const NO_STORE = { "cache-control": "no-store" }

const text = (status: number, body: string, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(body, { status, headers: { ...NO_STORE, ...headers } })

/** Runs `handler` for GET and HEAD (Node drops the body of a HEAD answer); 405 otherwise. */
const readOnly =
  <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  (request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    request.method === "GET" || request.method === "HEAD"
      ? handler
      : Effect.succeed(text(405, "method not allowed\n", { allow: "GET, HEAD" }))

const listenError = (address: ListenAddress, cause: unknown, key: string): HealthServerError => {
  const listen = formatListen(address)
  const { code, why } = listenFailure(cause)
  return new HealthServerError({
    listen,
    code,
    message: `cannot listen on ${listen} (${key}): ${why}; choose another address or set it to "off"`
  })
}
