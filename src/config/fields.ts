/**
 * The configuration reference: every section and key dlsync reads, with its schema (which
 * holds the key's default: keySchemas.ts) and how a `DLSYNC_<SECTION>_<KEY>` environment
 * value is read for it.
 *
 * One table drives the TOML decoding, the defaults, the environment overrides and `config
 * check`, so a key added here is documented, overridable and validated in one move.
 * config.example.toml documents each key and its default.
 */
import * as Os from "node:os"
import { Record, Schema, SchemaTransformation } from "effect"
import { HOOK_EVENTS, type HookEventName } from "../events/MirrorEvent.ts"
import { LogFormatSetting, LogLevelSetting } from "../log/logLayer.ts"
import { DEFAULT_LISTEN_ADDRESS, ListenSettingFromString } from "../server/ListenAddress.ts"
import { CategoriesSection } from "./categoriesSettings.ts"
import { cleanupFields } from "./cleanupSettings.ts"
import { defaulted, defaultedBy, defaultedSection, NonEmpty, optional, orNull } from "./keySchemas.ts"
import { PathMapSetting } from "./pathMapSetting.ts"
import { postersFields } from "./postersSettings.ts"
import { PasswordHashText } from "./serverSettings.ts"
import { BandwidthSchedule, HumanMillis, HumanRate, HumanSize } from "./units.ts"
import { PublicHttpsUrl, WebhookSecrets } from "./webhooksSettings.ts"

/** How an environment variable's text becomes a value for the key. */
export type EnvKind = "string" | "integer" | "boolean" | "list" | "json"

export interface Field<S extends Schema.Top = Schema.Top> {
  readonly schema: S
  readonly env: EnvKind
  readonly secret?: true
}

const field = <S extends Schema.Top>(schema: S, env: EnvKind, secret?: true): Field<S> =>
  secret ? { schema, env, secret } : { schema, env }

const HttpUrl = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) => /^https?:\/\/[^/]/i.test(s) && URL.canParse(s), {
      expected: "an http:// or https:// URL"
    })
  )
)

const Uuid = Schema.String.pipe(Schema.check(Schema.isUUID()))

const MiB = 1024 * 1024

const PositiveInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(1)))
const NonNegativeInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

export const DEFAULT_SCOPES = ["user:read", "downloads:read", "files:read", "storage:read", "storage:write"] as const

/**
 * The default ports, on this host only. None is a port of the programs dlsync runs beside:
 * Sonarr 8989, Radarr 7878, Lidarr 8686, Readarr 8787, Prowlarr 9696, Bazarr 6767,
 * Overseerr/Jellyseerr 5055, Jellyfin 8096/8920, Plex 32400, qBittorrent 8080, SABnzbd
 * 8080/9090 (test/config/imageEnvironment.test.ts holds them to that list). The emulator's
 * (cli/emulator.ts) follow them: 7670, its CDN 7671.
 */
export const DEFAULT_PORTS = {
  server: DEFAULT_LISTEN_ADDRESS.port,
  webhooks: 7661,
  qbittorrent: 7662,
  sabnzbd: 7663
} as const

/** What a `[[notify]]` target gets unless its `events` say otherwise: failures and held deletions, not every file. */
export const NOTIFY_EVENTS_DEFAULT: ReadonlyArray<HookEventName> = ["file_failed", "release_failed", "deletion_held"]

/** `app_state.device_name`: trimmed; blank, the host name. */
const DeviceName = NonEmpty.pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: deviceName, encode: (s) => s }))
)

const PathMapOrNone = defaulted(PathMapSetting, [])
const Names = Schema.Array(NonEmpty)

