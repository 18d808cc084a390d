/**
 * Loads the configuration: a TOML file (found by --config, $DLSYNC_CONFIG, the XDG
 * config dir or /etc/dlsync) overlaid with `DLSYNC_<SECTION>_<KEY>` variables, decoded
 * with Schema. Every problem is reported at once, each naming its key and where it came
 * from (`file:line` or the variable), so a user fixes a config in one round trip.
 */
import * as Os from "node:os"
import * as NodePath from "node:path"
import { Duration, Effect, FileSystem, Option, Predicate, type Redacted, Schema, SchemaIssue } from "effect"
import { parse as parseToml, TomlError } from "smol-toml"
import type { LogFormatSetting, LogLevelSetting } from "../log/logLayer.ts"
import { DEFAULT_LISTEN_ADDRESS, type ListenSetting } from "../server/ListenAddress.ts"
import { type AfterLandingSettings, afterLandingSettings, hookProblems } from "./afterLandingSettings.ts"
import { type ArrSettings, arrSettings } from "./arrSettings.ts"
import { ConfigError, type ConfigProblem, configError } from "./ConfigError.ts"
import { type CategorySettings, categoriesOf } from "./categoriesSettings.ts"
import { type CleanupSettings, cleanupSettings } from "./cleanupSettings.ts"
import {
  ConfigSchema,
  DEFAULT_SCOPES,
  type EnvKind,
  isSecretField,
  type SectionName,
  sectionNames,
  sections
} from "./fields.ts"
import { type PostersSettings, postersSettings } from "./postersSettings.ts"
import { type QbittorrentSettings, qbittorrentSettings } from "./qbittorrentSettings.ts"
import { type SabnzbdSettings, sabnzbdSettings } from "./sabnzbdSettings.ts"
import { readSecretFile } from "./secretFile.ts"
import { settingProblems } from "./settingProblems.ts"
import { TRANSFERS_DEFAULTS, type TransfersSettings } from "./transfersSettings.ts"
import { type WebhooksSettings, webhooksSettings } from "./webhooksSettings.ts"

export type Env = Readonly<Record<string, string | undefined>>

/** The decoded configuration, with defaults applied and paths made absolute. */
export interface AppConfig extends AfterLandingSettings, ArrSettings {
  /** The file it was read from, if any (configuration may come from the environment alone). */
  readonly file: string | undefined
  readonly service: {
    readonly base_url: string
    readonly auth_url: string
    readonly api_key: Option.Option<Redacted.Redacted<string>>
    readonly client_id: Option.Option<string>
    readonly scopes: ReadonlyArray<string>
  }
  readonly mirror: {
    readonly root: string
    readonly state_dir: string
    /** Remote folders to mirror, as paths below the account root; empty = all. */
    readonly folders: ReadonlyArray<string>
    /** File kinds to mirror; empty = all. */
    readonly kinds: ReadonlyArray<string>
    readonly include: ReadonlyArray<string>
    readonly exclude: ReadonlyArray<string>
    /** Bytes; null = no limit. */
    readonly max_file_size: number | null
    readonly portable_names: boolean
    readonly on_remote_delete: "trash" | "delete" | "keep"
    readonly trash_days: number
    /** Files one pass may remove; null = the default rule (more than 50 and more than 10 %). */
    readonly max_delete: number | null
    readonly on_local_delete: "respect" | "redownload"
  }
  readonly sync: {
    /** Milliseconds between polls of the change feed. */
    readonly poll_interval: number
    /** Milliseconds between full listings in listing mode (API keys). */
    readonly listing_interval: number
  }
  /** Sizes in bytes, rates in bytes per second (0 = none). */
  readonly transfers: TransfersSettings
  /** `[categories.<name>]`: the intake queue's policy per category (categoriesSettings.ts). */
  readonly categories: Readonly<Record<string, CategorySettings>>
  readonly log: {
    readonly level: LogLevelSetting
    /** "auto": human text on a TTY, JSON lines otherwise. */
    readonly format: LogFormatSetting
  }
  readonly server: {
    /** The health/metrics/status endpoint's address, or "off". */
    readonly listen: ListenSetting
    /** Host names, besides the listen address and loopback, the endpoint answers to (DNS rebinding guard). */
    readonly allowed_hosts: ReadonlyArray<string>
  }
  /** Per-file progress in app state and the device record (OAuth only). */
  readonly app_state: {
    /** This device's name in app state and app storage; the host name when unset. */
    readonly device_name: string
    /** Milliseconds between progress writes of one downloading file. */
    readonly progress_interval: number
    readonly max_requests_per_minute: number
  }
  /** The qBittorrent-compatible API for the *arr apps; null = off. */
  readonly qbittorrent: QbittorrentSettings | null
  /** The SABnzbd-compatible API (sabnzbdSettings.ts). */
  readonly sabnzbd: SabnzbdSettings
  /** `[blackhole] watch`: the folder dropped releases are taken from (absolute), if any. */
  readonly blackhole: { readonly watch: string | undefined }
  /** The receiver of the service's webhooks (src/webhooks/); listen "off" by default. */
  readonly webhooks: WebhooksSettings
  /** Poster sidecars (src/posters/); off by default. */
  readonly posters: PostersSettings
  /** Remote cleanup (src/cleanup/); null: off (the default). */
  readonly cleanup: CleanupSettings | null
}

