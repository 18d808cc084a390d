/**
 * The qBittorrent Web API v2 calls, one entry per `scope/action`, over the intake queue:
 * the table QbittorrentServer.ts dispatches on. Each concept is its own module:
 *
 *   appEndpoints.ts          app/*, transfer/*, log/*
 *   torrentReads.ts          torrents/info, count, properties, files, trackers, webseeds
 *   syncEndpoints.ts         sync/maindata (maindataSync.ts), sync/torrentPeers
 *   torrentActions.ts        torrents/add, delete, stop/start, and the accepted no-ops
 *   categoryTagEndpoints.ts  categories and tags
 *
 * Answers follow qBittorrent 5.0.5 (WebAPI 2.11.2), checked against a running qbittorrent-nox
 * by test/conformance/qbittorrent.test.ts; the differences kept on purpose are listed in the
 * README (Compatibility). Which calls the *arr apps make: Sonarr's QBittorrentProxyV2.cs.
 *
 * What dlsync does not keep: `savepath` (a release goes to `<mirror root>/<category>`),
 * share limits and priorities (nothing seeds; everything starts as soon as the account
 * allows), preferences written through app/setPreferences (accepted, not applied). Tags and
 * the log are kept in memory.
 */
import type { Endpoint } from "./answers.ts"
import { appEndpoints } from "./appEndpoints.ts"
import { categoryTagEndpoints } from "./categoryTagEndpoints.ts"
import { type EndpointOptions, makeEndpointContext } from "./endpointContext.ts"
import { syncEndpoints } from "./syncEndpoints.ts"
import { torrentActions } from "./torrentActions.ts"
import { torrentReads } from "./torrentReads.ts"

export { type Endpoint, parseBool, type Response, text } from "./answers.ts"
export { APP_VERSION, WEBAPI_VERSION } from "./appEndpoints.ts"
export type { EndpointOptions } from "./endpointContext.ts"

/** The calls other than auth/login and auth/logout (the server answers those, as they touch the session). */
export const makeEndpoints = (options: EndpointOptions): Readonly<Record<string, Endpoint>> => {
  const ctx = makeEndpointContext(options)
  return {
    ...appEndpoints(ctx),
    ...torrentReads(ctx),
    ...syncEndpoints(ctx),
    ...torrentActions(ctx),
    ...categoryTagEndpoints(ctx)
  }
}
