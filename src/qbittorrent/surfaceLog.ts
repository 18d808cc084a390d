/**
 * log/main: what this surface did (a torrent added, refused, removed), as qBittorrent's
 * execution log lists its events: `{id, message, timestamp, type}` with ids counting up
 * from 0 and type 1 normal, 2 info, 4 warning, 8 critical. The last LOG_ENTRIES entries are
 * kept in memory. dlsync's own log (stderr or the journal) is the full record.
 */

/** Entries kept. */
export const LOG_ENTRIES = 1000

export type LogType = 1 | 2 | 4 | 8

export interface LogEntry {
  readonly id: number
  readonly message: string
  /** Seconds since the epoch. */
  readonly timestamp: number
  readonly type: LogType
}

export interface SurfaceLog {
  readonly write: (message: string, type: LogType, nowMillis: number) => void
  /** Entries after `lastKnownId` (-1: every one kept) of the types wanted. */
  readonly read: (lastKnownId: number, types: ReadonlySet<LogType>) => ReadonlyArray<LogEntry>
}

export const makeSurfaceLog = (): SurfaceLog => {
  const entries: Array<LogEntry> = []
  let next = 0
  return {
    write: (message, type, nowMillis) => {
      entries.push({ id: next++, message, timestamp: Math.floor(nowMillis / 1000), type })
      if (entries.length > LOG_ENTRIES) entries.splice(0, entries.length - LOG_ENTRIES)
    },
    read: (lastKnownId, types) => entries.filter((e) => e.id > lastKnownId && types.has(e.type))
  }
}
