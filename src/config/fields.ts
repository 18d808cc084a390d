/**
 * The configuration reference: every section and key dlsync reads, with its schema and
 * how a `DLSYNC_<SECTION>_<KEY>` environment value is read for it.
 *
 * One table drives the TOML decoding, the environment overrides and `config check`, so a
 * key added here is documented, overridable and validated in one move.
 */
import { Record, Schema } from "effect"
import { HOOK_EVENTS } from "../events/MirrorEvent.ts"
import { LogFormatSetting, LogLevelSetting } from "../log/logLayer.ts"
import { ListenSettingFromString } from "../server/ListenAddress.ts"
import { CategoriesSection } from "./categoriesSettings.ts"
import { cleanupFields } from "./cleanupSettings.ts"
import { PathMapSetting } from "./pathMapSetting.ts"
import { postersFields } from "./postersSettings.ts"
import { BandwidthSchedule, HumanDuration, HumanRate, HumanSize } from "./units.ts"
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

const NonEmpty = Schema.String.pipe(Schema.check(Schema.isMinLength(1)))

const Uuid = Schema.String.pipe(Schema.check(Schema.isUUID()))

const PositiveInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(1)))
const NonNegativeInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

export const DEFAULT_SCOPES = ["user:read", "downloads:read", "files:read", "storage:read", "storage:write"] as const

export const sections = {
  service: {
    base_url: field(HttpUrl, "string"),
    auth_url: field(Schema.optionalKey(HttpUrl), "string"),
    api_key: field(Schema.optionalKey(Schema.RedactedFromValue(NonEmpty)), "string", true),
    api_key_file: field(Schema.optionalKey(NonEmpty), "string"),
    client_id: field(Schema.optionalKey(Uuid), "string"),
    scopes: field(Schema.optionalKey(Schema.Array(NonEmpty)), "list")
  },
  mirror: {
    root: field(NonEmpty, "string"),
    state_dir: field(Schema.optionalKey(NonEmpty), "string"),
    folders: field(Schema.optionalKey(Schema.Array(NonEmpty)), "list"),
    kinds: field(Schema.optionalKey(Schema.Array(NonEmpty)), "list"),
    include: field(Schema.optionalKey(Schema.Array(NonEmpty)), "list"),
    exclude: field(Schema.optionalKey(Schema.Array(NonEmpty)), "list"),
    max_file_size: field(Schema.optionalKey(HumanSize), "string"),
    portable_names: field(Schema.optionalKey(Schema.Boolean), "boolean"),
    on_remote_delete: field(Schema.optionalKey(Schema.Literals(["trash", "delete", "keep"])), "string"),
    trash_days: field(Schema.optionalKey(NonNegativeInt), "integer"),
    max_delete: field(Schema.optionalKey(NonNegativeInt), "integer"),
    on_local_delete: field(Schema.optionalKey(Schema.Literals(["respect", "redownload"])), "string")
  },
  sync: {
    poll_interval: field(Schema.optionalKey(HumanDuration), "string"),
    listing_interval: field(Schema.optionalKey(HumanDuration), "string")
  },
  transfers: {
    concurrency: field(Schema.optionalKey(PositiveInt), "integer"),
    segments: field(Schema.optionalKey(PositiveInt), "integer"),
    max_connections: field(
      Schema.optionalKey(PositiveInt.pipe(Schema.check(Schema.isLessThanOrEqualTo(256)))),
      "integer"
    ),
    segment_threshold: field(Schema.optionalKey(HumanSize), "string"),
    bandwidth_limit: field(Schema.optionalKey(HumanRate), "string"),
    // "string", not "list": a window such as "01:00-07:00 5 MiB/s" holds spaces; ";" separates windows.
    bandwidth_schedule: field(Schema.optionalKey(BandwidthSchedule), "string"),
    min_free_space: field(Schema.optionalKey(HumanSize), "string"),
    zip_min_files: field(Schema.optionalKey(NonNegativeInt), "integer"),
    zip_median_below: field(Schema.optionalKey(HumanSize), "string")
  },
  log: {
    level: field(Schema.optionalKey(LogLevelSetting), "string"),
    format: field(Schema.optionalKey(LogFormatSetting), "string")
  },
  server: {
    listen: field(Schema.optionalKey(ListenSettingFromString), "string"),
    allowed_hosts: field(Schema.optionalKey(Schema.Array(NonEmpty)), "list")
  },
  app_state: {
    device_name: field(Schema.optionalKey(NonEmpty), "string"),
    progress_interval: field(Schema.optionalKey(HumanDuration), "string"),
    max_requests_per_minute: field(
      Schema.optionalKey(PositiveInt.pipe(Schema.check(Schema.isLessThanOrEqualTo(1200)))),
      "integer"
    )
  },
  qbittorrent: {
    listen: field(Schema.optionalKey(ListenSettingFromString), "string"),
    username: field(Schema.optionalKey(NonEmpty), "string"),
    password: field(Schema.optionalKey(Schema.RedactedFromValue(NonEmpty)), "string", true),
    password_file: field(Schema.optionalKey(NonEmpty), "string"),
    path_map: field(Schema.optionalKey(PathMapSetting), "json")
  },
  sabnzbd: {
    listen: field(Schema.optionalKey(ListenSettingFromString), "string"),
    api_key: field(Schema.optionalKey(Schema.RedactedFromValue(NonEmpty)), "string", true),
    api_key_file: field(Schema.optionalKey(NonEmpty), "string"),
    path_map: field(Schema.optionalKey(PathMapSetting), "json"),
    categories: field(Schema.optionalKey(Schema.Array(NonEmpty)), "list")
  },
  blackhole: {
    watch: field(Schema.optionalKey(NonEmpty), "string")
  },
  webhooks: {
    listen: field(Schema.optionalKey(ListenSettingFromString), "string"),
    secret: field(Schema.optionalKey(WebhookSecrets), "list", true),
    secret_file: field(Schema.optionalKey(NonEmpty), "string"),
    public_url: field(Schema.optionalKey(PublicHttpsUrl), "string")
  },
  jellyfin: {
    url: field(HttpUrl, "string"),
    api_key: field(Schema.RedactedFromValue(NonEmpty), "string", true),
    path_map: field(Schema.optionalKey(PathMapSetting), "json")
  },
  plex: {
    url: field(HttpUrl, "string"),
    token: field(Schema.RedactedFromValue(NonEmpty), "string", true),
    path_map: field(Schema.optionalKey(PathMapSetting), "json")
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
    command: field(Schema.Array(NonEmpty).pipe(Schema.check(Schema.isMinLength(1))), "list"),
    timeout: field(Schema.optionalKey(HumanDuration), "string")
  },
  notify: {
    url: field(Schema.RedactedFromValue(NotifyUrl), "string", true),
    type: field(Schema.optionalKey(Schema.Literals(["webhook", "ntfy", "discord", "apprise"])), "string"),
    events: field(Schema.optionalKey(Schema.Array(HookEvent)), "list"),
    level: field(Schema.optionalKey(Schema.Literals(["info", "warn", "error"])), "string"),
    secret: field(Schema.optionalKey(Schema.RedactedFromValue(NonEmpty)), "string", true)
  }
} as const

