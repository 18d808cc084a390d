/**
 * Failed sign-ins per client address, and the ban that follows too many, for every local
 * server that signs people in (the qBittorrent API, the web page):
 * - MAX_FAILED_LOGINS different wrong credentials from one address ban it for BAN_SECONDS:
 *   every attempt from it is refused, right or wrong, until then (a restart lifts it). The
 *   same wrong credentials sent again count once (an app with an old password sends them on
 *   every request: a mistake to report, not a guess to ban).
 * - Every failed sign-in is logged with its address and who it claimed to be; never a
 *   secret (the caller passes a digest of the credentials, not them).
 * - At most MAX_TRACKED_CLIENTS addresses are remembered (the banned ones are always kept).
 * Credentials are compared in constant time (`sameText`).
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"

/** Failed sign-ins from one address before it is banned (qBittorrent's default). */
export const MAX_FAILED_LOGINS = 5

/** How long a ban lasts, in seconds (qBittorrent's default: one hour). */
export const BAN_SECONDS = 3600

/** The most addresses whose failed sign-ins are remembered (the banned ones are always kept). */
const MAX_TRACKED_CLIENTS = 10_000

/** One failed sign-in: who it claimed to be, for the log, and a digest of its credentials. */
export interface FailedSignIn {
  /** E.g. `user "admin", by Basic`; "" when nothing is claimed but the secret. */
  readonly who: string
  /** Equal for equal credentials (never the credentials themselves). */
  readonly digest: string
}

export interface SignInBans {
  /** Whether `client` is banned at `now` (ms). */
  readonly isBanned: (client: string, now: number) => boolean
  /** Records a failed sign-in from `client` and logs it; bans the address at the limit. */
  readonly failed: (client: string, now: number, attempt: FailedSignIn) => Effect.Effect<void>
  /** A sign-in from `client` succeeded: its failures are forgotten. */
  readonly succeeded: (client: string) => void
}

/** The bans of one server; `surface` names it in the log ("qBittorrent API", "web page"). */
export const makeSignInBans = (surface: string): SignInBans => {
  /** client address → the digests of its different wrong credentials and, once banned, until when (ms). */
  const failures = new Map<string, { tried: Set<string>; bannedUntil: number }>()

  const isBanned = (client: string, now: number) => {
    const entry = failures.get(client)
    if (entry === undefined || entry.bannedUntil === 0) return false
    if (entry.bannedUntil > now) return true
    failures.delete(client)
    return false
  }

  const failed = (client: string, now: number, attempt: FailedSignIn) =>
    Effect.suspend(() => {
      if (failures.size >= MAX_TRACKED_CLIENTS) {
        for (const [address, e] of failures) if (e.bannedUntil <= now) failures.delete(address)
      }
      const entry = failures.get(client) ?? { tried: new Set<string>(), bannedUntil: 0 }
      failures.set(client, entry)
      const again = entry.tried.has(attempt.digest)
      entry.tried.add(attempt.digest)
      const who = attempt.who === "" ? client : `${client} (${attempt.who})`
      if (again) return Effect.logWarning(`${surface}: failed sign-in from ${who}: the same wrong credentials again`)
      const logged = Effect.logWarning(
        `${surface}: failed sign-in from ${who}: ${entry.tried.size} of ${MAX_FAILED_LOGINS} different wrong credentials before a ban`
      )
      if (entry.tried.size < MAX_FAILED_LOGINS) return logged
      entry.bannedUntil = now + BAN_SECONDS * 1000
      return Effect.andThen(
        logged,
        Effect.logWarning(
          `${surface}: ${client} is banned for ${BAN_SECONDS / 60} minutes after ${entry.tried.size} failed sign-ins`
        )
      )
    })

  return { isBanned, failed, succeeded: (client) => void failures.delete(client) }
}

/** Constant-time text equality (digests of equal length, whatever the inputs' lengths). */
export const sameText = (a: string, b: string): boolean =>
  timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest())
