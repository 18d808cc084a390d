/**
 * sync/maindata's response ids, as qBittorrent's SyncController answers them: a client sends
 * the `rid` of its last answer and gets only what changed since (the torrents' changed keys,
 * new ones whole, removed hashes in `torrents_removed`; the same for categories, tags,
 * trackers; the changed keys of `server_state`), or a full update (`full_update: true`) when
 * the rid is 0, unknown or too old. Every answer carries a new rid.
 *
 * qBittorrent keeps one state per session; here the last HISTORY snapshots are kept by rid,
 * so that any number of clients (a session, Basic or Bearer auth) each follow their own rid.
 * A full update carries every section, empty or not (qBittorrent 4.5 does so; 5.0 leaves the
 * empty ones out, and clients of both accept either). Pure apart from the history it keeps.
 */

/** Snapshots kept; a client whose rid is older gets a full update. */
export const HISTORY = 16

type Json = string | number | boolean | null
export type JsonObject = Readonly<Record<string, Json>>

export interface MaindataSnapshot {
  /** By hash, without the `hash` key (qBittorrent leaves it out there). */
  readonly torrents: ReadonlyMap<string, JsonObject>
  readonly categories: ReadonlyMap<string, JsonObject>
  readonly tags: ReadonlyArray<string>
  /** Tracker URL → the hashes of the torrents that list it. */
  readonly trackers: ReadonlyMap<string, ReadonlyArray<string>>
  readonly serverState: JsonObject
}

export interface MaindataSync {
  /** The answer to a client whose last rid is `rid` (0 or absent: none), given the state now. */
  readonly answer: (rid: number, now: MaindataSnapshot) => Readonly<Record<string, unknown>>
}

export const makeMaindataSync = (): MaindataSync => {
  const history = new Map<number, MaindataSnapshot>()
  let last = 0
  return {
    answer: (rid, now) => {
      const before = rid > 0 ? history.get(rid) : undefined
      const id = (last % 1_000_000) + 1
      last = id
      history.set(id, now)
      for (const old of history.keys()) {
        if (history.size <= HISTORY) break
        history.delete(old)
      }
      return before === undefined
        ? { rid: id, full_update: true, ...fullOf(now) }
        : { rid: id, ...changes(before, now) }
    }
  }
}

// ---------------------------------------------------------------------------------------

const fullOf = (now: MaindataSnapshot) => ({
  torrents: Object.fromEntries(now.torrents),
  categories: Object.fromEntries(now.categories),
  tags: [...now.tags],
  trackers: Object.fromEntries(now.trackers),
  server_state: now.serverState
})

const changes = (before: MaindataSnapshot, now: MaindataSnapshot): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  const put = (key: string, value: Record<string, unknown> | ReadonlyArray<unknown>) => {
    if (Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0) out[key] = value
  }
  put("torrents", changedObjects(before.torrents, now.torrents, changedKeys))
  put("torrents_removed", removed(before.torrents, now.torrents))
  put(
    "categories",
    changedObjects(before.categories, now.categories, (old, next) => (same(old, next) ? {} : next))
  )
  put("categories_removed", removed(before.categories, now.categories))
  put(
    "tags",
    now.tags.filter((t) => !before.tags.includes(t))
  )
  put(
    "tags_removed",
    before.tags.filter((t) => !now.tags.includes(t))
  )
  const trackers: Record<string, ReadonlyArray<string>> = {}
  for (const [url, hashes] of now.trackers) {
    if (before.trackers.get(url)?.join("|") !== hashes.join("|")) trackers[url] = hashes
  }
  put("trackers", trackers)
  put("trackers_removed", removed(before.trackers, now.trackers))
  put("server_state", changedKeys(before.serverState, now.serverState))
  return out
}

/** New entries whole, changed ones as `diff` says, unchanged ones left out. */
const changedObjects = (
  before: ReadonlyMap<string, JsonObject>,
  now: ReadonlyMap<string, JsonObject>,
  diff: (old: JsonObject, next: JsonObject) => JsonObject
): Record<string, JsonObject> => {
  const out: Record<string, JsonObject> = {}
  for (const [key, next] of now) {
    const old = before.get(key)
    const change = old === undefined ? next : diff(old, next)
    if (Object.keys(change).length > 0) out[key] = change
  }
  return out
}

const changedKeys = (old: JsonObject, next: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(next).filter(([key, value]) => old[key] !== value))

const same = (a: JsonObject, b: JsonObject): boolean => Object.keys(changedKeys(a, b)).length === 0

const removed = (before: ReadonlyMap<string, unknown>, now: ReadonlyMap<string, unknown>): ReadonlyArray<string> =>
  [...before.keys()].filter((key) => !now.has(key))