/** `[sonarr]`, `[radarr]`, `[lidarr]`, `[readarr]` (config/arrSettings.ts): the app's URL, its API key, how it sees the mirror's paths. */
function arrSection() {
  return {
    url: field(HttpUrl, "string"),
    api_key: field(Schema.RedactedFromValue(NonEmpty), "string", true),
    path_map: field(Schema.optionalKey(PathMapSetting), "json")
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

export const ConfigSchema = Schema.Struct({
  service: sectionSchema(sections.service),
  mirror: sectionSchema(sections.mirror),
  sync: Schema.optionalKey(sectionSchema(sections.sync)),
  transfers: Schema.optionalKey(sectionSchema(sections.transfers)),
  log: Schema.optionalKey(sectionSchema(sections.log)),
  server: Schema.optionalKey(sectionSchema(sections.server)),
  app_state: Schema.optionalKey(sectionSchema(sections.app_state)),
  qbittorrent: Schema.optionalKey(sectionSchema(sections.qbittorrent)),
  sabnzbd: Schema.optionalKey(sectionSchema(sections.sabnzbd)),
  blackhole: Schema.optionalKey(sectionSchema(sections.blackhole)),
  webhooks: Schema.optionalKey(sectionSchema(sections.webhooks)),
  jellyfin: Schema.optionalKey(sectionSchema(sections.jellyfin)),
  plex: Schema.optionalKey(sectionSchema(sections.plex)),
  sonarr: Schema.optionalKey(sectionSchema(sections.sonarr)),
  radarr: Schema.optionalKey(sectionSchema(sections.radarr)),
  lidarr: Schema.optionalKey(sectionSchema(sections.lidarr)),
  readarr: Schema.optionalKey(sectionSchema(sections.readarr)),
  hooks: Schema.optionalKey(Schema.Array(sectionSchema(tableArrays.hooks))),
  notify: Schema.optionalKey(Schema.Array(sectionSchema(tableArrays.notify))),
  categories: Schema.optionalKey(CategoriesSection),
  posters: Schema.optionalKey(sectionSchema(sections.posters)),
  cleanup: Schema.optionalKey(sectionSchema(sections.cleanup))
})
