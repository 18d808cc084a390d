/**
 * `dlsync config check [--online]` (cli/config.ts): validates the configuration, checks what
 * `run` needs (runPrerequisites.ts; with --online, one request to the service with the
 * credential) and prints the effective settings, secrets redacted. Any problem: exit 78
 * (77, 75 for a refused credential or an unreachable service with --online).
 */
import { Console, Effect, Layer, Option, Predicate } from "effect"
import { stringify as stringifyToml } from "smol-toml"
import { ApiClient } from "../api/ApiClient.ts"
import { ApiObserver } from "../api/ApiHttp.ts"
import { commandConfig } from "../cli/commandConfig.ts"
import { afterLandingView } from "../config/afterLandingSettings.ts"
import { arrView } from "../config/arrSettings.ts"
import { ConfigError } from "../config/ConfigError.ts"
import { configNotices } from "../config/configNotices.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { formatDuration, formatRate, formatSize, formatWindow } from "../config/units.ts"
import { apiLayer } from "../layers/service.ts"
import { formatListen } from "../server/ListenAddress.ts"
import { checkRunPrerequisites } from "./runPrerequisites.ts"

export const configCheck = Effect.fn("config.check")(function* ({
  json,
  online
}: {
  readonly json: boolean
  readonly online: boolean
}) {
  const config = yield* commandConfig
  const { problems, credential } = yield* checkRunPrerequisites(config)
  if (problems.length > 0) return yield* new ConfigError({ problems })
  const account = online
    ? Option.some(
        yield* ApiClient.use((client) => client.account.get).pipe(
          Effect.provide(apiLayer(config).pipe(Layer.provide(ApiObserver.none)))
        )
      )
    : Option.none()
  const view = effectiveView(config)
  if (json) {
    yield* Console.log(JSON.stringify(view, null, 2))
    return
  }
  yield* Console.log(`# configuration OK (${config.file ?? "from the environment only"})`)
  yield* Console.log(
    `# mirror root and state directory writable; credential: ${Option.getOrElse(credential, () => "none")}`
  )
  if (Option.isSome(account)) {
    yield* Console.log(`# service reached: signed in as ${account.value.name} <${account.value.email}>`)
  }
  for (const notice of configNotices(config)) yield* Console.log(`# note: ${notice}`)
  yield* Console.log(`\n${settingsToml(view.settings)}`)
})

/**
 * The effective settings as TOML (the form of config.toml): a key not set is a comment,
 * `[[hooks]]` and `[[notify]]` are arrays of tables.
 */
export const settingsToml = (settings: Readonly<Record<string, unknown>>): string =>
  Object.entries(settings)
    .map(([section, values]) => {
      if (Array.isArray(values)) return stringifyToml({ [section]: values }).trim()
      const entries = Object.entries(Predicate.isObject(values) ? values : {})
      const set = Object.fromEntries(entries.filter(([, value]) => value !== null))
      const unset = entries.filter(([, value]) => value === null).map(([key]) => `# ${key}: not set`)
      return [`[${section}]`, stringifyToml(set).trim(), ...unset].filter((line) => line !== "").join("\n")
    })
    .join("\n\n")

/**
 * The printable form of a configuration, in the units a user writes: secrets replaced by a
 * marker, unset optional keys as null, sizes, rates and durations in human form.
 */
export const effectiveView = (config: AppConfig) => {
  const orNull = <A>(o: Option.Option<A>) => Option.getOrNull(o)
  const { service, mirror, sync, transfers } = config
  return {
    file: config.file ?? null,
    settings: {
      service: {
        base_url: service.base_url,
        auth_url: service.auth_url,
        api_key: Option.isSome(service.api_key) ? "<redacted>" : null,
        client_id: orNull(service.client_id),
        scopes: service.scopes
      },
      mirror: {
        ...mirror,
        max_file_size: mirror.max_file_size === null ? null : formatSize(mirror.max_file_size)
      },
      sync: {
        poll_interval: formatDuration(sync.poll_interval),
        listing_interval: formatDuration(sync.listing_interval)
      },
      transfers: {
        ...transfers,
        segment_threshold: formatSize(transfers.segment_threshold),
        bandwidth_limit: formatRate(transfers.bandwidth_limit),
        bandwidth_schedule: transfers.bandwidth_schedule.map(formatWindow),
        min_free_space: formatSize(transfers.min_free_space)
      },
      log: { level: config.log.level, format: config.log.format },
      server: { listen: formatListen(config.server.listen), allowed_hosts: config.server.allowed_hosts },
      app_state: {
        device_name: config.app_state.device_name,
        progress_interval: formatDuration(config.app_state.progress_interval),
        max_requests_per_minute: config.app_state.max_requests_per_minute
      },
      qbittorrent:
        config.qbittorrent === null
          ? { listen: "off" }
          : {
              listen: formatListen(config.qbittorrent.listen),
              username: config.qbittorrent.username,
              password: "<redacted>",
              path_map: config.qbittorrent.path_map
            },
      sabnzbd: {
        listen: formatListen(config.sabnzbd.listen),
        api_key: Option.isSome(config.sabnzbd.apiKey) ? "<redacted>" : null,
        path_map: config.sabnzbd.pathMap,
        categories: config.sabnzbd.categories
      },
      blackhole: { watch: config.blackhole.watch ?? null },
      webhooks: {
        listen: formatListen(config.webhooks.listen),
        secret: config.webhooks.secrets.map(() => "<redacted>"),
        public_url: config.webhooks.public_url
      },
      ...afterLandingView(config),
      posters: config.posters,
      cleanup:
        config.cleanup === null
          ? { folders: [] }
          : { after: formatDuration(config.cleanup.after), folders: config.cleanup.folders },
      ...arrView(config)
    }
  }
}
