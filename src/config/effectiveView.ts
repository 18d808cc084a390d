/**
 * The configuration in the form a user reads it (`dlsync config check`, the web page's
 * effective configuration): every key with its value or default in the units a user writes,
 * every secret replaced by a marker.
 */
import { Option } from "effect"
import { formatListen } from "../server/ListenAddress.ts"
import { afterLandingView } from "./afterLandingSettings.ts"
import { arrView } from "./arrSettings.ts"
import type { AppConfig } from "./loadConfig.ts"
import { formatDuration, formatRate, formatSize, formatWindow } from "./units.ts"

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
      server: {
        listen: formatListen(config.server.listen),
        allowed_hosts: config.server.allowed_hosts,
        password: config.server.password === null ? "generated at the first start" : "<redacted>"
      },
      app_state: {
        device_name: config.app_state.device_name,
        progress_interval: formatDuration(config.app_state.progress_interval),
        max_requests_per_minute: config.app_state.max_requests_per_minute,
        once_wait: formatDuration(config.app_state.once_wait)
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
