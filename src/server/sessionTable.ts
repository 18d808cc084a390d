/**
 * Signed-in sessions of a local server (the qBittorrent API, the web page): a random id
 * (the cookie's value) → what the session holds and when it was last used.
 * - A session unused for `idleMs` ends; using it keeps it alive.
 * - At most `max` are held: opening one beyond ends the least recently used.
 * - Ids are 24 random bytes (base64url): unguessable, never derived from anything.
 * Time is the caller's (the Effect Clock), passed in ms.
 */
import { randomBytes } from "node:crypto"

export interface SessionTable<V> {
  /** Opens a session holding `value`; its id. */
  readonly open: (now: number, value: V) => string
  /** The session's value if it is live (and marks it used now); undefined otherwise. */
  readonly use: (sid: string | undefined, now: number) => V | undefined
  readonly close: (sid: string | undefined) => void
}

export const makeSessionTable = <V>(options: { readonly idleMs: number; readonly max: number }): SessionTable<V> => {
  /** sid → value and last use (ms); a Map iterates in insertion order and every use re-inserts. */
  const sessions = new Map<string, { readonly value: V; readonly lastUse: number }>()
  return {
    open: (now, value) => {
      for (const [old, s] of sessions) if (now - s.lastUse > options.idleMs) sessions.delete(old)
      // The first is the least recently used.
      while (sessions.size >= options.max) sessions.delete(sessions.keys().next().value ?? "")
      const sid = randomBytes(24).toString("base64url")
      sessions.set(sid, { value, lastUse: now })
      return sid
    },
    use: (sid, now) => {
      if (sid === undefined) return undefined
      const session = sessions.get(sid)
      if (session === undefined) return undefined
      sessions.delete(sid)
      if (now - session.lastUse > options.idleMs) return undefined
      sessions.set(sid, { value: session.value, lastUse: now })
      return session.value
    },
    close: (sid) => {
      if (sid !== undefined) sessions.delete(sid)
    }
  }
}