export const sections = {
  service: {
    base_url: field(HttpUrl, "string"),
    auth_url: field(optional(HttpUrl), "string"),
    api_key: field(optional(Schema.RedactedFromValue(NonEmpty)), "string", true),
    api_key_file: field(optional(NonEmpty), "string"),
    client_id: field(Schema.OptionFromOptionalKey(Uuid), "string"),
    scopes: field(defaulted(Names, DEFAULT_SCOPES), "list")
  },
  mirror: {
    root: field(NonEmpty, "string"),
    state_dir: field(optional(NonEmpty), "string"),
    /** Remote folders to mirror, as paths below the account root; empty = all. */
    folders: field(defaulted(Names, []), "list"),
    /** File kinds to mirror; empty = all. */
    kinds: field(defaulted(Names, []), "list"),
    include: field(defaulted(Names, []), "list"),
    exclude: field(defaulted(Names, []), "list"),
    /** Bytes; null = no limit. */
    max_file_size: field(orNull(HumanSize), "string"),
    portable_names: field(defaulted(Schema.Boolean, false), "boolean"),
    on_remote_delete: field(defaulted(Schema.Literals(["trash", "delete", "keep"]), "trash"), "string"),
    trash_days: field(defaulted(NonNegativeInt, 30), "integer"),
    /** Files one pass may remove; null = the default rule (more than 50 and more than 10 %). */
    max_delete: field(orNull(NonNegativeInt), "integer"),
    on_local_delete: field(defaulted(Schema.Literals(["respect", "redownload"]), "respect"), "string")
  },
  sync: {
    /** Milliseconds between polls of the change feed. */
    poll_interval: field(defaulted(HumanMillis, 60_000), "string"),
    /** Milliseconds between full listings in listing mode (API keys). */
    listing_interval: field(defaulted(HumanMillis, 3_600_000), "string")
  },
  /** Sizes in bytes, rates in bytes per second (0 = none). */
  transfers: {
    concurrency: field(defaulted(PositiveInt, 3), "integer"),
    segments: field(defaulted(PositiveInt, 4), "integer"),
    max_connections: field(defaulted(PositiveInt.pipe(Schema.check(Schema.isLessThanOrEqualTo(256))), 16), "integer"),
    segment_threshold: field(defaulted(HumanSize, 64 * MiB), "string"),
    bandwidth_limit: field(defaulted(HumanRate, 0), "string"),
    // "string", not "list": a window such as "01:00-07:00 5 MiB/s" holds spaces; ";" separates windows.
    bandwidth_schedule: field(defaulted(BandwidthSchedule, []), "string"),
    min_free_space: field(defaulted(HumanSize, 1024 * MiB), "string"),
    /** A folder's small files come as ZIP archives when at least this many (0 = never) ... */
    zip_min_files: field(defaulted(NonNegativeInt, 32), "integer"),
    /** ... with a median size below this. */
    zip_median_below: field(defaulted(HumanSize, 4 * MiB), "string")
  },
  log: {
    level: field(defaulted(LogLevelSetting, "info"), "string"),
    /** "auto": human text on a TTY, JSON lines otherwise. */
    format: field(defaulted(LogFormatSetting, "auto"), "string")
  },
  server: {
    /** The health/metrics/status endpoint's address, or "off". */
    listen: field(defaulted(ListenSettingFromString, DEFAULT_LISTEN_ADDRESS), "string"),
    /** Host names, besides the listen address and loopback, the endpoint answers to (DNS rebinding guard). */
    allowed_hosts: field(defaulted(Names, []), "list"),
    /** The web page's password beyond loopback, in a file of its own (serverSettings.ts). */
    password_file: field(optional(NonEmpty), "string"),
    /** …or its scrypt hash (server/passwordHash.ts); neither: generated at the first start. */
    password_hash: field(optional(Schema.RedactedFromValue(PasswordHashText)), "string", true)
  },
  /** Per-file progress in app state and the device record (OAuth only). */
  app_state: {
    /** This device's name in app state and app storage; the host name when unset. */
    device_name: field(defaultedBy(DeviceName, Os.hostname), "string"),
    /** Milliseconds between progress writes of one downloading file. */
    progress_interval: field(defaulted(HumanMillis, 30_000), "string"),
    max_requests_per_minute: field(
      defaulted(PositiveInt.pipe(Schema.check(Schema.isLessThanOrEqualTo(1200))), 300),
      "integer"
    ),
    /** How long `run --once` goes on writing queued entries after its pass (the rest stays queued). */
    once_wait: field(defaulted(HumanMillis, 30_000), "string")
  },
  qbittorrent: {
    listen: field(defaulted(ListenSettingFromString, loopback(DEFAULT_PORTS.qbittorrent)), "string"),
    username: field(optional(NonEmpty), "string"),
    password: field(optional(Schema.RedactedFromValue(NonEmpty)), "string", true),
    password_file: field(optional(NonEmpty), "string"),
    path_map: field(PathMapOrNone, "json")
  },
  sabnzbd: {
    // Unset: loopback(DEFAULT_PORTS.sabnzbd) with an API key, off without (sabnzbdSettings.ts).
    listen: field(optional(ListenSettingFromString), "string"),
    api_key: field(optional(Schema.RedactedFromValue(NonEmpty)), "string", true),
    api_key_file: field(optional(NonEmpty), "string"),
    path_map: field(PathMapOrNone, "json"),
    categories: field(defaulted(Names, []), "list")
  },
  blackhole: {
    watch: field(optional(NonEmpty), "string")
  },
  webhooks: {
    listen: field(defaulted(ListenSettingFromString, "off"), "string"),
    secret: field(optional(WebhookSecrets), "list", true),
    secret_file: field(optional(NonEmpty), "string"),
    public_url: field(optional(PublicHttpsUrl), "string")
  },
  jellyfin: {
    url: field(HttpUrl, "string"),
    api_key: field(Schema.RedactedFromValue(NonEmpty), "string", true),
    path_map: field(PathMapOrNone, "json")
  },
  plex: {
    url: field(HttpUrl, "string"),
    token: field(Schema.RedactedFromValue(NonEmpty), "string", true),
    path_map: field(PathMapOrNone, "json")
  },
  posters: postersFields,
  cleanup: cleanupFields,
  sonarr: arrSection(),
  radarr: arrSection(),
  lidarr: arrSection(),
  readarr: arrSection()
} as const

