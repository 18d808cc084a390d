/**
 * Human units for configuration values: durations ("30s", "1h30m"), sizes ("1 GiB"),
 * rates ("20 MiB/s") and the daily bandwidth schedule. Each has a pure parser returning a
 * `Result` (with a message that names what was expected and what was given) and a Schema
 * built on it, so TOML values, `DLSYNC_*` variables and tests all go through one path.
 *
 * Grammar (units are case-insensitive, whitespace around numbers and units is free):
 * - duration: one or more `<number><unit>` parts in decreasing order, each unit once:
 *   ms | s | m | h | d | w (and their spelled-out forms: "250 millis", "5 minutes").
 *   Decimals are allowed ("1.5h"); the total must be a whole number of milliseconds.
 *   A bare number is refused (seconds or milliseconds? nobody can tell), except 0.
 * - size: `<number> <unit>` with SI units (kB, MB, GB, TB, PB = powers of 1000) or IEC
 *   units (KiB, MiB, GiB, TiB, PiB = powers of 1024), or B / bytes. A bare number (also a
 *   TOML integer) is a count of bytes. Single letters ("1G") are refused as ambiguous.
 *   Fractional results round down to whole bytes ("1.1 MiB" = 1153433).
 * - rate: a size followed by "/s" (the "/s" may be left out); 0 or "unlimited" = no limit.
 * - schedule: windows `HH:MM-HH:MM <rate>` on the local wall clock, end exclusive, a
 *   window whose end is not after its start runs past midnight ("22:00-06:00"), 24:00 ends
 *   a day; windows must not overlap; outside every window the base limit applies.
 *
 * Every value is bounded by Number.MAX_SAFE_INTEGER (in bytes or milliseconds); negative
 * numbers, NaN, exponents, hex and non-ASCII digits are refused.
 */
import { Effect, Predicate, Result, Schema, SchemaIssue, SchemaTransformation } from "effect"
import {
  type BytesPerSecond,
  DAY,
  overlapOf,
  type BandwidthSchedule as Schedule,
  type ScheduleWindow,
  UNLIMITED
} from "./bandwidthSchedule.ts"

export type { BytesPerSecond, ScheduleWindow } from "./bandwidthSchedule.ts"
export { UNLIMITED } from "./bandwidthSchedule.ts"
/** The daily bandwidth schedule (the type of the schema below). */
export type BandwidthSchedule = Schedule

// ---------------------------------------------------------------------------------------
// Pure parsers

/** Parses a duration; the success is a whole number of milliseconds. */
export const parseDuration = (input: unknown): Result.Result<number, string> => {
  const expected = 'a duration such as "30s", "5m", "1h30m", "2d" or "250ms"'
  if (Predicate.isNumber(input)) {
    if (input === 0) return Result.succeed(0)
    const hint =
      Number.isFinite(input) && input > 0 ? ` (a bare number has no unit: write "${input}s" or "${input}m")` : ""
    return Result.fail(`expected ${expected}${hint}, got ${input}`)
  }
  if (!Predicate.isString(input)) return Result.fail(`expected ${expected}, got ${describe(input)}`)
  const text = input.trim()
  const got = `got ${JSON.stringify(input)}`
  if (text.length > MAX_INPUT_LENGTH)
    return Result.fail(`expected ${expected}, got a text of ${input.length} characters`)
  if (text === "0") return Result.succeed(0)
  if (text.startsWith("-")) return Result.fail(`expected ${expected}, not a negative one, ${got}`)
  if (text === "") return Result.fail(`expected ${expected}, got an empty text`)
  if (NUMBER_ONLY.test(text)) {
    return Result.fail(`expected ${expected} (a bare number has no unit: write "${text}s" or "${text}m"), ${got}`)
  }
  let total = 0n
  let lastRank = Number.POSITIVE_INFINITY
  let position = 0
  const part = /\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*/iy
  while (position < text.length) {
    part.lastIndex = position
    const match = part.exec(text)
    if (match === null) return Result.fail(`expected ${expected}, ${got}`)
    const unit = DURATION_UNITS.get(match[2]!.toLowerCase())
    if (unit === undefined) {
      return Result.fail(`expected ${expected}; "${match[2]}" is not a unit (ms, s, m, h, d, w), ${got}`)
    }
    if (unit.rank >= lastRank) {
      return Result.fail(`expected ${expected}, with each unit once and the largest first, ${got}`)
    }
    lastRank = unit.rank
    const { numerator, denominator } = decimal(match[1]!)
    const scaled = numerator * unit.millis
    if (scaled % denominator !== 0n) {
      return Result.fail(`expected ${expected}, in whole milliseconds, ${got}`)
    }
    total += scaled / denominator
    position = part.lastIndex
  }
  if (total > MAX_SAFE) return Result.fail(`expected ${expected}, at most ${MAX_DURATION_TEXT}, ${got}`)
  return Result.succeed(Number(total))
}