/** Defaults of the keys that have one (config.example.toml documents each); [transfers]' are in transfersSettings.ts. */
export const DEFAULTS = {
  portable_names: false,
  on_remote_delete: "trash",
  trash_days: 30,
  on_local_delete: "respect",
  poll_interval: 60_000,
  listing_interval: 3_600_000,
  log_level: "info",
  log_format: "auto",
  listen: DEFAULT_LISTEN_ADDRESS,
  progress_interval: 30_000,
  max_requests_per_minute: 300
} as const

export const loadConfig = Effect.fn("loadConfig")(function* (options: {
  readonly path: Option.Option<string>
  readonly env: Env
  readonly cwd: string
}): Effect.fn.Return<AppConfig, ConfigError, FileSystem.FileSystem> {
  const fs = yield* FileSystem.FileSystem
  const file = yield* findConfigFile(options.path, options.env)
  const text = file === undefined ? "" : yield* readText(fs, file)
  const fromFile = yield* parseFile(text, file ?? "")
  const { values, fromEnv } = yield* overlayEnv(fromFile, options.env)
  const origins: Origins = { file, text, fromEnv }

  const decoded = Schema.decodeUnknownExit(ConfigSchema)(values, { onExcessProperty: "error", errors: "all" })
  if (decoded._tag === "Failure") {
    const issue = Option.getOrUndefined(
      Option.flatMap(Option.fromNullishOr(decoded.cause.reasons[0]), (r) =>
        r._tag === "Fail" ? Option.some(r.error.issue) : Option.none()
      )
    )
    const problems = issue ? describeIssue(issue, values, origins) : []
    // Nothing found anywhere: say where dlsync looked rather than list every missing key.
    if (file === undefined && fromEnv.size === 0) return yield* noConfigFound(options.env)
    return yield* new ConfigError({ problems })
  }
  const raw = decoded.value
  const base = file === undefined ? options.cwd : NodePath.dirname(file)
  // "~/…" is the user's home, as in a shell; other relative paths are relative to the file.
  const home = options.env.HOME
  const resolvePath = (key: string, p: string) =>
    home !== undefined && (p === "~" || p.startsWith("~/"))
      ? NodePath.join(home, p.slice(1))
      : NodePath.resolve(fromEnv.has(key) ? options.cwd : base, p)

  /** A `*_file` key's secret (config/secretFile.ts), the path resolved as every path is. */
  const readSecret = (key: string, path: string) =>
    readSecretFile(fs, key, resolvePath(key, path), sourceOf(key, origins))
  const problem = (key: string, message: string) => configError(key, message, sourceOf(key, origins))

  let apiKey = Option.fromNullishOr(raw.service.api_key)
  if (raw.service.api_key_file !== undefined) {
    if (Option.isSome(apiKey)) {
      return yield* configError(
        "service.api_key_file",
        "set service.api_key or service.api_key_file, not both",
        sourceOf("service.api_key_file", origins)
      )
    }
    apiKey = Option.some(yield* readSecret("service.api_key_file", raw.service.api_key_file))
  }

  const sabnzbd = yield* sabnzbdSettings(raw.sabnzbd, { readSecretFile: readSecret, problem })
  const webhooks = yield* webhooksSettings(raw.webhooks, (path) => {
    const absolute = resolvePath("webhooks.secret_file", path)
    return Effect.map(readText(fs, absolute, "webhooks.secret_file"), (text) => ({ path: absolute, text }))
  }).pipe(
    Effect.mapError((e) => (e instanceof ConfigError ? e : configError(e.key, e.message, sourceOf(e.key, origins))))
  )

  const config: AppConfig = {
    file,
    service: {
      base_url: raw.service.base_url.replace(/\/+$/, ""),
      auth_url: (raw.service.auth_url ?? new URL(raw.service.base_url).origin).replace(/\/+$/, ""),
      api_key: apiKey,
      client_id: Option.fromNullishOr(raw.service.client_id),
      scopes: raw.service.scopes ?? DEFAULT_SCOPES
    },
    mirror: {
      root: resolvePath("mirror.root", raw.mirror.root),
      state_dir: raw.mirror.state_dir
        ? resolvePath("mirror.state_dir", raw.mirror.state_dir)
        : defaultStateDir(options.env),
      folders: raw.mirror.folders ?? [],
      kinds: raw.mirror.kinds ?? [],
      include: raw.mirror.include ?? [],
      exclude: raw.mirror.exclude ?? [],
      max_file_size: raw.mirror.max_file_size ?? null,
      portable_names: raw.mirror.portable_names ?? DEFAULTS.portable_names,
      on_remote_delete: raw.mirror.on_remote_delete ?? DEFAULTS.on_remote_delete,
      trash_days: raw.mirror.trash_days ?? DEFAULTS.trash_days,
      max_delete: raw.mirror.max_delete ?? null,
      on_local_delete: raw.mirror.on_local_delete ?? DEFAULTS.on_local_delete
    },
    sync: {
      poll_interval: millisOr(raw.sync?.poll_interval, DEFAULTS.poll_interval),
      listing_interval: millisOr(raw.sync?.listing_interval, DEFAULTS.listing_interval)
    },
    transfers: { ...TRANSFERS_DEFAULTS, ...raw.transfers },
    categories: categoriesOf(raw.categories),
    log: {
      level: raw.log?.level ?? DEFAULTS.log_level,
      format: raw.log?.format ?? DEFAULTS.log_format
    },
    server: { listen: raw.server?.listen ?? DEFAULTS.listen, allowed_hosts: raw.server?.allowed_hosts ?? [] },
    app_state: {
      device_name: raw.app_state?.device_name?.trim() || Os.hostname(),
      progress_interval: millisOr(raw.app_state?.progress_interval, DEFAULTS.progress_interval),
      max_requests_per_minute: raw.app_state?.max_requests_per_minute ?? DEFAULTS.max_requests_per_minute
    },
    qbittorrent: yield* qbittorrentSettings(raw.qbittorrent, readSecret, problem),
    sabnzbd,
    blackhole: {
      watch: raw.blackhole?.watch === undefined ? undefined : resolvePath("blackhole.watch", raw.blackhole.watch)
    },
    webhooks,
    ...afterLandingSettings(raw, resolvePath),
    posters: postersSettings(raw.posters),
    cleanup: cleanupSettings(raw.cleanup),
    ...arrSettings(raw)
  }
  const unworkable = [...settingProblems(config), ...hookProblems(config.hooks, options.env.PATH ?? "")].map((p) => ({
    ...p,
    source: sourceOf(p.key, origins)
  }))
  if (unworkable.length > 0) return yield* new ConfigError({ problems: unworkable })
  return config
})

