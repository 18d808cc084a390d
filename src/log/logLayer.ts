/**
 * dlsync's logger, as a layer: every `Effect.log*` of the program goes through it.
 *
 * - On a TTY (format "auto"): one human line per entry, `HH:MM:SS.mmm LEVEL message
 *   key=value…`, colored unless NO_COLOR is set.
 * - Otherwise: one JSON object per line (journald, Docker, Loki): `time`, `level`,
 *   `message`, then `fileId`, `path`, `requestId`, `attempt` when annotated, the other
 *   annotations, `spans` and `cause`. When stderr is journald's stream (JOURNAL_STREAM
 *   names it), each line starts with `<N>` so journald records the priority
 *   (`journalctl -p warning` works).
 * - Lines go to stderr (the Console's `error`): stdout stays for command output
 *   (`status --json`, `config check`).
 * - Every message, annotation and cause passes through the Scrubber, so no secret
 *   reaches a line at any level.
 * - No control character written by others (a release name's `ESC[31m`, a server's answer)
 *   reaches the terminal: in text lines C0 (but the tab), DEL and C1 are written as `\xHH`
 *   (`\n`, `\r`), in JSON lines as `\u00HH`. A line break is only ever the cause's own.
 *
 * Annotate with the shared vocabulary: `Effect.annotateLogs({ fileId, path })`,
 * `{ requestId }`, `{ attempt }`.
 */
import * as Fs from "node:fs"
import { Cause, Console, Effect, Layer, Logger, type LogLevel, References, Schema } from "effect"
import { isSecretKey, makeScrubber, REDACTED, type Scrubber, type ScrubberOptions } from "./Scrubber.ts"

/** `log.level`: the least severe level written. */
export const LogLevelSetting = Schema.Literals(["trace", "debug", "info", "warn", "error", "off"])
export type LogLevelSetting = typeof LogLevelSetting.Type

/** `log.format`: "auto" is text on a TTY, JSON lines otherwise. */
export const LogFormatSetting = Schema.Literals(["auto", "text", "json"])
export type LogFormatSetting = typeof LogFormatSetting.Type

export interface LogOptions {
  readonly level: LogLevelSetting
  readonly format?: LogFormatSetting
  readonly scrubber?: ScrubberOptions
}

/** How lines are rendered; "auto" resolved. */
export interface LogStyle {
  readonly format: "text" | "json"
  /** ANSI colors (text only). */
  readonly colors: boolean
  /** Prefix lines with a syslog priority `<N>` for journald. */
  readonly journald: boolean
}

/** Replaces the default logger and sets the minimum level. Reads the terminal and env when built. */
export const logLayer = (options: LogOptions): Layer.Layer<never> =>
  Layer.unwrap(
    Effect.sync(() =>
      Layer.mergeAll(
        Logger.layer([makeLogger(detectStyle(options.format ?? "auto", process.env), makeScrubber(options.scrubber))]),
        Layer.succeed(References.MinimumLogLevel, MINIMUM_LEVEL[options.level])
      )
    )
  )

/** The logger itself, for a given style and scrubber (the layer's building block; tests use it directly). */
export const makeLogger = (style: LogStyle, scrubber: Scrubber): Logger.Logger<unknown, void> =>
  Logger.make((options) => {
    const console = options.fiber.getRef(Console.Console)
    const entry = toEntry(options, scrubber)
    const line = style.format === "json" ? jsonLine(entry) : textLine(entry, style.colors)
    console.error(style.journald ? `<${PRIORITY[options.logLevel]}>${line}` : line)
  })

/** Resolves "auto" against stderr and the environment (NO_COLOR, JOURNAL_STREAM). */
export const detectStyle = (format: LogFormatSetting, env: Readonly<Record<string, string | undefined>>): LogStyle => {
  const tty = process.stderr.isTTY === true
  const resolved = format === "auto" ? (tty ? "text" : "json") : format
  return {
    format: resolved,
    colors: resolved === "text" && tty && (env.NO_COLOR ?? "") === "",
    journald: isJournalStream(env.JOURNAL_STREAM)
  }
}

// ---------------------------------------------------------------------------------------

const MINIMUM_LEVEL: Readonly<Record<LogLevelSetting, LogLevel.LogLevel>> = {
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error",
  off: "None"
}

/** syslog priorities, as journald reads them from a `<N>` prefix. */
const PRIORITY: Readonly<Record<LogLevel.LogLevel, number>> = {
  All: 7,
  Trace: 7,
  Debug: 7,
  Info: 6,
  Warn: 4,
  Error: 3,
  Fatal: 2,
  None: 6
}

const COLORS: Readonly<Record<LogLevel.LogLevel, string>> = {
  All: "",
  Trace: "90",
  Debug: "34",
  Info: "32",
  Warn: "33",
  Error: "31",
  Fatal: "1;31",
  None: ""
}

