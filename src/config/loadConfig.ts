/**
 * Loads the configuration: a TOML file (found by --config, $DLSYNC_CONFIG, the XDG config
 * dir or /etc/dlsync) overlaid with `DLSYNC_<SECTION>_<KEY>` variables (configSources.ts),
 * decoded with the schema of fields.ts, which fills in every default. Every problem is
 * reported at once, in the file's line order, each naming its key and where it came from
 * (`file:line` or the variable), so a user fixes a config in one round trip.
 */
import * as NodePath from "node:path"
import { Effect, FileSystem, Option, type Redacted, Schema } from "effect"
import { type AfterLandingSettings, afterLandingSettings, hookProblems } from "./afterLandingSettings.ts"
import { type ArrSettings, arrSettings } from "./arrSettings.ts"
import { ConfigError, configError } from "./ConfigError.ts"
import { type CleanupSettings, cleanupSettings } from "./cleanupSettings.ts"
import { describeIssue, inLineOrder } from "./configProblems.ts"
import {
  defaultConfigPaths,
  type Env,
  type EnvOverride,
  findConfigFile,
  type Origins,
  overlayEnv,
  parseFile,
  readText,
  sourceOf
} from "./configSources.ts"
import { ConfigSchema, type DecodedConfig } from "./fields.ts"
import { type QbittorrentSettings, qbittorrentSettings } from "./qbittorrentSettings.ts"
import { type SabnzbdSettings, sabnzbdSettings } from "./sabnzbdSettings.ts"
import { readSecretFile } from "./secretFile.ts"
import { type ServerSettings, serverSettings } from "./serverSettings.ts"
import { settingProblems } from "./settingProblems.ts"
import type { WebhooksSettings } from "./webhooksSettings.ts"
import { webhooksSettings } from "./webhooksSettings.ts"

export type { Env, EnvOverride } from "./configSources.ts"
export { defaultConfigPaths, envName } from "./configSources.ts"

/**
 * The configuration as the program uses it. The sections that are plain settings are the
 * schema's decoded type (fields.ts: each key's value or its default); the others are what
 * their module makes of theirs: a secret read from its file, a feature on or off (null).
 * Paths are absolute.
 */
export interface AppConfig
  extends Pick<DecodedConfig, "sync" | "transfers" | "categories" | "log" | "app_state" | "posters">,
    AfterLandingSettings,
    ArrSettings {
  /** The file it was read from, if any (configuration may come from the environment alone). */
  readonly file: string | undefined
  /** Keys the file sets that a `DLSYNC_*` variable sets again (the variable wins). */
  readonly overrides: ReadonlyArray<EnvOverride>
  readonly service: Omit<DecodedConfig["service"], "api_key" | "api_key_file" | "auth_url"> & {
    /** `base_url`'s origin unless set. */
    readonly auth_url: string
    /** `api_key`, or the content of `api_key_file`. */
    readonly api_key: Option.Option<Redacted.Redacted<string>>
  }
  /** The state directory is `mirror.state_dir`, else systemd's or XDG's (`defaultStateDir`). */
  readonly mirror: Omit<DecodedConfig["mirror"], "state_dir"> & { readonly state_dir: string }
  /** The daemon's HTTP endpoint and the web page's password (serverSettings.ts). */
  readonly server: ServerSettings
  /** The qBittorrent-compatible API for the *arr apps; null = off. */
  readonly qbittorrent: QbittorrentSettings | null
  /** The SABnzbd-compatible API (sabnzbdSettings.ts). */
  readonly sabnzbd: SabnzbdSettings
  /** `[blackhole] watch`: the folder dropped releases are taken from (absolute), if any. */
  readonly blackhole: { readonly watch: string | undefined }
  /** The receiver of the service's webhooks (src/webhooks/); listen "off" by default. */
  readonly webhooks: WebhooksSettings
  /** Remote cleanup (src/cleanup/); null: off (the default). */
  readonly cleanup: CleanupSettings | null
}