/** Where the state lives when `mirror.state_dir` is not set: systemd's StateDirectory, else XDG. */
export const defaultStateDir = (env: Env): string =>
  env.STATE_DIRECTORY?.split(":")[0] ||
  NodePath.join(env.XDG_STATE_HOME || NodePath.join(env.HOME ?? "/", ".local", "state"), "dlsync")

/** The files searched, in order, when neither --config nor $DLSYNC_CONFIG names one. */
export const defaultConfigPaths = (env: Env): ReadonlyArray<string> => [
  NodePath.join(env.XDG_CONFIG_HOME || NodePath.join(env.HOME ?? "/", ".config"), "dlsync", "config.toml"),
  "/etc/dlsync/config.toml"
]

/** The error when no configuration was found at all: where dlsync looked, and what to do. */
const noConfigFound = (env: Env): Effect.Effect<never, ConfigError> =>
  Effect.fail(
    configError(
      "",
      `no configuration file found (looked for --config FILE, $DLSYNC_CONFIG, ${defaultConfigPaths(env).join(", ")}); ` +
        "write one from config.example.toml there, or pass --config FILE",
      ""
    )
  )

/** The environment variable that overrides `section.key`. */
export const envName = (section: string, key: string): string => `DLSYNC_${section}_${key}`.toUpperCase()

