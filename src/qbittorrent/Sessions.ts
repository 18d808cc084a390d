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
 * Credentials are compared in constant time. Time is the Effect Clock.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { Clock, Effect, Redacted } from "effect"

/** Failed sign-ins from one address before it is banned (qBittorrent's default). */
export const MAX_FAILED_LOGINS = 5

/** How long a ban lasts, in seconds (qBittorrent's default: one hour). */
export const BAN_SECONDS = 3600

/** A session unused this long, in seconds, ends (qBittorrent's default). */
export const SESSION_SECONDS = 3600

/** The most sessions held; signing in beyond it ends the least recently used one. */
export const MAX_SESSIONS = 256

/** The most addresses whose failed sign-ins are remembered (the banned ones are always kept). */
const MAX_TRACKED_CLIENTS = 10_000

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
  /** sid → last use (ms). */
  const sessions = new Map<string, number>()
  /** client address → the digests of its different wrong credentials and, once banned, until when (ms). */
  const failures = new Map<string, { tried: Set<string>; bannedUntil: number }>()

  const matches = (username: string, password: string) =>
    // Both compared, whatever the first gives, so the time tells nothing.
    [sameText(username, credentials.username), sameText(password, Redacted.value(credentials.password))].every(Boolean)

  const isBanned = (client: string, now: number) => {
    const entry = failures.get(client)
    if (entry === undefined || entry.bannedUntil === 0) return false
    if (entry.bannedUntil > now) return true
    failures.delete(client)
    return false
  }

  const failed = (client: string, now: number, attempt: Attempt) =>
    Effect.suspend(() => {
      if (failures.size >= MAX_TRACKED_CLIENTS) {
        for (const [address, e] of failures) if (e.bannedUntil <= now) failures.delete(address)
      }
      const entry = failures.get(client) ?? { tried: new Set<string>(), bannedUntil: 0 }
      failures.set(client, entry)
      const again = entry.tried.has(attempt.digest)
      entry.tried.add(attempt.digest)
      const who = `${client} (user ${JSON.stringify(attempt.username.slice(0, 64))}, by ${attempt.via})`
      if (again) {
        return Effect.logWarning(`qBittorrent API: failed sign-in from ${who}: the same wrong credentials again`)
      }
      const failed = Effect.logWarning(
        `qBittorrent API: failed sign-in from ${who}: ${entry.tried.size} of ${MAX_FAILED_LOGINS} different wrong credentials before a ban`
      )
      if (entry.tried.size < MAX_FAILED_LOGINS) return failed
      entry.bannedUntil = now + BAN_SECONDS * 1000
      return Effect.andThen(
        failed,
        Effect.logWarning(
          `qBittorrent API: ${client} is banned for ${BAN_SECONDS / 60} minutes after ${entry.tried.size} failed sign-ins`
        )
      )
    })

  const liveSession = (sid: string | undefined, now: number) => {
    if (sid === undefined) return false
    const lastUse = sessions.get(sid)
    if (lastUse === undefined) return false
    if (now - lastUse > SESSION_SECONDS * 1000) {
      sessions.delete(sid)
      return false
    }
    sessions.delete(sid)
    sessions.set(sid, now)
    return true
  }

  return {
    login: (client, username, password) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (isBanned(client, now)) return { _tag: "Banned" } as const
        if (!matches(username, password)) {
          yield* failed(client, now, { username, digest: digestOf(username, password), via: "form" })
          return { _tag: "Refused" } as const
        }
        failures.delete(client)
        for (const [old, lastUse] of sessions) if (now - lastUse > SESSION_SECONDS * 1000) sessions.delete(old)
        // A Map iterates in insertion order and every use re-inserts: the first is the least recently used.
        while (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value ?? "")
        const sid = randomBytes(24).toString("base64url")
        sessions.set(sid, now)
        return { _tag: "SignedIn", sid } as const
      }),
    logout: (sid) =>
      Effect.sync(() => {
        if (sid !== undefined) sessions.delete(sid)
      }),
    access: (client, sid, authorization) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (liveSession(sid, now)) return "allowed"
        if (authorization === undefined) return "refused"
        if (isBanned(client, now)) return "banned"
        const attempt = readAuthorization(authorization)
        if (attempt.matches(matches, credentials.password)) {
          failures.delete(client)
          return "allowed"
        }
        yield* failed(client, now, attempt)
        return "refused"
      })
  }
}

// ---------------------------------------------------------------------------------------

/** Constant-time text equality (digests of equal length, whatever the inputs' lengths). */
const sameText = (a: string, b: string): boolean =>
  timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest())

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
