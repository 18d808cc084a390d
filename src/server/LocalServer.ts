/**
 * The one HTTP server every listener of dlsync runs on: the health/status endpoint, the
 * qBittorrent and SABnzbd APIs and the webhook receiver. Each brings its routes; this module
 * listens, bounds what a client can hold, announces the address and turns a listen failure
 * into one line.
 *
 *   listen on the address ─► connections bounded (connectionLimits.ts) ─► Node's HTTP parser
 *     (a request head within HEADERS_TIMEOUT_MS, the whole request within requestTimeout,
 *      an idle kept-alive connection closed after KEEP_ALIVE_TIMEOUT_MS) ─► the routes
 *
 * - At most MAX_CONNECTIONS connections, MAX_CONNECTIONS_PER_ADDRESS from one address; a
 *   connection beyond either takes the place of an idle one, so 500 idle sockets from one
 *   address shut out neither other clients nor that address's next request.
 * - Bodies are the routes' to bound (requestBody.ts): read only as far as needed before the
 *   credentials are checked, within limits after.
 * - The log says "<name> listening on <url>"; a warning follows when the address is
 *   reachable from other hosts and `exposure` says why that matters.
 * - A listen failure (port in use, address not on this host) fails with HealthServerError
 *   naming the setting: dlsync exits 78 with that one line.
 * - When the scope closes: no new connection, requests in flight finish (up to
 *   SHUTDOWN_GRACE), then the server closes.
 */
import type * as Http from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { limitConnections } from "./connectionLimits.ts"
import { formatListen, isLoopback, type ListenAddress } from "./ListenAddress.ts"
import { listenFailure } from "./listenFailure.ts"
import { NodeHttp } from "./nodeHttp.ts"

/** A local server could not listen; `message` is the one line to show. */
export class HealthServerError extends Schema.TaggedError<HealthServerError>()("HealthServerError", {
  /** The configured address, as written in its setting (`server.listen`, `qbittorrent.listen`). */
  listen: Schema.String,
  /** The system error code (EADDRINUSE, EACCES, EADDRNOTAVAIL, ...), when there is one. */
  code: Schema.UndefinedOr(Schema.String),
  message: Schema.String
}) {}

/** The most connections a server holds at once (a real qBittorrent holds 500). */
export const MAX_CONNECTIONS = 500

/** The most connections a server holds at once from one client address. */
export const MAX_CONNECTIONS_PER_ADDRESS = 32

/** A connection must send a complete request head within this long, or it is closed. */
export const HEADERS_TIMEOUT_MS = 5_000

/** A kept-alive connection with no request for this long is closed. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000

/** How long in-flight requests may run once shutdown starts. */
export const SHUTDOWN_GRACE = Duration.seconds(5)

/** How often Node checks connections against the timeouts (its default is 30 s). */
const CONNECTIONS_CHECK_MS = 1_000

export interface LocalServerOptions {
  readonly listen: ListenAddress
  /** The setting the address comes from, e.g. "server.listen", named in the log and the failure. */
  readonly setting: string
  /** What the server is, for the log: "health endpoint", "qBittorrent API", … */
  readonly name: string
  /** Said after the address when listening, e.g. "(for Sonarr, Radarr and Prowlarr)". */
  readonly usage?: string
  /**
   * Why being reachable from other hosts matters, said in a warning when the address is not
   * loopback; without it, that is expected and said in the listening line.
   */
  readonly exposure?: string
  /** The longest a request may take to arrive, head and body, before Node answers 408. */
  readonly requestTimeoutMs: number
}

/**
 * Serves `routes` on the address of `options` for the life of the scope; the bound origin,
 * e.g. "http://127.0.0.1:7660".
 */
export const serveLocally = Effect.fnUntraced(function* <E, R>(
  options: LocalServerOptions,
  routes: Layer.Layer<never, E, R>
) {
  const serving = HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true })
  const context = yield* Layer.build(Layer.provideMerge(serving, boundedServer(options)))
  const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
  yield* announce(options, url)
  return url
})

// ---------------------------------------------------------------------------------------

const boundedServer = (options: LocalServerOptions): Layer.Layer<HttpServer.HttpServer, HealthServerError> =>
  Layer.effect(
    HttpServer.HttpServer,
    NodeHttpServer.make(
      () => {
        const server = NodeHttp.createServer({
          headersTimeout: HEADERS_TIMEOUT_MS,
          requestTimeout: options.requestTimeoutMs,
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
          connectionsCheckingInterval: CONNECTIONS_CHECK_MS
        })
        limitConnections(server, { total: MAX_CONNECTIONS, perAddress: MAX_CONNECTIONS_PER_ADDRESS })
        answerWhileStarting(server)
        return server
      },
      {
        port: options.listen.port,
        ...(options.listen.host === undefined ? {} : { host: options.listen.host }),
        gracefulShutdownTimeout: SHUTDOWN_GRACE
      }
    ).pipe(Effect.mapError((error) => listenError(options, error.cause)))
  )

/**
 * The port is bound before the routes are built (a route's layer may ask the service first):
 * a request in between, or after the routes are gone at shutdown, is answered 503 at once
 * rather than left without an answer. HttpServer.serve attaches its own "request" listener;
 * while it is there, this one does nothing.
 */
const answerWhileStarting = (server: Http.Server): void => {
  server.on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
    if (server.listenerCount("request") > ownListeners) return
    response.writeHead(503, { "content-type": "text/plain", "retry-after": "1", connection: "close" })
    response.end("not serving yet\n")
  })
  // The server's own listeners (the connection limits' and this one); the routes' come after.
  const ownListeners = server.listenerCount("request")
}

const announce = (options: LocalServerOptions, url: string) => {
  const usage = options.usage === undefined ? "" : ` ${options.usage}`
  if (isLoopback(options.listen)) return Effect.logInfo(`${options.name} listening on ${url}${usage}`)
  if (options.exposure === undefined) {
    return Effect.logInfo(`${options.name} listening on ${url}${usage} (reachable from other hosts)`)
  }
  return Effect.andThen(
    Effect.logInfo(`${options.name} listening on ${url}${usage}`),
    Effect.logWarning(
      `${options.name} ${url} is reachable from other hosts (${options.setting} = "${formatListen(options.listen)}"); ${options.exposure}`
    )
  )
}

const listenError = (options: LocalServerOptions, cause: unknown): HealthServerError => {
  const listen = formatListen(options.listen)
  const { code, why } = listenFailure(cause)
  return new HealthServerError({
    listen,
    code,
    message: `cannot listen on ${listen} (${options.setting}): ${why}; choose another address or set it to "off"`
  })
}
