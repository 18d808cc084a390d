/**
 * The web page for the NAS owner, served by the daemon's status server (server.listen,
 * server/HealthServer.ts) beside the probes, and the JSON API it uses (the README's table):
 *
 *   GET  /                   the page (pageAssets.ts) with its first answer (firstAnswer.ts):
 *                            the status document when this visitor may read it; no secret
 *   GET  /api/session        { loginRequired, signedIn, csrfToken }      (WebAccess.ts)
 *   POST /api/login          { password } → 200 the session | 401 | 429
 *   POST /api/logout         200 {}
 *   GET  /api/status         the status document (HealthServer.ts)
 *   GET  /api/events         server-sent events (EventStream.ts)
 *   GET  /api/config         the effective configuration, secrets masked (`config check`'s view)
 *   …                        the daemon's controls (controlRoutes.ts), the releases (releaseRoutes.ts)
 *
 * Every route passes WebAccess (loopback: the Host check, and the CSRF token for writes;
 * beyond loopback: the sign-in too) but the page itself, which anyone of an allowed Host
 * gets (its data only after the same check), and every answer carries the security headers
 * (securityHeaders.ts). This layer also puts WebAccess in front of /metrics and /api/status
 * (RouteAccess).
 */
import * as Path from "node:path"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { effectiveView } from "../config/effectiveView.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { DaemonControl } from "../engine/DaemonControl.ts"
import { Intake } from "../intake/Intake.ts"
import { allowedHosts, isAllowedHost } from "../server/HostCheck.ts"
import { isLoopback, type ListenAddress } from "../server/ListenAddress.ts"
import { RouteAccess } from "../server/RouteAccess.ts"
import { StatusSource } from "../server/StatusSource.ts"
import { answered, json, jsonBody } from "./apiAnswers.ts"
import { addControlRoutes } from "./controlRoutes.ts"
import { EventStream } from "./EventStream.ts"
import type { FirstAnswer } from "./firstAnswer.ts"
import { loadPageAssets, PAGE_DIR } from "./pageAssets.ts"
import { addReleaseRoutes } from "./releaseRoutes.ts"
import { makeWebAccess, problem } from "./WebAccess.ts"
import { webPassword } from "./webPassword.ts"

export const LoginRequest = Schema.Struct({ password: Schema.String })

/** The page on `listen`, for the configuration it serves. */
export const webPageLayer = (
  config: AppConfig,
  listen: ListenAddress,
  /** Where the built page is looked for (default: the build's `dist/web`, from the sources or the bundle). */
  pageDirs: ReadonlyArray<string> = builtPageDirs()
): Layer.Layer<RouteAccess, never, HttpRouter.HttpRouter | DaemonControl | Intake | EventStream | StatusSource> =>
  Layer.effect(
    RouteAccess,
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const control = yield* DaemonControl
      const intake = yield* Intake
      const events = yield* EventStream
      const status = yield* StatusSource
      const hosts = allowedHosts(listen, config.server.allowed_hosts)
      const access = makeWebAccess({
        hosts,
        password: isLoopback(listen) ? null : yield* webPassword(config.server.password, config.mirror.state_dir)
      })
      const page = yield* loadPageAssets(pageDirs)
      /** What the page shows first: the status document only to a visitor who may read it. */
      const firstAnswer = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
        const { loginRequired, signedIn } = yield* access.session(request)
        const document = signedIn
          ? yield* Effect.catchDefect(status.document, (defect) =>
              // The page asks /api/status itself then, and shows its answer.
              Effect.as(Effect.logError("status document unavailable", defect), null)
            )
          : null
        return { loginRequired, signedIn, status: document } satisfies FirstAnswer<unknown>
      })

      // No sign-in for the page itself (the login form is on it): the Host check alone.
      yield* router.add("GET", "/", (request) =>
        isAllowedHost(request.headers.host, hosts)
          ? page.index(request, firstAnswer(request))
          : Effect.succeed(
              problem(403, "host not allowed: add the name you use to reach dlsync to server.allowed_hosts")
            )
      )

      yield* router.add(
        "GET",
        "/api/session",
        access.open((request) => Effect.map(access.session(request), (view) => json(view)))
      )
      yield* router.add(
        "POST",
        "/api/login",
        access.open((request) =>
          answered(
            Effect.gen(function* () {
              const { password } = yield* jsonBody(request, LoginRequest)
              const { outcome, cookie, view } = yield* access.login(request, password)
              if (outcome === "banned")
                return problem(429, "too many failed sign-ins from this address; try again later")
              if (outcome === "refused") return problem(401, "wrong password")
              const answer = json(view)
              return cookie === null ? answer : HttpServerResponse.setHeader(answer, "set-cookie", cookie)
            })
          )
        )
      )
      yield* router.add(
        "POST",
        "/api/logout",
        access.write((request) =>
          Effect.map(access.logout(request), (cookie) => HttpServerResponse.setHeader(json({}), "set-cookie", cookie))
        )
      )

      yield* router.add(
        "GET",
        "/api/events",
        access.read((request) =>
          Effect.map(events.connect(request), (stream) =>
            stream === undefined
              ? problem(503, "too many event streams open; close a tab")
              : HttpServerResponse.stream(stream, {
                  contentType: "text/event-stream",
                  // No proxy may hold the stream back to buffer it.
                  headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
                })
          )
        )
      )
      const view = effectiveView(config)
      yield* router.add(
        "GET",
        "/api/config",
        access.read(() => Effect.succeed(json(view)))
      )

      yield* addControlRoutes(router, { access, control, events })
      yield* addReleaseRoutes(router, { access, intake })

      return RouteAccess.of({ guard: access.read })
    })
  )

/**
 * Where a build leaves the page (`dist/web`), seen from this module: the sources
 * (src/web/ → ../../dist/web), the bundle's entry (dist/) or one of its chunks (dist/chunks/).
 */
export const builtPageDirs = (): ReadonlyArray<string> => {
  const here = import.meta.dirname
  return [Path.join(here, PAGE_DIR), Path.join(here, "..", PAGE_DIR), Path.join(here, "..", "..", "dist", PAGE_DIR)]
}
