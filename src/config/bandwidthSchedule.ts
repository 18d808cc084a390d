/**
 * The daily bandwidth schedule and its arithmetic: which limit is in force at a minute of
 * the local day, when it may change next, and where windows overlap. The parsers and
 * schemas that read it from configuration are in units.ts.
 */

/** Bytes per second; 0 means no limit. */
export type BytesPerSecond = number

/** The rate that means "no limit". */
export const UNLIMITED: BytesPerSecond = 0

/** One window of the bandwidth schedule: minutes of the local day, end exclusive. */
export interface ScheduleWindow {
  /** 0..1439 */
  readonly start: number
  /** 1..1440; a window with end <= start runs past midnight. */
  readonly end: number
  readonly limit: BytesPerSecond
}

export type BandwidthSchedule = ReadonlyArray<ScheduleWindow>

/** Minutes in a day; a window's end is 1..DAY. */
export const DAY = 24 * 60

/**
 * The limit in force at `minute` (0..1439) of the local day: the window containing it,
 * else `base`.
 */
export const limitAt = (schedule: BandwidthSchedule, base: BytesPerSecond, minute: number): BytesPerSecond => {
  for (const window of schedule) if (contains(window, minute)) return window.limit
  return base
}

/**
 * Minutes from `minute` until the next window starts or ends (1..1440), so a caller can
 * sleep until the limit may change; undefined when the schedule is empty.
 */
export const minutesUntilChange = (schedule: BandwidthSchedule, minute: number): number | undefined => {
  let best: number | undefined
  for (const { start, end } of schedule) {
    for (const edge of [start, end % DAY]) {
      const distance = (((edge - minute) % DAY) + DAY) % DAY || DAY
      if (best === undefined || distance < best) best = distance
    }
  }
  return best
}

/** The minute of the local day (0..1439) of a date, in the process's time zone (TZ). */
export const minuteOfDay = (date: Date): number => date.getHours() * 60 + date.getMinutes()

/** The window as one or two non-wrapping [start, end) ranges of the day. */
const ranges = ({ start, end }: ScheduleWindow): ReadonlyArray<readonly [number, number]> =>
  end > start
    ? [[start, end]]
    : [
        [start, DAY],
        [0, end]
      ]

const contains = (window: ScheduleWindow, minute: number): boolean =>
  ranges(window).some(([s, e]) => minute >= s && minute < e)

/** Where two windows overlap, if they do. */
export const overlapOf = (a: ScheduleWindow, b: ScheduleWindow): { start: number; end: number } | undefined => {
  for (const [as, ae] of ranges(a)) {
    for (const [bs, be] of ranges(b)) {
      const start = Math.max(as, bs)
      const end = Math.min(ae, be)
      if (start < end) return { start, end }
    }
  }
  return undefined
}