/** Parses a size; the success is a whole number of bytes. */
export const parseSize = (input: unknown): Result.Result<number, string> =>
  parseAmount(input, 'a size such as "1 GiB", "512MiB", "1.5 GB" or a number of bytes', false)

/** Parses a rate; the success is bytes per second, 0 meaning no limit. */
export const parseRate = (input: unknown): Result.Result<BytesPerSecond, string> => {
  if (Predicate.isString(input) && input.trim().toLowerCase() === "unlimited") return Result.succeed(UNLIMITED)
  return parseAmount(input, 'a rate such as "20 MiB/s", "500 kB/s", or 0 / "unlimited" for no limit', true)
}

/**
 * Parses a bandwidth schedule: an array whose entries are "HH:MM-HH:MM <rate>" strings or
 * `{ from, to, limit }` tables, or one string of entries separated by ";" or "," (the
 * form an environment variable takes). All problems are reported, each naming its entry.
 */
export const parseSchedule = (input: unknown): Result.Result<BandwidthSchedule, string> => {
  const expected = 'a list of windows such as ["01:00-07:00 unlimited", "07:00-01:00 5 MiB/s"]'
  let entries: ReadonlyArray<unknown>
  if (Predicate.isString(input)) {
    if (input.length > MAX_INPUT_LENGTH * 64) return Result.fail(`expected ${expected}, got a text too long`)
    entries = input
      .split(/[;,]/)
      .map((s) => s.trim())
      .filter((s) => s !== "")
  } else if (Array.isArray(input)) {
    entries = input
  } else {
    return Result.fail(`expected ${expected}, got ${describe(input)}`)
  }
  if (entries.length > MAX_WINDOWS) return Result.fail(`expected at most ${MAX_WINDOWS} windows, got ${entries.length}`)
  const problems: Array<string> = []
  const windows: Array<{ readonly window: ScheduleWindow; readonly label: string }> = []
  entries.forEach((entry, i) => {
    const parsed = parseWindow(entry)
    const label = `entry ${i + 1} (${describe(entry)})`
    if (Result.isFailure(parsed)) problems.push(`${label}: ${parsed.failure}`)
    else windows.push({ window: parsed.success, label })
  })
  for (let i = 0; i < windows.length; i++) {
    for (let j = i + 1; j < windows.length; j++) {
      const a = windows[i]!
      const b = windows[j]!
      const overlap = overlapOf(a.window, b.window)
      if (overlap !== undefined) {
        problems.push(
          `${a.label} and ${b.label} overlap from ${formatClock(overlap.start)} to ${formatClock(overlap.end)}; ` +
            "each minute of the day can have only one limit"
        )
      }
    }
  }
  if (problems.length > 0) return Result.fail(problems.join("; "))
  return Result.succeed(windows.map((w) => w.window))
}

// ---------------------------------------------------------------------------------------
// Schemas

/**
 * A schema from what a person writes (text, or a TOML number) to `to`: decoded by `parse`
 * (its message the issue), encoded back by `format` into the form `parse` reads.
 */
const fromHuman = <To extends Schema.Top>(
  to: To,
  parse: (input: unknown) => Result.Result<To["Encoded"], string>,
  format: (value: To["Encoded"]) => unknown
) =>
  Schema.Unknown.pipe(
    Schema.decodeTo(
      to,
      SchemaTransformation.transformEffect<To["Encoded"], unknown>({
        decode: (input) => {
          const result = parse(input)
          return Result.isFailure(result)
            ? Effect.fail(new SchemaIssue.InvalidValue({ message: result.failure }))
            : Effect.succeed(result.success)
        },
        encode: (value) => Effect.succeed(format(value))
      })
    )
  )

/** A human duration (or 0) → milliseconds; encodes back to the compact form ("1h30m"). */
export const HumanMillis = fromHuman(Schema.Int, parseDuration, (millis) => formatDuration(millis))

/** A human size or a number of bytes → bytes (a safe non-negative integer). */
export const HumanSize = fromHuman(Schema.Int, parseSize, (bytes) => formatSize(bytes))

/** A human rate → bytes per second; 0 means no limit. */
export const HumanRate = fromHuman(Schema.Int, parseRate, (rate) => formatRate(rate))

const ScheduleWindowSchema = Schema.Struct({ start: Schema.Int, end: Schema.Int, limit: Schema.Int })

/** The daily bandwidth schedule (see `parseSchedule`); encodes to "HH:MM-HH:MM rate" strings. */
export const BandwidthSchedule = fromHuman(Schema.Array(ScheduleWindowSchema), parseSchedule, (schedule) =>
  schedule.map(formatWindow)
)

