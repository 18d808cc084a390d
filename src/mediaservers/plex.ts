/**
 * Plex: a partial scan of the folders that changed. The library section that holds each
 * folder is found from `GET /library/sections` (the section whose Location path is the
 * longest prefix of the folder, as Plex sees it), then
 * `GET /library/sections/{key}/refresh?path=<folder>` asks Plex to scan that folder alone.
 * The token goes in the `X-Plex-Token` header, never in a URL or a log line.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import type { MediaServerSettings } from "../config/afterLandingSettings.ts"
import { answerText, type Outbound } from "../outbound/Outbound.ts"
import { DeliveryFailed, exchangeOk } from "../outbound/retryDelivery.ts"
import { toAppPath } from "../paths/pathMap.ts"
import type { FolderUpdate } from "./refreshFolders.ts"

/** `/library/sections` as JSON (Accept: application/json): the parts used here. */
const Sections = Schema.Struct({
  MediaContainer: Schema.Struct({
    Directory: Schema.optionalKey(
      Schema.Array(
        Schema.Struct({
          key: Schema.String,
          title: Schema.optionalKey(Schema.String),
          Location: Schema.optionalKey(Schema.Array(Schema.Struct({ path: Schema.String })))
        })
      )
    )
  })
})

export interface PlexSection {
  readonly key: string
  readonly paths: ReadonlyArray<string>
}

/** Refreshes each folder in its section; a folder no section holds is logged and skipped. */
export const plexRefresh = Effect.fnUntraced(function* (
  settings: MediaServerSettings,
  updates: ReadonlyArray<FolderUpdate>
): Effect.fn.Return<void, DeliveryFailed, Outbound> {
  const headers = { accept: "application/json", "x-plex-token": Redacted.value(settings.token) }
  const answer = yield* exchangeOk({
    method: "GET",
    url: new URL(`${settings.url}/library/sections`),
    headers
  })
  const sections = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Sections))(answerText(answer)).pipe(
    Effect.mapError(() => new DeliveryFailed({ reason: "/library/sections did not answer the expected JSON" }))
  )
  const known: ReadonlyArray<PlexSection> = (sections.MediaContainer.Directory ?? []).map((d) => ({
    key: d.key,
    paths: (d.Location ?? []).map((l) => l.path)
  }))
  for (const update of updates) {
    const folder = toAppPath(settings.path_map, update.folder)
    const section = sectionOf(known, folder)
    if (Option.isNone(section)) {
      yield* Effect.logWarning(`plex: no library section holds ${folder}; not refreshed (check plex.path_map)`)
      continue
    }
    const url = new URL(`${settings.url}/library/sections/${encodeURIComponent(section.value.key)}/refresh`)
    url.searchParams.set("path", folder)
    yield* exchangeOk({ method: "GET", url, headers })
  }
})

/** The section whose location is the longest prefix of `folder` (at a `/` boundary). */
export const sectionOf = (sections: ReadonlyArray<PlexSection>, folder: string): Option.Option<PlexSection> => {
  let best: { section: PlexSection; length: number } | undefined
  for (const section of sections) {
    for (const path of section.paths) {
      const prefix = path.replace(/\/+$/, "")
      const holds = folder === prefix || folder.startsWith(`${prefix}/`)
      if (holds && (best === undefined || prefix.length > best.length)) best = { section, length: prefix.length }
    }
  }
  return Option.fromNullishOr(best?.section)
}
