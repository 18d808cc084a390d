/**
 * What writing the app-state backlog at the end of a run says while it waits (pure): how
 * many entries are written of how many, about how long the rest takes at the pace seen so
 * far (or, before the first write, at the request budget), and that what the run's bound
 * does not cover stays queued for the next run.
 */
import { formatDuration } from "../config/units.ts"

/** How often the progress line is logged while the backlog is written. */
export const DRAIN_PROGRESS_EVERY_MS = 5_000
/** Requests one entry costs while its file's state is not known yet: a GET and a conditional PUT. */
export const REQUESTS_PER_ENTRY = 2

export interface DrainProgress {
  /** Entries queued when the writing started (grown if more arrived). */
  readonly total: number
  readonly written: number
  readonly elapsedMs: number
  /** The request budget's rate now (app_state.max_requests_per_minute, halved after a 429). */
  readonly ratePerMinute: number
  /** How long this run writes at most. */
  readonly boundMs: number
}

/** About how long the entries not yet written take. */
export const remainingMs = (p: DrainProgress): number => {
  const left = Math.max(0, p.total - p.written)
  const perEntryMs =
    p.written > 0 ? p.elapsedMs / p.written : (REQUESTS_PER_ENTRY * 60_000) / Math.max(1, p.ratePerMinute)
  return Math.round(left * perEntryMs)
}

/** e.g. `writing app state: 120 of 10,000 entries, about 32m left; after 30s the rest stays queued for the next run`. */
export const drainProgressLine = (p: DrainProgress): string => {
  const leftMs = remainingMs(p)
  const beyondBound = p.elapsedMs + leftMs > p.boundMs
  return (
    `writing app state: ${count(p.written)} of ${count(p.total)} entries, about ${roughly(leftMs)} left` +
    (beyondBound ? `; after ${formatDuration(p.boundMs)} the rest stays queued for the next run` : "")
  )
}

// ---------------------------------------------------------------------------------------

const count = (n: number): string => n.toLocaleString("en-US")

/** Seconds under two minutes, whole minutes above. */
const roughly = (ms: number): string =>
  ms < 120_000
    ? formatDuration(Math.max(1, Math.ceil(ms / 1_000)) * 1_000)
    : formatDuration(Math.round(ms / 60_000) * 60_000)
