/**
 * The daily bandwidth schedule (pure): a list of windows of local wall-clock time, each
 * with its own limit, over the default `bandwidth_limit`. Limits are bytes per second and
 * 0 means unlimited. A window may wrap midnight ("22:00"–"06:00"); the first window that
 * contains the time wins.
 */
export interface BandwidthWindow {
  /** "HH:MM", inclusive. */
  readonly start: string
  /** "HH:MM", exclusive. */
  readonly end: string
  /** Bytes per second; 0 = unlimited. */
  readonly limit: number
}

/** Minutes after midnight for "HH:MM", or undefined when the text is not a valid time. */
export const parseClock = (text: string): number | undefined => {
  const m = /^(\d{1,2}):(\d{2})$/.exec(text.trim())
  if (m === null) return undefined
  const h = Number(m[1])
  const min = Number(m[2])
  return h <= 24 && min < 60 && h * 60 + min <= 24 * 60 ? h * 60 + min : undefined
}

/** The limit in force at `minuteOfDay` (0–1439). Invalid windows are ignored. */
export const limitAt = (
  defaultLimit: number,
  schedule: ReadonlyArray<BandwidthWindow>,
  minuteOfDay: number
): number => {
  for (const w of schedule) {
    const s = parseClock(w.start)
    const e = parseClock(w.end)
    if (s === undefined || e === undefined || s === e) continue
    const inside = s < e ? minuteOfDay >= s && minuteOfDay < e : minuteOfDay >= s || minuteOfDay < e
    if (inside) return w.limit
  }
  return defaultLimit
}
