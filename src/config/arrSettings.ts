/**
 * The `[sonarr]`, `[radarr]`, `[lidarr]` and `[readarr]` sections: the apps dlsync talks to through their own API (src/arr/):
 * it marks a release that failed on the service as failed there (qBittorrent has no failed
 * state), and `dlsync doctor` checks that the app sees the files at the paths dlsync reports.
 * A section is on when it is there; then `url` and `api_key` are required (fields.ts).
 * config.example.toml documents each key.
 */
import type { Redacted } from "effect"
import type { PathMap } from "../paths/pathMap.ts"
import type { DecodedConfig } from "./fields.ts"

export interface ArrAppSettings {
  /** The app's address without a trailing "/", with its URL base if it has one. */
  readonly url: string
  readonly api_key: Redacted.Redacted<string>
  /** `[local prefix, prefix the app sees]` pairs: how the app sees the mirror's paths. */
  readonly path_map: PathMap
}

export interface ArrSettings {
  readonly sonarr: ArrAppSettings | null
  readonly radarr: ArrAppSettings | null
  readonly lidarr: ArrAppSettings | null
  readonly readarr: ArrAppSettings | null
}

type Raw = DecodedConfig

export const arrSettings = (raw: Raw): ArrSettings => ({
  sonarr: appSettings(raw.sonarr),
  radarr: appSettings(raw.radarr),
  lidarr: appSettings(raw.lidarr),
  readarr: appSettings(raw.readarr)
})

const appSettings = (section: Raw["sonarr"]): ArrAppSettings | null =>
  section === undefined
    ? null
    : { url: section.url.replace(/\/+$/, ""), api_key: section.api_key, path_map: section.path_map }

/** `config check`'s view of the sections: the key redacted, a section not set left out. */
export const arrView = (settings: ArrSettings) => {
  const view = (s: ArrAppSettings) => ({ url: s.url, api_key: "<redacted>", path_map: s.path_map })
  return {
    ...(settings.sonarr === null ? {} : { sonarr: view(settings.sonarr) }),
    ...(settings.radarr === null ? {} : { radarr: view(settings.radarr) }),
    ...(settings.lidarr === null ? {} : { lidarr: view(settings.lidarr) }),
    ...(settings.readarr === null ? {} : { readarr: view(settings.readarr) })
  }
}
