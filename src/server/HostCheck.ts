/**
 * The Host-header check in front of the routes of a local server that no credential
 * protects (the status server: /api/status, /metrics), so a web page in the user's browser
 * cannot read it through DNS rebinding (a name of the attacker's that resolves to 127.0.0.1
 * reaches the server, but carries that name as Host). A server whose every call needs a
 * credential (the qBittorrent and SABnzbd APIs) or a signature (the webhook receiver) has
 * none: a rebound page can read nothing without the secret.
 *
 * A request is answered only when its Host (port ignored) is
 * - an IP address: a browser sends one only for a page loaded from that very address, so
 *   no other site's page can be behind it;
 * - a loopback name: "localhost" or a name under ".localhost" (always this host);
 * - the host name of the listen address;
 * - one of the names the owner allowed (`server.allowed_hosts`, e.g. "nas.lan").
 * Anything else, or no Host at all, gets 403 naming the setting to change.
 *
 * Use: wrap each route, `router.add("GET", path, guard(handler))` with
 * `const guard = hostCheck(allowedHosts(listen, configured))`.
 */
import { isIP } from "node:net"
import { Effect } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { ListenAddress } from "./ListenAddress.ts"

/** The names (lower case, no port) a server answers to besides IP addresses and loopback names. */
export type AllowedHosts = ReadonlySet<string>

/** The allowed names of a server listening on `listen`, with the owner's `configured` ones. */
export const allowedHosts = (listen: ListenAddress, configured: ReadonlyArray<string>): AllowedHosts =>
  new Set(
    [...(listen.host === undefined ? [] : [listen.host]), ...configured].map((name) =>
      hostName(name.trim()).toLowerCase()
    )
  )

/** Whether a request with this Host header value may be answered. */
export const isAllowedHost = (host: string | undefined, allowed: AllowedHosts): boolean => {
  if (host === undefined) return false
  const name = hostName(host.trim()).toLowerCase()
  if (name === "") return false
  return isIP(name) !== 0 || name === "localhost" || name.endsWith(".localhost") || allowed.has(name)
}

/** Wraps a route handler: a request with a Host not allowed gets 403 and never reaches `handler`. */
export const hostCheck =
  (allowed: AllowedHosts) =>
  <E, R>(
    handler: (
      request: HttpServerRequest.HttpServerRequest
    ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
  (request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    isAllowedHost(request.headers.host, allowed) ? handler(request) : Effect.succeed(REFUSED)

// ---------------------------------------------------------------------------------------

const REFUSED = HttpServerResponse.text(
  "host not allowed: add the name you use to reach dlsync to server.allowed_hosts\n",
  { status: 403, headers: { "cache-control": "no-store" } }
)

/** "name:port" → "name", "[v6]:port" → "v6", a bare IPv6 address stays whole. */
const hostName = (host: string): string => {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(host)
  if (bracketed !== null) return bracketed[1] ?? ""
  if (isIP(host) === 6) return host
  const colon = host.lastIndexOf(":")
  return colon < 0 ? host : host.slice(0, colon)
}
