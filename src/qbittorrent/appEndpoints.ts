/**
 * The application's calls: versions and build, preferences, the default save path, the
 * network interfaces; transfer/* (rates, no limits); log/* (log/main: surfaceLog.ts; no
 * peers to log). dlsync reports itself as qBittorrent 5.0.5 (WebAPI 2.11.2): the apps parse
 * the Web API version with .NET `Version.Parse` and switch to 5.0's names (stop/start,
 * `stopped`) from 2.11 on.
 */
import * as NodeOs from "node:os"
import { Effect } from "effect"
import { toAppPath } from "../paths/pathMap.ts"
import { type Endpoint, json, okEmpty, parseBool, read, text, write } from "./answers.ts"
import type { EndpointContext } from "./endpointContext.ts"
import { preferences } from "./preferences.ts"
import type { LogType } from "./surfaceLog.ts"
import { transferInfo } from "./syncEndpoints.ts"
import type { TorrentInfo } from "./torrentView.ts"

/** What qBittorrent 5.0 reports; the apps parse the Web API version with .NET `Version.Parse`. */
export const APP_VERSION = "v5.0.5"
export const WEBAPI_VERSION = "2.11.2"

export const appEndpoints = (ctx: EndpointContext): Readonly<Record<string, Endpoint>> => {
  const { options } = ctx
  const infos = Effect.gen(function* () {
    const view = yield* ctx.view
    const listed: Array<TorrentInfo> = []
    for (const item of yield* ctx.torrents()) {
      const info = yield* ctx.info(item, view)
      if (info !== undefined) listed.push(info)
    }
    return listed
  })
  const zero = read(() => Effect.succeed(text(200, "0")))
  return {
    "app/version": read(() => Effect.succeed(text(200, APP_VERSION))),
    "app/webapiVersion": read(() => Effect.succeed(text(200, WEBAPI_VERSION))),
    "app/buildInfo": read(() =>
      Effect.succeed(
        json({
          qt: "6.7.3",
          libtorrent: "2.0.10.0",
          boost: "1.86.0",
          openssl: "3.4.0",
          zlib: "1.3.1",
          bitness: 64,
          platform: PLATFORMS[process.platform] ?? "unknown"
        })
      )
    ),
    "app/preferences": read(() =>
      Effect.succeed(
        json(
          preferences({
            mirrorRoot: options.mirrorRoot,
            pathMap: options.pathMap,
            listen: options.listen,
            username: options.username
          })
        )
      )
    ),
    "app/setPreferences": write(() => Effect.succeed(okEmpty)),
    "app/defaultSavePath": read(() => Effect.succeed(text(200, toAppPath(options.pathMap, options.mirrorRoot)))),
    "app/networkInterfaceList": read(() =>
      Effect.sync(() => json(Object.keys(NodeOs.networkInterfaces()).map((name) => ({ name, value: name }))))
    ),
    "transfer/info": read(() => Effect.map(infos, (listed) => json(transferInfo(listed)))),
    "transfer/speedLimitsMode": read(() => Effect.succeed(text(200, "0"))),
    "transfer/toggleSpeedLimitsMode": write(() => Effect.succeed(okEmpty)),
    "transfer/downloadLimit": zero,
    "transfer/uploadLimit": zero,
    "transfer/setDownloadLimit": write(() => Effect.succeed(okEmpty)),
    "transfer/setUploadLimit": write(() => Effect.succeed(okEmpty)),
    "log/main": read((form) =>
      Effect.sync(() => {
        const wanted = (name: string) => parseBool(form.get(name)) ?? true
        const types = new Set(LOG_TYPES.filter(([, name]) => wanted(name)).map(([type]) => type))
        const last = Number.parseInt(form.get("last_known_id") ?? "-1", 10)
        return json(ctx.log.read(Number.isNaN(last) ? -1 : last, types))
      })
    ),
    "log/peers": read(() => Effect.succeed(json([])))
  }
}

// ---------------------------------------------------------------------------------------

/** log/main's types and the parameters that select them. */
const LOG_TYPES: ReadonlyArray<readonly [LogType, string]> = [
  [1, "normal"],
  [2, "info"],
  [4, "warning"],
  [8, "critical"]
]

/** qBittorrent's `platform` names. */
const PLATFORMS: Readonly<Partial<Record<NodeJS.Platform, string>>> = {
  linux: "linux",
  darwin: "macos",
  win32: "windows",
  freebsd: "freebsd",
  openbsd: "openbsd",
  netbsd: "netbsd"
}