// ---------------------------------------------------------------------------------------
// Formatting (for `config check` and logs)

/** Milliseconds → the compact form "1h30m", "250ms", "0s". */
export const formatDuration = (millis: number): string => {
  if (millis === 0) return "0s"
  let rest = millis
  let text = ""
  for (const [suffix, size] of FORMAT_DURATION_UNITS) {
    const count = Math.floor(rest / size)
    if (count > 0) {
      text += `${count}${suffix}`
      rest -= count * size
    }
  }
  return text
}

/** Bytes → the largest IEC unit that divides it exactly ("1 GiB", "1536 KiB"), else bytes. */
export const formatSize = (bytes: number): string => {
  for (const [unit, size] of FORMAT_SIZE_UNITS) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`
  }
  return `${bytes} B`
}

/** Bytes per second → "20 MiB/s", or "unlimited" for 0. */
export const formatRate = (rate: BytesPerSecond): string => (rate === UNLIMITED ? "unlimited" : `${formatSize(rate)}/s`)

/** A minute of the day (0..1440) → "HH:MM" ("24:00" for 1440). */
export const formatClock = (minute: number): string =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`

/** A window → "HH:MM-HH:MM rate", the form `parseSchedule` reads. */
export const formatWindow = (window: ScheduleWindow): string =>
  `${formatClock(window.start)}-${formatClock(window.end)} ${formatRate(window.limit)}`

// ---------------------------------------------------------------------------------------

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
const MAX_INPUT_LENGTH = 64
const MAX_WINDOWS = 48
const MAX_DURATION_TEXT = "about 285,000 years"
const NUMBER_ONLY = /^\d+(?:\.\d+)?$/

const describe = (input: unknown): string => {
  if (input === undefined) return "nothing"
  if (Predicate.isString(input)) {
    return input.length > MAX_INPUT_LENGTH ? `a text of ${input.length} characters` : JSON.stringify(input)
  }
  if (Predicate.isNumber(input) || Predicate.isBoolean(input) || input === null) return String(input)
  if (Array.isArray(input)) return "a list"
  return `a ${typeof input === "object" ? "table" : typeof input}`
}

/** A validated decimal literal as an exact fraction. */
const decimal = (text: string): { readonly numerator: bigint; readonly denominator: bigint } => {
  const [whole = "0", fraction = ""] = text.split(".")
  return { numerator: BigInt(whole + fraction), denominator: 10n ** BigInt(fraction.length) }
}

interface DurationUnit {
  readonly millis: bigint
  /** Larger units have larger ranks; parts must come in decreasing rank. */
  readonly rank: number
}

const durationUnit = (millis: number, rank: number, names: ReadonlyArray<string>) =>
  names.map((name) => [name, { millis: BigInt(millis), rank }] as const)

const DURATION_UNITS: ReadonlyMap<string, DurationUnit> = new Map([
  ...durationUnit(1, 0, ["ms", "msec", "msecs", "milli", "millis", "millisecond", "milliseconds"]),
  ...durationUnit(1000, 1, ["s", "sec", "secs", "second", "seconds"]),
  ...durationUnit(60_000, 2, ["m", "min", "mins", "minute", "minutes"]),
  ...durationUnit(3_600_000, 3, ["h", "hr", "hrs", "hour", "hours"]),
  ...durationUnit(86_400_000, 4, ["d", "day", "days"]),
  ...durationUnit(604_800_000, 5, ["w", "week", "weeks"])
])

const FORMAT_DURATION_UNITS: ReadonlyArray<readonly [string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1000],
  ["ms", 1]
]

const SIZE_UNITS: ReadonlyMap<string, bigint> = new Map([
  ["b", 1n],
  ["byte", 1n],
  ["bytes", 1n],
  ["kb", 1000n],
  ["mb", 1000n ** 2n],
  ["gb", 1000n ** 3n],
  ["tb", 1000n ** 4n],
  ["pb", 1000n ** 5n],
  ["kib", 1024n],
  ["mib", 1024n ** 2n],
  ["gib", 1024n ** 3n],
  ["tib", 1024n ** 4n],
  ["pib", 1024n ** 5n]
])

const AMBIGUOUS_UNITS: ReadonlyMap<string, readonly [string, string]> = new Map([
  ["k", ["KiB", "kB"]],
  ["m", ["MiB", "MB"]],
  ["g", ["GiB", "GB"]],
  ["t", ["TiB", "TB"]],
  ["p", ["PiB", "PB"]]
])

const FORMAT_SIZE_UNITS: ReadonlyArray<readonly [string, number]> = [
  ["PiB", 1024 ** 5],
  ["TiB", 1024 ** 4],
  ["GiB", 1024 ** 3],
  ["MiB", 1024 ** 2],
  ["KiB", 1024]
]

