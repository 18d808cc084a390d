/**
 * Who may use the qBittorrent API, as qBittorrent decides it:
 * - auth/login with the configured user name and password starts a session (an SID
 *   cookie); a session unused for SESSION_SECONDS ends;
 * - every other call needs a live session, or the credentials on the request itself
 *   (`Authorization: Basic`, sent by Radarr and Prowlarr; `Authorization: Bearer <password>`,
 *   Sonarr's API-key mode);
 * - MAX_FAILED_LOGINS different wrong credentials from one address ban it for BAN_SECONDS:
 *   every attempt from it is refused, right or wrong, until then (a restart lifts it). The
 *   same wrong credentials sent again count once: an app with an old password sends them on
 *   every request (Radarr's Test: the version probe's Basic, then the login's form), and
 *   one wrong password is a mistake to report, not a guess to ban. A request counts at most
 *   one failure, whatever it carries.
 * - Every failed sign-in is logged with its address, the user name and how it came (form,
 *   Basic, Bearer); never a password.
 * Credentials are compared in constant time. Time is the Effect Clock. The bans and the
 * session table are the ones every local server shares (server/signInBans.ts, sessionTable.ts).
 */
import { createHash } from "node:crypto"
import { Clock, Effect, Redacted } from "effect"
import { makeSessionTable } from "../server/sessionTable.ts"
import { BAN_SECONDS, MAX_FAILED_LOGINS, makeSignInBans, sameText } from "../server/signInBans.ts"

export { BAN_SECONDS, MAX_FAILED_LOGINS }

/** A session unused this long, in seconds, ends (qBittorrent's default). */
export const SESSION_SECONDS = 3600

/** The most sessions held; signing in beyond it ends the least recently used one. */
export const MAX_SESSIONS = 256

/** The cookie that carries the session, as qBittorrent names it. */
export const SESSION_COOKIE = "SID"

export type LoginOutcome =
  | { readonly _tag: "SignedIn"; readonly sid: string }
  | { readonly _tag: "Refused" }
  | { readonly _tag: "Banned" }

/** Whether a request may go on: yes; no (no or wrong credentials); no, the address is banned. */
export type Access = "allowed" | "refused" | "banned"

export interface Sessions {
  login(client: string, username: string, password: string): Effect.Effect<LoginOutcome>
  logout(sid: string | undefined): Effect.Effect<void>
  /** Whether a request with this session cookie and Authorization header may go on. */
  access(client: string, sid: string | undefined, authorization: string | undefined): Effect.Effect<Access>
}

export const makeSessions = (credentials: {
  readonly username: string
  readonly password: Redacted.Redacted<string>
}): Sessions => {
  const sessions = makeSessionTable<true>({ idleMs: SESSION_SECONDS * 1000, max: MAX_SESSIONS })
  const bans = makeSignInBans("qBittorrent API")

  const matches = (username: string, password: string) =>
    // Both compared, whatever the first gives, so the time tells nothing.
    [sameText(username, credentials.username), sameText(password, Redacted.value(credentials.password))].every(Boolean)

  const failed = (client: string, now: number, attempt: Attempt) =>
    bans.failed(client, now, {
      who: `user ${JSON.stringify(attempt.username.slice(0, 64))}, by ${attempt.via}`,
      digest: attempt.digest
    })

  return {
    login: (client, username, password) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (bans.isBanned(client, now)) return { _tag: "Banned" } as const
        if (!matches(username, password)) {
          yield* failed(client, now, { username, digest: digestOf(username, password), via: "form" })
          return { _tag: "Refused" } as const
        }
        bans.succeeded(client)
        return { _tag: "SignedIn", sid: sessions.open(now, true) } as const
      }),
    logout: (sid) => Effect.sync(() => sessions.close(sid)),
    access: (client, sid, authorization) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (sessions.use(sid, now) === true) return "allowed"
        if (authorization === undefined) return "refused"
        if (bans.isBanned(client, now)) return "banned"
        const attempt = readAuthorization(authorization)
        if (attempt.matches(matches, credentials.password)) {
          bans.succeeded(client)
          return "allowed"
        }
        yield* failed(client, now, attempt)
        return "refused"
      })
  }
}

// ---------------------------------------------------------------------------------------

/** One sign-in attempt: who it claims to be, how it came, and a digest of its credentials. */
interface Attempt {
  readonly username: string
  readonly via: "form" | "Basic" | "Bearer" | "an unknown scheme"
  /** Equal for equal credentials, whichever way they came (the login form or Basic). */
  readonly digest: string
}

/** The credentials of an Authorization header, and whether they are the configured ones. */
const readAuthorization = (
  authorization: string
): Attempt & {
  readonly matches: (
    matches: (username: string, password: string) => boolean,
    password: Redacted.Redacted<string>
  ) => boolean
} => {
  const text = authorization.trim()
  const space = text.search(/\s/)
  const scheme = (space < 0 ? text : text.slice(0, space)).toLowerCase()
  // The rest is the credential whole: a password may hold spaces.
  const value = space < 0 ? "" : text.slice(space).trim()
  if (scheme === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    const username = colon < 0 ? decoded : decoded.slice(0, colon)
    const password = colon < 0 ? "" : decoded.slice(colon + 1)
    return {
      username,
      via: "Basic",
      digest: digestOf(username, password),
      matches: (match) => colon >= 0 && match(username, password)
    }
  }
  if (scheme === "bearer") {
    return {
      username: "",
      via: "Bearer",
      digest: digestOf("", `Bearer ${value}`),
      matches: (_, password) => sameText(value, Redacted.value(password))
    }
  }
  return { username: "", via: "an unknown scheme", digest: digestOf("", text), matches: () => false }
}

const digestOf = (username: string, password: string): string =>
  createHash("sha256")
    .update(JSON.stringify([username, password]))
    .digest("base64")
