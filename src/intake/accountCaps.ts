/**
 * Whether the account's caps (GET /account `limits`, read, never hard-coded) let one more
 * download go now, and if not, why and until when. Pure. A null cap is no cap.
 *
 * - daily_downloads / daily_download_bytes with nothing remaining: wait until `resets_at`.
 * - concurrent_downloads / concurrent_torrents reached by this queue's active downloads:
 *   wait for one to end (no time known).
 */
import type { Limits } from "../api/schemas/account.ts"

export interface CapHold {
  readonly reason: string
  /** Ms since the epoch when it may go; null when that depends on other downloads ending. */
  readonly notBefore: number | null
}

export interface ActiveCounts {
  readonly downloads: number
  readonly torrents: number
}

export const capHold = (limits: Limits, active: ActiveCounts, isTorrent: boolean): CapHold | undefined => {
  const daily = limits.daily_downloads
  if (daily !== null && daily.remaining <= 0) {
    return {
      reason: `the account's daily download limit (${daily.limit}) is used up; it resets at ${daily.resets_at}`,
      notBefore: resetMs(daily.resets_at)
    }
  }
  const bytes = limits.daily_download_bytes
  if (bytes !== null && bytes.remaining <= 0) {
    return {
      reason: `the account's daily download volume (${bytes.limit} bytes) is used up; it resets at ${bytes.resets_at}`,
      notBefore: resetMs(bytes.resets_at)
    }
  }
  if (limits.concurrent_downloads !== null && active.downloads >= limits.concurrent_downloads) {
    return {
      reason: `the account's concurrent download cap (${limits.concurrent_downloads}) is reached; waiting for one to finish`,
      notBefore: null
    }
  }
  if (isTorrent && limits.concurrent_torrents !== null && active.torrents >= limits.concurrent_torrents) {
    return {
      reason: `the account's concurrent torrent cap (${limits.concurrent_torrents}) is reached; waiting for one to finish`,
      notBefore: null
    }
  }
  return undefined
}

/** The limits after one more download was accepted (so one round does not overrun them). */
export const afterOneDownload = (limits: Limits): Limits => ({
  ...limits,
  daily_downloads:
    limits.daily_downloads === null
      ? null
      : { ...limits.daily_downloads, remaining: limits.daily_downloads.remaining - 1 }
})

const resetMs = (timestamp: string): number | null => {
  const ms = Date.parse(timestamp)
  return Number.isNaN(ms) ? null : ms
}
