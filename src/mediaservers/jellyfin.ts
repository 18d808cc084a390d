/**
 * Jellyfin and Emby: `POST /Library/Media/Updated` with the folders that changed, in one
 * request (the server rescans each, not the library). The API key goes in the
 * `Authorization: MediaBrowser Token="…"` header Jellyfin reads and the `X-Emby-Token` header
 * Emby reads; never in a URL or a log line.
 */
import { Effect, Redacted } from "effect"
import type { MediaServerSettings } from "../config/afterLandingSettings.ts"
import type { Outbound } from "../outbound/Outbound.ts"
import { type DeliveryFailed, exchangeOk } from "../outbound/retryDelivery.ts"
import { toAppPath } from "../paths/pathMap.ts"
import type { FolderUpdate } from "./refreshFolders.ts"

export const jellyfinRefresh = (
  settings: MediaServerSettings,
  updates: ReadonlyArray<FolderUpdate>
): Effect.Effect<void, DeliveryFailed, Outbound> => {
  const token = Redacted.value(settings.token)
  const body = {
    Updates: updates.map((u) => ({ Path: toAppPath(settings.path_map, u.folder), UpdateType: u.type }))
  }
  return Effect.asVoid(
    exchangeOk({
      method: "POST",
      url: new URL(`${settings.url}/Library/Media/Updated`),
      headers: {
        "content-type": "application/json",
        authorization: `MediaBrowser Token="${token}"`,
        "x-emby-token": token
      },
      body: JSON.stringify(body)
    })
  )
}