// ---------------------------------------------------------------------------------------

/** Where values came from, to name the place of a problem. */
interface Origins {
  readonly file: string | undefined
  readonly text: string
  /** "section.key" → the variable that set it. */
  readonly fromEnv: ReadonlyMap<string, string>
}

const millisOr = (value: Duration.Duration | undefined, fallback: number): number =>
  value === undefined ? fallback : Duration.toMillis(value)

/** Environment variables that are not config keys but are dlsync's own. */
const NON_KEY_VARIABLES = new Set(["DLSYNC_CONFIG"])

const findConfigFile = Effect.fnUntraced(function* (path: Option.Option<string>, env: Env) {
  const fs = yield* FileSystem.FileSystem
  const explicit = Option.isSome(path) ? path.value : env.DLSYNC_CONFIG
  if (explicit !== undefined && explicit !== "") {
    const absolute = NodePath.resolve(explicit)
    const exists = yield* fs.exists(absolute).pipe(Effect.orElseSucceed(() => false))
    if (!exists) {
      const via = Option.isSome(path) ? "--config" : "DLSYNC_CONFIG"
      return yield* configError("config", `${absolute} does not exist`, via)
    }
    return absolute
  }
  for (const candidate of defaultConfigPaths(env)) {
    if (yield* fs.exists(candidate).pipe(Effect.orElseSucceed(() => false))) return candidate
  }
  return undefined
})

const readText = (fs: FileSystem.FileSystem, file: string, key = "config") =>
  fs.readFileString(file).pipe(Effect.mapError((e) => configError(key, `cannot read ${file}: ${e.message}`, file)))

const parseFile = (text: string, file: string): Effect.Effect<Record<string, unknown>, ConfigError> =>
  Effect.try({
    try: () => parseToml(text),
    catch: (e) =>
      e instanceof TomlError
        ? configError("config", e.message.split("\n")[0] ?? "invalid TOML", `${file}:${e.line}`)
        : configError("config", String(e), file)
  })

/**
 * Lays the environment over the file's values. `fromEnv` records which keys came from
 * the environment so that errors name the variable.
 * A `DLSYNC_*` variable that names no key is an error: a typo must not pass silently.
 */
const overlayEnv = (
  fromFile: Record<string, unknown>,
  env: Env
): Effect.Effect<{ values: Record<string, unknown>; fromEnv: Map<string, string> }, ConfigError> =>
  Effect.gen(function* () {
    const values: Record<string, unknown> = { ...fromFile }
    const fromEnv = new Map<string, string>()
    const known = new Map<string, [SectionName, string, EnvKind]>()
    for (const section of sectionNames) {
      for (const [key, f] of Object.entries(sections[section])) known.set(envName(section, key), [section, key, f.env])
    }
    const problems: Array<ConfigProblem> = []
    for (const [name, raw] of Object.entries(env)) {
      if (!name.startsWith("DLSYNC_") || NON_KEY_VARIABLES.has(name) || raw === undefined) continue
      const target = known.get(name)
      if (target === undefined) {
        problems.push({ key: name, message: "not a dlsync setting (see config.example.toml)", source: "environment" })
        continue
      }
      const [section, key, kind] = target
      const parsed = parseEnvValue(raw, kind)
      if (parsed === undefined) {
        problems.push({
          key: `${section}.${key}`,
          message: isSecretField([section, key]) ? `expected ${kind}` : `expected ${kind}, got ${JSON.stringify(raw)}`,
          source: name
        })
        continue
      }
      const current = values[section]
      values[section] = { ...(Predicate.isObject(current) ? current : {}), [key]: parsed }
      fromEnv.set(`${section}.${key}`, name)
    }
    if (problems.length > 0) return yield* new ConfigError({ problems })
    return { values, fromEnv }
  })

