/**
 * Who may read the status server's routes (/metrics, /api/status and those the web page
 * adds): the seam through which the web page (src/web/WebAccess.ts) puts its sign-in in front
 * of them. Without it, the Host check alone (HostCheck.ts): the server's default, on loopback.
 *
 * `guard` wraps a route's handler; a request it refuses never reaches the handler.
 */
import { Context, type Effect } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"

export type RouteHandler<E, R> = (
  request: HttpServerRequest.HttpServerRequest
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>

export class RouteAccess extends Context.Service<
  RouteAccess,
  {
    readonly guard: <E, R>(handler: RouteHandler<E, R>) => RouteHandler<E, R>
  }
>()("dlsync/server/RouteAccess") {}
