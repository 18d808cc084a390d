/**
 * The emulator's clock. Timestamps are integer microseconds since the epoch (the spec
 * prints microsecond fractions) and strictly increase, so `updated_at` orders changes even
 * when two happen within one microsecond. Tests and the control API move time forward with
 * `advance` instead of sleeping (link, cursor, token and device-code expiry all read it).
 */
export interface EmulatorClock {
  /** Wall-clock milliseconds, plus every `advance`. */
  readonly nowMs: () => number
  /** A fresh timestamp in microseconds, strictly greater than every earlier one. */
  readonly tick: () => number
  /** Moves time forward (negative values are refused). */
  readonly advance: (ms: number) => void
}

export const makeClock = (): EmulatorClock => {
  let offsetMs = 0
  let last = 0
  const nowMs = () => Date.now() + offsetMs
  return {
    nowMs,
    tick: () => {
      const micros = Math.floor((performance.timeOrigin + performance.now() + offsetMs) * 1000)
      last = Math.max(last + 1, micros)
      return last
    },
    advance: (ms) => {
      if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`advance needs a finite ms >= 0, got ${ms}`)
      offsetMs += ms
    }
  }
}

/** `2026-11-22T04:48:11.123456Z` from microseconds since the epoch. */
export const formatMicros = (micros: number): string => {
  const second = Math.floor(micros / 1_000_000)
  let prefix = secondPrefixes.get(second)
  if (prefix === undefined) {
    // Listings format three timestamps per record: Date work per distinct second only.
    if (secondPrefixes.size >= 256) secondPrefixes.clear()
    prefix = new Date(second * 1000).toISOString().slice(0, 19)
    secondPrefixes.set(second, prefix)
  }
  return `${prefix}.${String(micros - second * 1_000_000).padStart(6, "0")}Z`
}

const secondPrefixes = new Map<number, string>()

/**
 * Microseconds from a full RFC 3339 timestamp with a time zone (fraction up to 9 digits),
 * or undefined when the text is not one.
 */
export const parseRfc3339Micros = (text: string): number | undefined => {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/.exec(text)
  if (!match) return undefined
  const [, date, time, fraction = "", zone = "Z"] = match
  const seconds = Date.parse(`${date}T${time}${zone.toUpperCase()}`)
  if (Number.isNaN(seconds)) return undefined
  return seconds * 1000 + Number(fraction.padEnd(6, "0").slice(0, 6))
}