const NotifyUrl = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) => /^(https?|ntfys?):\/\/[^/]/i.test(s) && URL.canParse(s), {
      expected: "an http://, https:// or ntfy:// URL"
    })
  )
)
const HookEvent = Schema.Literals(HOOK_EVENTS)

/**
 * Sections that are arrays of tables (`[[hooks]]`): each entry has these keys. They have no
 * environment overrides (an entry has no name to put in a variable).
 */
export const tableArrays = {
  hooks: {
    event: field(HookEvent, "string"),
    /** argv: the program (absolute, or found on PATH when it names no folder) and its arguments. */
    command: field(Schema.Array(NonEmpty).pipe(Schema.check(Schema.isMinLength(1))), "list"),
    /** Milliseconds. */
    timeout: field(defaulted(HumanMillis, 30_000), "string")
  },
  notify: {
    url: field(Schema.RedactedFromValue(NotifyUrl), "string", true),
    /** Unset: told by the URL (domain/notifyTarget.ts). */
    type: field(optional(Schema.Literals(["webhook", "ntfy", "discord", "apprise"])), "string"),
    events: field(defaulted(Schema.Array(HookEvent), NOTIFY_EVENTS_DEFAULT), "list"),
    level: field(defaulted(Schema.Literals(["info", "warn", "error"]), "info"), "string"),
    secret: field(orNull(Schema.RedactedFromValue(NonEmpty)), "string", true)
  }
} as const

/** `[sonarr]`, `[radarr]`, `[lidarr]`, `[readarr]` (config/arrSettings.ts): the app's URL, its API key, how it sees the mirror's paths. */
function arrSection() {
  return {
    url: field(HttpUrl, "string"),
    api_key: field(Schema.RedactedFromValue(NonEmpty), "string", true),
    path_map: field(PathMapOrNone, "json")
  }
}

export type SectionName = keyof typeof sections
export const sectionNames: ReadonlyArray<SectionName> = Record.keys(sections)

/**
 * Whether `section.key` (or anything below it, such as `service.api_key.0`) holds a secret:
 * a field declared with `secret`. Error messages never echo such a value, whatever its type.
 */
export const isSecretField = (path: ReadonlyArray<string>): boolean =>
  secretFields.has((Object.hasOwn(tableArrays, path[0] ?? "") ? [path[0], path[2]] : path.slice(0, 2)).join("."))

const secretsOf = (name: string, fields: Record<string, Field>) =>
  Object.entries(fields)
    .filter(([, f]) => f.secret === true)
    .map(([key]) => `${name}.${key}`)

const secretFields: ReadonlySet<string> = new Set([
  ...sectionNames.flatMap((section) => secretsOf(section, sections[section])),
  ...Object.entries(tableArrays).flatMap(([name, fields]) => secretsOf(name, fields))
])
/** The schema of one section, built from its fields. */
const sectionSchema = <F extends Record<string, Field>>(fields: F) =>
  Schema.Struct(Record.map(fields, (f) => f.schema) as { [K in keyof F]: F[K]["schema"] })

/**
 * The whole file, decoded: every key's default filled in. A section that turns something
 * on (`[qbittorrent]`, `[jellyfin]`, `[sonarr]`, …) stays absent when it is not written.
 */
export const ConfigSchema = Schema.Struct({
  service: sectionSchema(sections.service),
  mirror: sectionSchema(sections.mirror),
  sync: defaultedSection(sectionSchema(sections.sync), {}),
  transfers: defaultedSection(sectionSchema(sections.transfers), {}),
  log: defaultedSection(sectionSchema(sections.log), {}),
  server: defaultedSection(sectionSchema(sections.server), {}),
  app_state: defaultedSection(sectionSchema(sections.app_state), {}),
  qbittorrent: optional(sectionSchema(sections.qbittorrent)),
  sabnzbd: optional(sectionSchema(sections.sabnzbd)),
  blackhole: defaultedSection(sectionSchema(sections.blackhole), {}),
  webhooks: defaultedSection(sectionSchema(sections.webhooks), {}),
  jellyfin: optional(sectionSchema(sections.jellyfin)),
  plex: optional(sectionSchema(sections.plex)),
  sonarr: optional(sectionSchema(sections.sonarr)),
  radarr: optional(sectionSchema(sections.radarr)),
  lidarr: optional(sectionSchema(sections.lidarr)),
  readarr: optional(sectionSchema(sections.readarr)),
  hooks: defaulted(Schema.Array(sectionSchema(tableArrays.hooks)), []),
  notify: defaulted(Schema.Array(sectionSchema(tableArrays.notify)), []),
  categories: defaulted(CategoriesSection, {}),
  posters: defaultedSection(sectionSchema(sections.posters), {}),
  cleanup: defaultedSection(sectionSchema(sections.cleanup), {})
})

/** The decoded file: each section's keys with their defaults. */
export type DecodedConfig = typeof ConfigSchema.Type

// ---------------------------------------------------------------------------------------

function loopback(port: number) {
  return { host: "127.0.0.1", port }
}

function deviceName(name: string): string {
  return name.trim() || Os.hostname()
}