/** Annotations promoted to top-level fields, in this order. */
const KNOWN_FIELDS: ReadonlyArray<string> = ["fileId", "path", "requestId", "attempt"]

/** Keys of the entry itself; an annotation with one of these names gets a trailing "_". */
const RESERVED = new Set(["time", "level", "message", "spans", "cause"])

interface Entry {
  readonly date: Date
  readonly level: LogLevel.LogLevel
  readonly message: string
  readonly fields: ReadonlyArray<readonly [string, unknown]>
  readonly spans: ReadonlyArray<readonly [string, number]>
  readonly cause: string | undefined
}

const toEntry = (options: Logger.Options<unknown>, scrubber: Scrubber): Entry => {
  const parts = Array.isArray(options.message) ? options.message : [options.message]
  const message = parts
    .map((part) => {
      const clean = scrubber.value(part)
      return typeof clean === "string" ? clean : safeStringify(clean)
    })
    .join(" ")
  const annotations = options.fiber.getRef(References.CurrentLogAnnotations)
  const known: Array<readonly [string, unknown]> = []
  const others: Array<readonly [string, unknown]> = []
  for (const key of KNOWN_FIELDS) {
    if (Object.hasOwn(annotations, key)) known.push([key, scrubber.value(annotations[key])])
  }
  for (const [key, value] of Object.entries(annotations)) {
    if (KNOWN_FIELDS.includes(key)) continue
    const name = RESERVED.has(key) ? `${key}_` : key
    // The annotation's key is checked too: `annotateLogs({ token })` must not show it.
    others.push([name, isSecretKey(key) && value != null ? REDACTED : scrubber.value(value)])
  }
  const now = options.date.getTime()
  const spans = options.fiber.getRef(References.CurrentLogSpans).map(([label, start]) => [label, now - start] as const)
  return {
    date: options.date,
    level: options.logLevel,
    message,
    fields: [...known, ...others],
    spans,
    cause: options.cause.reasons.length > 0 ? scrubber.text(Cause.pretty(options.cause)) : undefined
  }
}

const jsonLine = (entry: Entry): string => {
  const record: Record<string, unknown> = {
    time: entry.date.toISOString(),
    level: entry.level.toLowerCase(),
    message: entry.message
  }
  for (const [key, value] of entry.fields) {
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true })
  }
  if (entry.spans.length > 0) record.spans = Object.fromEntries(entry.spans)
  if (entry.cause !== undefined) record.cause = entry.cause
  // JSON.stringify escapes C0; DEL and C1 are valid JSON as they are, but not on a terminal.
  return safeStringify(record).replace(DEL_AND_C1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
}

const textLine = (entry: Entry, colors: boolean): string => {
  const paint = (code: string, text: string) => (colors && code !== "" ? `\x1b[${code}m${text}\x1b[0m` : text)
  const time = paint("90", clockTime(entry.date))
  const level = paint(COLORS[entry.level], entry.level.toUpperCase().padEnd(5))
  let line = `${time} ${level} ${escapeControls(entry.message)}`
  for (const [key, value] of entry.fields) line += ` ${paint("2", `${escapeControls(key)}=`)}${textValue(value)}`
  for (const [label, millis] of entry.spans) line += ` ${paint("2", `${escapeControls(label)}=`)}${millis}ms`
  if (entry.cause !== undefined) {
    line += `\n${entry.cause
      .split(/\r?\n/)
      .map((l) => `    ${escapeControls(l)}`)
      .join("\n")}`
  }
  return line
}

const clockTime = (date: Date): string =>
  `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, "0")}`

const pad = (n: number) => String(n).padStart(2, "0")

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g

const DEL_AND_C1 = /[\u007f-\u009f]/g

/**
 * Text on one line and inert on a terminal: a newline must not forge a second entry, an escape
 * sequence must not recolor, retitle or clear the reader's terminal. The tab stays.
 */
const escapeControls = (text: string): string =>
  text.replace(CONTROLS, (c) =>
    c === "\n" ? "\\n" : c === "\r" ? "\\r" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`
  )

const textValue = (value: unknown): string => {
  if (typeof value === "string" && /^[^\s"=\\]+$/.test(value) && escapeControls(value) === value) return value
  // JSON escapes C0; DEL and C1 are escaped after it.
  return escapeControls(typeof value === "string" ? JSON.stringify(value) : safeStringify(value))
}

const safeStringify = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return "[unserializable]"
  }
}

/** Whether stderr is the journald stream named by JOURNAL_STREAM ("device:inode"). */
const isJournalStream = (journalStream: string | undefined): boolean => {
  if (journalStream === undefined || journalStream === "") return false
  try {
    const stat = Fs.fstatSync(2)
    return journalStream === `${stat.dev}:${stat.ino}`
  } catch {
    return false
  }
}
