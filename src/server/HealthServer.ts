/**
 * The daemon's HTTP endpoint for service managers, probes and Prometheus:
 *
 *   GET|HEAD /healthz     200 "ok" while the process serves requests (liveness)
 *   GET|HEAD /readyz      200 when ready, 503 when not; JSON with each check (Readiness)
 *   GET|HEAD /metrics     Prometheus text exposition format (Metrics)
 *   GET|HEAD /api/status  the `status --json` document (StatusSource)
 *
 * A request whose Host header is not this server's (HostCheck: DNS rebinding) is 403. With
 * the web page (`page`: src/web/), its routes are served beside these, and /metrics and
 * /api/status are read through its access (RouteAccess: its sign-in beyond loopback); the
 * probes keep the Host check alone, so a service manager never needs to sign in.
 * Any other method on these paths is 405 with `Allow: GET, HEAD`; any other path is 404.
 * HEAD answers like GET without a body. Responses are never cached. Requests are not
 * logged (a scrape every 15 s would drown the journal).
 *
 * Lifetime and bounds: LocalServer.ts (listening when the layer is built, a listen failure
 * as HealthServerError naming server.listen, connections bounded per address and in all).
 * With `listen: "off"` nothing listens and `url` is undefined.
 */
import { Context, Effect, Layer } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { allowedHosts, hostCheck } from "./HostCheck.ts"
import type { ListenAddress, ListenSetting } from "./ListenAddress.ts"
import { type HealthServerError, serveLocally } from "./LocalServer.ts"
import { Metrics, PROMETHEUS_CONTENT_TYPE } from "./Metrics.ts"
import { Readiness } from "./Readiness.ts"
import { RouteAccess } from "./RouteAccess.ts"
import { StatusSource } from "./StatusSource.ts"

export interface HealthServerOptions {
  readonly listen: ListenSetting
  /** `server.allowed_hosts`: names besides the listen address and loopback that reach it. */
  readonly allowedHosts?: ReadonlyArray<string>
  /** The web page's routes (src/web/), and its access in front of /metrics and /api/status. */
  readonly page?: Layer.Layer<RouteAccess, never, HttpRouter.HttpRouter>
}

export class HealthServer extends Context.Service<
  HealthServer,
  {
    /** The bound origin, e.g. "http://127.0.0.1:7660"; undefined when the endpoint is off. */
    readonly url: string | undefined
  }
>()("dlsync/server/HealthServer") {
  static readonly layer = (
    options: HealthServerOptions
  ): Layer.Layer<HealthServer, HealthServerError, Metrics | Readiness | StatusSource> =>
    options.listen === "off"
      ? Layer.succeed(HealthServer, HealthServer.of({ url: undefined }))
      : listening(options.listen, options.allowedHosts ?? [], options.page)
}

/** A probe, a scraper or a dashboard asks in well under this. */
const REQUEST_TIMEOUT_MS = 30_000

const listening = (
  address: ListenAddress,
  configuredHosts: ReadonlyArray<string>,
  page: Layer.Layer<RouteAccess, never, HttpRouter.HttpRouter> | undefined
): Layer.Layer<HealthServer, HealthServerError, Metrics | Readiness | StatusSource> =>
  Layer.effect(
    HealthServer,
    Effect.map(
      serveLocally(
        {
          listen: address,
          setting: "server.listen",
          name: "health endpoint",
          exposure: "/api/status shows file names",
          requestTimeoutMs: REQUEST_TIMEOUT_MS
        },
        page === undefined
          ? routes(hostCheck(allowedHosts(address, configuredHosts)))
          : routes(hostCheck(allowedHosts(address, configuredHosts))).pipe(Layer.provideMerge(page))
      ),
      (url) => HealthServer.of({ url })
    )
  )

const routes = (guard: ReturnType<typeof hostCheck>) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const metrics = yield* Metrics
      const readiness = yield* Readiness
      const status = yield* StatusSource
      // The web page's access when it is mounted, else the Host check alone.
      const access = yield* Effect.serviceOption(RouteAccess)
      const read = access._tag === "Some" ? access.value.guard : guard
      // Every route answers only an allowed Host, and only GET and HEAD; the probes need no sign-in.
      const probe = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        guard(readOnly(handler))
      const serve = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        read(readOnly(handler))

      yield* router.add("*", "/healthz", probe(Effect.succeed(text(200, "ok\n"))))
      yield* router.add(
        "*",
        "/readyz",
        probe(
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
        read(() => Effect.succeed(text(404, "not found\n")))
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
