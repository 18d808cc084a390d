/**
 * The apps dlsync talks to through their own API, and where their APIs differ. Sonarr and
 * Radarr share the v3 API (Sonarr/Sonarr src/Sonarr.Api.V3, Radarr/Radarr src/Radarr.Api.V3),
 * Lidarr and Readarr the same resources as v1 (Lidarr/Lidarr src/Lidarr.Api.V1, Readarr/Readarr
 * src/Readarr.Api.V1: Queue, FileSystem, RootFolders, RemotePathMappings, DownloadClient,
 * System/status); only the queue's "unknown items" flag and the download client's category
 * field are named after what the app manages.
 */
import type { ArrAppSettings, ArrSettings } from "../config/arrSettings.ts"

export interface ArrApp {
  /** The configuration section. */
  readonly section: "sonarr" | "radarr" | "lidarr" | "readarr"
  /** As the app names itself (system/status `appName`) and as the user knows it. */
  readonly name: string
  readonly apiBase: string
  /**
   * GET queue's flag that lists items the app cannot match to a series, movie, artist or
   * author (Queue/QueueController.cs `GetQueue(… includeUnknownSeriesItems / …MovieItems /
   * …ArtistItems / …AuthorItems)`).
   */
  readonly unknownItemsParam: string
  /**
   * The download client's category field (Download/Clients/QBittorrent/QBittorrentSettings.cs
   * and Sabnzbd/SabnzbdSettings.cs: `TvCategory` / `MovieCategory` / `MusicCategory` (Lidarr
   * and Readarr both), camelCase in the API).
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

export const LIDARR: ArrApp = {
  section: "lidarr",
  name: "Lidarr",
  apiBase: "/api/v1",
  unknownItemsParam: "includeUnknownArtistItems",
  categoryField: "musicCategory"
}

export const READARR: ArrApp = {
  section: "readarr",
  name: "Readarr",
  apiBase: "/api/v1",
  unknownItemsParam: "includeUnknownAuthorItems",
  categoryField: "musicCategory"
}

/** One configured app: what it is and how to reach it. */
export interface ArrTarget {
  readonly app: ArrApp
  readonly settings: ArrAppSettings
}

/** The apps configured, in this order. */
export const configuredApps = (config: ArrSettings): ReadonlyArray<ArrTarget> =>
  [SONARR, RADARR, LIDARR, READARR].flatMap((app) => {
    const settings = config[app.section]
    return settings === null ? [] : [{ app, settings }]
  })