export const loadConfig = Effect.fn("loadConfig")(function* (options: {
  readonly path: Option.Option<string>
  readonly env: Env
  readonly cwd: string
}): Effect.fn.Return<AppConfig, ConfigError, FileSystem.FileSystem> {
  const fs = yield* FileSystem.FileSystem
  const file = yield* findConfigFile(options.path, options.env)
  const text = file === undefined ? "" : yield* readText(fs, file)
  const fromFile = yield* parseFile(text, file ?? "")
  const { values, fromEnv, overrides } = yield* overlayEnv(fromFile, options.env, { path: file, text })
  const origins: Origins = { file, text, fromEnv }

  const decoded = Schema.decodeUnknownExit(ConfigSchema)(values, { onExcessProperty: "error", errors: "all" })
  if (decoded._tag === "Failure") {
    const issue = Option.getOrUndefined(
      Option.flatMap(Option.fromNullishOr(decoded.cause.reasons[0]), (r) =>
        r._tag === "Fail" ? Option.some(r.error.issue) : Option.none()
      )
    )
    // Nothing found anywhere: say where dlsync looked rather than list every missing key.
    if (file === undefined && fromEnv.size === 0) return yield* noConfigFound(options.env)
    return yield* new ConfigError({ problems: issue ? describeIssue(issue, values, origins) : [] })
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
      return yield* problem("service.api_key_file", "set service.api_key or service.api_key_file, not both")
    }
    apiKey = Option.some(yield* readSecret("service.api_key_file", raw.service.api_key_file))
  }

  const sabnzbd = yield* sabnzbdSettings(raw.sabnzbd, { readSecretFile: readSecret, problem })
  const webhooks = yield* webhooksSettings(raw.webhooks, (path) => {
    const absolute = resolvePath("webhooks.secret_file", path)
    return Effect.map(
      readText(fs, absolute, "webhooks.secret_file", sourceOf("webhooks.secret_file", origins)),
      (content) => ({ path: absolute, text: content })
    )
  }).pipe(Effect.mapError((e) => (e instanceof ConfigError ? e : problem(e.key, e.message))))

  const { service, mirror } = raw
  const config: AppConfig = {
    file,
    overrides,
    service: {
      base_url: service.base_url.replace(/\/+$/, ""),
      auth_url: (service.auth_url ?? new URL(service.base_url).origin).replace(/\/+$/, ""),
      api_key: apiKey,
      client_id: service.client_id,
      scopes: service.scopes
    },
    mirror: {
      ...mirror,
      root: resolvePath("mirror.root", mirror.root),
      state_dir: mirror.state_dir ? resolvePath("mirror.state_dir", mirror.state_dir) : defaultStateDir(options.env)
    },
    sync: raw.sync,
    transfers: raw.transfers,
    categories: raw.categories,
    log: raw.log,
    server: yield* serverSettings(raw.server, readSecret, problem),
    app_state: raw.app_state,
    qbittorrent: yield* qbittorrentSettings(raw.qbittorrent, readSecret, problem),
    sabnzbd,
    blackhole: {
      watch: raw.blackhole.watch === undefined ? undefined : resolvePath("blackhole.watch", raw.blackhole.watch)
    },
    webhooks,
    ...afterLandingSettings(raw, resolvePath),
    posters: raw.posters,
    cleanup: cleanupSettings(raw.cleanup),
    ...arrSettings(raw)
  }
  const unworkable = [...settingProblems(config), ...hookProblems(config.hooks, options.env.PATH ?? "")].map((p) => ({
    ...p,
    source: sourceOf(p.key, origins)
  }))
  if (unworkable.length > 0) return yield* new ConfigError({ problems: inLineOrder(unworkable) })
  return config
})

/** Where the state lives when `mirror.state_dir` is not set: systemd's StateDirectory, else XDG. */
export const defaultStateDir = (env: Env): string =>
  env.STATE_DIRECTORY?.split(":")[0] ||
  NodePath.join(env.XDG_STATE_HOME || NodePath.join(env.HOME ?? "/", ".local", "state"), "dlsync")

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
