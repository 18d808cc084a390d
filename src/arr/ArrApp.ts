/**
 * The apps dlsync talks to through their own API, and where their APIs differ. Sonarr and
 * Radarr share the v3 API (Sonarr/Sonarr src/Sonarr.Api.V3, Radarr/Radarr src/Radarr.Api.V3);
 * only the queue's "unknown items" flag and the download client's category field are named
 * after what the app manages.
 */
import type { ArrAppSettings, ArrSettings } from "../config/arrSettings.ts"

export interface ArrApp {
  /** The configuration section. */
  readonly section: "sonarr" | "radarr"
  /** As the app names itself (system/status `appName`) and as the user knows it. */
  readonly name: string
  readonly apiBase: string
  /**
   * GET queue's flag that lists items the app cannot match to a series or movie
   * (Queue/QueueController.cs `GetQueue(… includeUnknownSeriesItems / includeUnknownMovieItems)`).
   */
  readonly unknownItemsParam: string
  /**
   * The download client's category field (Download/Clients/QBittorrent/QBittorrentSettings.cs
   * and Sabnzbd/SabnzbdSettings.cs: `TvCategory` / `MovieCategory`, camelCase in the API).
   */
  readonly categoryField: string
}

export const SONARR: ArrApp = {
  section: "sonarr",
  name: "Sonarr",
  apiBase: "/api/v3",
  unknownItemsParam: "includeUnknownSeriesItems",
  categoryField: "tvCategory"
}

export const RADARR: ArrApp = {
  section: "radarr",
  name: "Radarr",
  apiBase: "/api/v3",
  unknownItemsParam: "includeUnknownMovieItems",
  categoryField: "movieCategory"
}

/** One configured app: what it is and how to reach it. */
export interface ArrTarget {
  readonly app: ArrApp
  readonly settings: ArrAppSettings
}

/** The apps configured, Sonarr first. */
export const configuredApps = (config: ArrSettings): ReadonlyArray<ArrTarget> =>
  [
    config.sonarr === null ? undefined : { app: SONARR, settings: config.sonarr },
    config.radarr === null ? undefined : { app: RADARR, settings: config.radarr }
  ].filter((t) => t !== undefined)
