/**
 * Media-server refresh: after files land, are moved or removed, the media servers configured
 * (`[jellyfin]`, `[plex]`) are told which folders to look at again, once per folder per burst.
 *
 *   file_complete · local_moved · local_removed ─► batchEvents (quiet DEBOUNCE_QUIET_MS,
 *   at most DEBOUNCE_MAX_MS) ─► refreshFolders ─► Jellyfin: one POST · Plex: one scan per folder
 *
 * Invariants:
 * - Only committed paths are sent: the events come after the file was renamed into place
 *   and the store recorded it. A moved or removed item sends its old folder too.
 * - A season of episodes landing over a minute is one refresh per folder, not one per file.
 * - A server that is down or refuses is retried with the program's backoff and logged once;
 *   the mirror never waits for it nor fails because of it.
 * - Tokens are Redacted in the configuration and sent only in headers to the server's URL.
 */
import { Effect, Layer } from "effect"
import type { AfterLandingSettings } from "../config/afterLandingSettings.ts"
import { batchEvents } from "../events/eventBatches.ts"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { retryDelivery } from "../outbound/retryDelivery.ts"
import { jellyfinRefresh } from "./jellyfin.ts"
import { plexRefresh } from "./plex.ts"
import { isRefreshEvent, refreshFolders } from "./refreshFolders.ts"

/** A burst ends when no file has landed for this long… */
export const DEBOUNCE_QUIET_MS = 5_000
/** …or this long after its first file, whichever comes first. */
export const DEBOUNCE_MAX_MS = 60_000

/** Refreshes for the scope's life; nothing when no media server is configured. */
export const mediaRefreshLayer = (
  root: string,
  settings: Pick<AfterLandingSettings, "jellyfin" | "plex">
): Layer.Layer<never, never, MirrorEvents> => {
  const { jellyfin, plex } = settings
  if (jellyfin === null && plex === null) return Layer.empty
  const refresh = batchEvents({
    select: (event) => (isRefreshEvent(event) ? event : undefined),
    quietMs: DEBOUNCE_QUIET_MS,
    maxWaitMs: DEBOUNCE_MAX_MS,
    deliver: (batch) => {
      const updates = refreshFolders(root, batch)
      const what = `refresh of ${updates.length === 1 ? "1 folder" : `${updates.length} folders`}`
      return Effect.all(
        [
          jellyfin === null ? Effect.void : retryDelivery("jellyfin", what, jellyfinRefresh(jellyfin, updates)),
          plex === null ? Effect.void : retryDelivery("plex", what, plexRefresh(plex, updates))
        ],
        { concurrency: "unbounded", discard: true }
      )
    }
  })
  return Layer.effectDiscard(refresh).pipe(Layer.provide(Outbound.layer))
}
