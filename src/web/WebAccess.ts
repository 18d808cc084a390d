/**
 * Who may read and change what through the status server (the web page, its API, /metrics):
 *
 *   listening on loopback (the default): nobody signs in; reads answer an allowed Host only
 *     (HostCheck: a rebound page cannot read), writes as below.
 *   beyond loopback: every request but the probes needs a session (the login's cookie) or the
 *     password itself (`Authorization: Basic`, any user name: scripts, Prometheus), whatever
 *     address it comes from (a reverse proxy on this host makes every request look local);
 *     without either, a read of an allowed Host is 401, of another Host 403.
 *   every write (POST, DELETE), on loopback too: refused when a browser sent it from another
 *     site (crossSite.ts: Origin, Referer, Sec-Fetch-Site), and unless it carries the CSRF
 *     token (header CSRF_HEADER) of its session, or the server's own token where there is
 *     no session (loopback, Basic, the login itself), which only a page of this server
 *     reads (`GET /api/session`, Host-checked).
 *
 * Sessions: cookie SESSION_COOKIE, HttpOnly, SameSite=Strict, Path=/, Secure when the request
 * came over https (`X-Forwarded-Proto: https` from a proxy); SESSION_IDLE_HOURS unused ends
 * one. Failed sign-ins are logged with the address and banned per address
 * (server/signInBans.ts); the answer to a banned address is 429.
 */
import { createHash, randomBytes } from "node:crypto"
import { Clock, Context, Effect, Option } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { isCrossSite } from "../server/crossSite.ts"
import { type AllowedHosts, isAllowedHost } from "../server/HostCheck.ts"
import type { RouteHandler } from "../server/RouteAccess.ts"
import { makeSessionTable } from "../server/sessionTable.ts"
import { makeSignInBans, sameText } from "../server/signInBans.ts"
import { securityHeaders } from "./securityHeaders.ts"
import type { PasswordCheck } from "./webPassword.ts"

export const SESSION_COOKIE = "dlsync_session"
export const CSRF_HEADER = "x-csrf-token"
export const SESSION_IDLE_HOURS = 24
export const MAX_SESSIONS = 64

/** What `GET /api/session` tells the page. */
export interface SessionView {
  /** Whether this server asks for a password (it listens beyond loopback). */
  readonly loginRequired: boolean
  /** Whether this request may read and act (no password asked, a session, or Basic). */
  readonly signedIn: boolean
  /** The token its writes carry; null while it may not act. */
  readonly csrfToken: string | null
}

export type LoginOutcome = "signed in" | "refused" | "banned"

export interface WebAccessShape {
  readonly loginRequired: boolean
  /** Wraps a reading route: refused requests never reach it. */
  readonly read: <E, R>(handler: RouteHandler<E, R>) => RouteHandler<E, R>
  /** Wraps a writing route: sign-in, then the cross-site check and the CSRF token. */
  readonly write: <E, R>(handler: RouteHandler<E, R>) => RouteHandler<E, R>
  /** Wraps the login and the session's view: the Host check and, for the login, the write checks but a session. */
  readonly open: <E, R>(handler: RouteHandler<E, R>) => RouteHandler<E, R>
  readonly session: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<SessionView>
  /** Checks the password; signed in, the answer's cookie opens the session. */
  readonly login: (
    request: HttpServerRequest.HttpServerRequest,
    password: string
  ) => Effect.Effect<{ readonly outcome: LoginOutcome; readonly cookie: string | null; readonly view: SessionView }>
  /** Ends the request's session; the cookie that clears it. */
  readonly logout: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<string>
}

export class WebAccess extends Context.Service<WebAccess, WebAccessShape>()("dlsync/web/WebAccess") {}

export interface WebAccessOptions {
  readonly hosts: AllowedHosts
  /** Null on loopback: nobody signs in. */
  readonly password: PasswordCheck | null
}