const parseEnvValue = (raw: string, kind: EnvKind): unknown => {
  switch (kind) {
    case "string":
      return raw
    case "integer":
      return /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined
    case "boolean": {
      const v = raw.trim().toLowerCase()
      return ["1", "true", "yes", "on"].includes(v) ? true : ["0", "false", "no", "off"].includes(v) ? false : undefined
    }
    case "list":
      return raw
        .split(/[,\s]+/)
        .map((s) => s.trim())
        .filter((s) => s !== "")
    case "json":
      try {
        return JSON.parse(raw)
      } catch {
        return undefined
      }
  }
}

const sourceOf = (key: string, origins: Origins): string => {
  const variable = origins.fromEnv.get(key)
  if (variable !== undefined) return variable
  if (origins.file === undefined) return "environment"
  const line = findLine(origins.text, key)
  return line === undefined ? origins.file : `${origins.file}:${line}`
}

/**
 * The 1-based line of `key = …` inside `[section]` of a TOML text, if it is there; for an
 * array of tables, `section.N.key` is the key inside the N-th (from 0) `[[section]]`.
 */
export const findLine = (text: string, dotted: string): number | undefined => {
  const parts = dotted.split(".")
  const entry = parts.length >= 2 && /^\d+$/.test(parts[1]!) ? Number(parts[1]) : undefined
  const section = entry === undefined ? parts[0] : `${parts[0]}#${entry}`
  const key = entry === undefined ? parts[1] : parts[2]
  const lines = text.split("\n")
  const seen = new Map<string, number>()
  let current = ""
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    const header = /^\[(\[?)\s*([^\]\s]+)\s*\]/.exec(line)
    if (header) {
      current = header[2]!.replace(/"/g, "")
      if (header[1] === "[") {
        const n = seen.get(current) ?? 0
        seen.set(current, n + 1)
        current = `${current}#${n}`
      }
      if (key === undefined && current === section) return i + 1
      continue
    }
    if (key !== undefined && current === section && new RegExp(`^"?${escapeRegExp(key)}"?\\s*=`).test(line)) {
      return i + 1
    }
  }
  return undefined
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const FRIENDLY_MESSAGES: Readonly<Record<string, string>> = {
  "Expected no excess property": "unknown key",
  "Missing key": "required key is missing"
}

const describeIssue = (issue: SchemaIssue.Issue, values: unknown, origins: Origins): Array<ConfigProblem> =>
  formatter(issue).issues.map((i) => {
    const path = (i.path ?? []).map((p) => String(Predicate.isObject(p) && "key" in p ? p.key : p))
    const key = path.join(".")
    const source = sourceOf(key, origins)
    const friendly = FRIENDLY_MESSAGES[i.message]
    if (friendly !== undefined) return { key: key || "config", message: friendly, source }
    // A secret's value is never shown, whatever its type: only what was expected.
    if (isSecretField(path)) return { key, message: `${withoutValue(i.message)} (the value is not shown)`, source }
    const value = path.reduce<unknown>((v, k) => (Predicate.hasProperty(v, k) ? v[k] : undefined), values)
    const showValue = value !== undefined && !i.message.includes(", got ")
    const message = showValue ? `${i.message}, got ${JSON.stringify(value)}` : i.message
    return { key: key || "config", message, source }
  })

/** A schema message without the value it quotes ("Expected string, got [...]" → "Expected string"). */
const withoutValue = (message: string): string => message.split(/,? got /)[0] ?? "invalid value"