/** A size, or a rate when `perSecond` (then an optional "/s" suffix is accepted). */
const parseAmount = (input: unknown, expected: string, perSecond: boolean): Result.Result<number, string> => {
  if (Predicate.isNumber(input)) {
    return Number.isSafeInteger(input) && input >= 0
      ? Result.succeed(input)
      : Result.fail(`expected ${expected} (a number must be a whole, non-negative count of bytes), got ${input}`)
  }
  if (!Predicate.isString(input)) return Result.fail(`expected ${expected}, got ${describe(input)}`)
  if (input.length > MAX_INPUT_LENGTH)
    return Result.fail(`expected ${expected}, got a text of ${input.length} characters`)
  const got = `got ${JSON.stringify(input)}`
  let text = input.trim()
  if (text.startsWith("-")) return Result.fail(`expected ${expected}, not a negative one, ${got}`)
  if (perSecond) text = text.replace(/\s*\/\s*(?:s|sec|second)$/i, "")
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text)
  if (match === null) return Result.fail(`expected ${expected}, ${got}`)
  const unitText = match[2]!
  const unitKey = unitText.toLowerCase()
  const ambiguous = AMBIGUOUS_UNITS.get(unitKey)
  if (ambiguous !== undefined) {
    return Result.fail(
      `expected ${expected}; "${unitText}" is ambiguous: write ${ambiguous[0]} (powers of 1024) or ${ambiguous[1]} (powers of 1000), ${got}`
    )
  }
  const unit = unitKey === "" ? 1n : SIZE_UNITS.get(unitKey)
  if (unit === undefined) {
    return Result.fail(
      `expected ${expected}; "${unitText}" is not a unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), ${got}`
    )
  }
  const { numerator, denominator } = decimal(match[1]!)
  if (unit === 1n && denominator !== 1n) return Result.fail(`expected ${expected}, in whole bytes, ${got}`)
  const bytes = (numerator * unit) / denominator
  if (bytes > MAX_SAFE) return Result.fail(`expected ${expected}, less than 8 PiB, ${got}`)
  return Result.succeed(Number(bytes))
}

const parseTime = (text: string): number | undefined => {
  const match = /^(\d{1,2}):(\d{2})$/.exec(text.trim())
  if (match === null) return undefined
  const hours = Number(match[1])
  const minutes = Number(match[2])
  if (hours === 24 && minutes === 0) return DAY
  return hours < 24 && minutes < 60 ? hours * 60 + minutes : undefined
}

const TIME_EXPECTED = "a time of day HH:MM from 00:00 to 24:00"

const parseWindow = (entry: unknown): Result.Result<ScheduleWindow, string> => {
  let from: unknown
  let to: unknown
  let limit: unknown
  if (Predicate.isString(entry)) {
    if (entry.length > MAX_INPUT_LENGTH) return Result.fail("too long")
    const match = /^\s*(\S+?)\s*[-–]\s*(\S+)\s+(.+)$/.exec(entry)
    if (match === null) return Result.fail('expected "HH:MM-HH:MM <rate>", e.g. "01:00-07:00 unlimited"')
    ;[, from, to, limit] = match
  } else if (Predicate.isObject(entry) && !Array.isArray(entry)) {
    const fields = new Map<string, unknown>(Object.entries(entry))
    const extra = [...fields.keys()].find((k) => k !== "from" && k !== "to" && k !== "limit")
    if (extra !== undefined) return Result.fail(`unknown key "${extra}" (expected from, to and limit)`)
    from = fields.get("from")
    to = fields.get("to")
    limit = fields.get("limit")
  } else {
    return Result.fail('expected "HH:MM-HH:MM <rate>" or a table { from, to, limit }')
  }
  if (!Predicate.isString(from) || !Predicate.isString(to)) return Result.fail(`from and to must be ${TIME_EXPECTED}`)
  const start = parseTime(from)
  const parsedEnd = parseTime(to)
  if (start === undefined || start === DAY)
    return Result.fail(`"${from}" is not ${TIME_EXPECTED.replace("24:00", "23:59")}`)
  if (parsedEnd === undefined) return Result.fail(`"${to}" is not ${TIME_EXPECTED}`)
  if (parsedEnd === start) return Result.fail("the window is empty (for the whole day write 00:00-24:00)")
  const rate = parseRate(Predicate.isString(limit) ? limit.trim() : limit)
  if (Result.isFailure(rate)) return Result.fail(rate.failure)
  // "22:00-00:00" ends at midnight: store it as 24:00 so every end is 1..1440.
  return Result.succeed({ start, end: parsedEnd === 0 ? DAY : parsedEnd, limit: rate.success })
}