export const makeWebAccess = (options: WebAccessOptions): WebAccessShape => {
  const loginRequired = options.password !== null
  const sessions = makeSessionTable<{ readonly csrf: string }>({
    idleMs: SESSION_IDLE_HOURS * 3600 * 1000,
    max: MAX_SESSIONS
  })
  const bans = makeSignInBans("web page")
  /** The token of writes with no session of their own. */
  const serverToken = randomBytes(24).toString("base64url")

  /** Who sends the request: its session's token, the server's, or no right to act. */
  const identify = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
    if (options.password === null) return { allowed: true, csrf: serverToken } as const
    const now = yield* Clock.currentTimeMillis
    const session = sessions.use(request.cookies[SESSION_COOKIE], now)
    if (session !== undefined) return { allowed: true, csrf: session.csrf } as const
    const basic = basicPassword(request.headers.authorization)
    if (basic === undefined) return { allowed: false, csrf: null } as const
    const client = clientOf(request)
    if (bans.isBanned(client, now)) return { allowed: false, csrf: null, banned: true } as const
    if (yield* options.password(basic)) {
      bans.succeeded(client)
      return { allowed: true, csrf: serverToken } as const
    }
    yield* bans.failed(client, now, { who: "by Basic", digest: digestOf(basic) })
    return { allowed: false, csrf: null } as const
  })

  const refusedUnsigned = (request: HttpServerRequest.HttpServerRequest, banned: boolean) =>
    !isAllowedHost(request.headers.host, options.hosts)
      ? HOST_REFUSED
      : banned
        ? problem(429, "too many failed sign-ins from this address; try again later")
        : problem(401, "sign in first")

  const checkWrite = (request: HttpServerRequest.HttpServerRequest, token: string) => {
    if (isCrossSite(request)) return problem(403, "cross-site request refused")
    const sent = request.headers[CSRF_HEADER]
    if (sent === undefined || !sameText(sent, token)) {
      return problem(403, `missing or wrong ${CSRF_HEADER} header (GET /api/session gives the token)`)
    }
    return undefined
  }

  /** The handler behind the host check and the sign-in; a write also behind the CSRF checks. */
  const guarded =
    (writes: boolean) =>
    <E, R>(handler: RouteHandler<E, R>): RouteHandler<E, R> =>
    (request) =>
      Effect.gen(function* () {
        if (!loginRequired && !isAllowedHost(request.headers.host, options.hosts)) return HOST_REFUSED
        const who = yield* identify(request)
        if (!who.allowed) return refusedUnsigned(request, "banned" in who)
        const refused = writes ? checkWrite(request, who.csrf) : undefined
        return refused ?? securityHeaders(yield* handler(request))
      })
  const read = guarded(false)
  const write = guarded(true)

  const open =
    <E, R>(handler: RouteHandler<E, R>): RouteHandler<E, R> =>
    (request) =>
      Effect.gen(function* () {
        if (!isAllowedHost(request.headers.host, options.hosts)) return HOST_REFUSED
        if (request.method !== "GET" && request.method !== "HEAD") {
          const refused = checkWrite(request, serverToken)
          if (refused !== undefined) return refused
        }
        return securityHeaders(yield* handler(request))
      })

  const session = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
    const who = yield* identify(request)
    const view: SessionView = {
      loginRequired,
      signedIn: who.allowed,
      // Not signed in, the page needs the server's token for its login.
      csrfToken: who.csrf ?? serverToken
    }
    return view
  })

  const login = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest, password: string) {
    const signedOut: SessionView = { loginRequired, signedIn: false, csrfToken: serverToken }
    if (options.password === null) {
      return { outcome: "signed in" as const, cookie: null, view: { ...signedOut, signedIn: true } }
    }
    const client = clientOf(request)
    const now = yield* Clock.currentTimeMillis
    if (bans.isBanned(client, now)) return { outcome: "banned" as const, cookie: null, view: signedOut }
    if (!(yield* options.password(password))) {
      yield* bans.failed(client, now, { who: "", digest: digestOf(password) })
      const outcome = bans.isBanned(client, now) ? ("banned" as const) : ("refused" as const)
      return { outcome, cookie: null, view: signedOut }
    }
    bans.succeeded(client)
    const csrf = randomBytes(24).toString("base64url")
    const sid = sessions.open(now, { csrf })
    yield* Effect.logInfo(`web page: signed in from ${client}`)
    return {
      outcome: "signed in" as const,
      cookie: cookie(request, sid, SESSION_IDLE_HOURS * 3600),
      view: { loginRequired, signedIn: true, csrfToken: csrf }
    }
  })

  const logout = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.sync(() => {
      sessions.close(request.cookies[SESSION_COOKIE])
      return cookie(request, "", 0)
    })

  return { loginRequired, read, write, open, session, login, logout }
}

/** The JSON answer of a refusal: `{ "error": … }`. */
export const problem = (status: number, error: string): HttpServerResponse.HttpServerResponse =>
  securityHeaders(HttpServerResponse.jsonUnsafe({ error }, { status, headers: { "cache-control": "no-store" } }))

// ---------------------------------------------------------------------------------------

const HOST_REFUSED = problem(403, "host not allowed: add the name you use to reach dlsync to server.allowed_hosts")

const clientOf = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "unknown")

/** A digest to tell wrong passwords apart in the bans, never the password. */
const digestOf = (secret: string): string => createHash("sha256").update(secret).digest("base64")

/** The password of `Authorization: Basic <base64 user:password>` (any user name). */
const basicPassword = (authorization: string | undefined): string | undefined => {
  const match = /^\s*basic\s+(\S+)\s*$/i.exec(authorization ?? "")
  if (match === null) return undefined
  const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  return colon < 0 ? undefined : decoded.slice(colon + 1)
}

const cookie = (request: HttpServerRequest.HttpServerRequest, value: string, maxAgeSeconds: number): string => {
  const https = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase() === "https"
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${https ? "; Secure" : ""}`
}
