/**
 * A stand-in Sonarr (or Radarr: v3; Lidarr, Readarr: the same routes under /api/v1) API for startStandIn (recordingServer.ts), answering as the
 * apps' controllers document (Sonarr/Sonarr src/Sonarr.Api.V3):
 * - every route needs `X-Api-Key` (Sonarr.Http/Authentication): 401 without the right one;
 * - GET system/status (System/SystemController.cs): `appName`, `version`;
 * - GET queue (Queue/QueueController.cs, Sonarr.Http/PagingResource.cs): `page` from 1,
 *   `pageSize` (default 10), `totalRecords`, `records`; DELETE queue/{id} with
 *   `removeFromClient`, `blocklist`, `skipRedownload`: 404 for an unknown id, else `{}`. The
 *   queue is the test's array (a real app drops the item once the client removed it);
 * - GET filesystem (FileSystem/FileSystemController.cs, NzbDrone.Common/Disk/
 *   FileSystemLookupService.cs): the folder up to the last "/" of `path` (or `path` itself
 *   with `allowFoldersWithoutTrailingSlashes` when it is a folder), `directories` with a
 *   trailing "/", `files` with `includeFiles`; a missing folder gives empty lists;
 * - GET rootfolder, remotepathmapping, downloadclient: the lists given.
 * Its file system is a real folder mounted at another path (a container's view): `mount.hostDir`
 * on this machine is `mount.appPath` for the app, and nothing else exists but its parents.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { Answer, Recorded } from "./recordingServer.ts"

export interface ArrStandInOptions {
  readonly apiKey: string
  readonly appName?: string
  readonly mount: { readonly hostDir: string; readonly appPath: string }
  readonly queue?: Array<{ readonly id: number; readonly downloadId: string; readonly title: string }>
  readonly rootFolders?: ReadonlyArray<string>
  readonly remotePathMappings?: ReadonlyArray<{ host: string; remotePath: string; localPath: string }>
  /** Download clients (qBittorrent) with their category field, e.g. `{ tvCategory: "tv" }`. */
  readonly downloadClients?: ReadonlyArray<Record<string, string>>
}

export const arrStandIn =
  (options: ArrStandInOptions) =>
  (r: Recorded): Answer => {
    if (r.headers["x-api-key"] !== options.apiKey) return { status: 401, body: "" }
    const route = `${r.method} ${r.url.pathname.replace(/^\/api\/v[13]/, "")}`
    const json = (value: unknown): Answer => ({ status: 200, body: JSON.stringify(value) })
    switch (route) {
      case "GET /system/status":
        return json({ appName: options.appName ?? "Sonarr", instanceName: "Sonarr", version: "4.0.15.2941" })
      case "GET /queue": {
        const queue = [...(options.queue ?? [])].sort((a, b) => a.id - b.id)
        const page = Number(r.url.searchParams.get("page") ?? "1")
        const pageSize = Number(r.url.searchParams.get("pageSize") ?? "10")
        const records = queue
          .slice((page - 1) * pageSize, page * pageSize)
          .map((q) => ({ ...q, status: "warning", trackedDownloadState: "downloading", protocol: "torrent" }))
        return json({ page, pageSize, sortKey: "timeleft", totalRecords: queue.length, records })
      }
      case "GET /filesystem":
        return json(listFolder(options.mount, r.url.searchParams))
      case "GET /rootfolder":
        return json((options.rootFolders ?? []).map((path, i) => ({ id: i + 1, path, accessible: true })))
      case "GET /remotepathmapping":
        return json((options.remotePathMappings ?? []).map((m, i) => ({ id: i + 1, ...m })))
      case "GET /downloadclient":
        return json(
          (options.downloadClients ?? []).map((fields, i) => ({
            id: i + 1,
            name: `dlsync ${i + 1}`,
            enable: true,
            protocol: "torrent",
            implementation: "QBittorrent",
            fields: [
              { name: "host", value: "dlsync" },
              ...Object.entries(fields).map(([name, value]) => ({ name, value }))
            ]
          }))
        )
    }
    const deleted = /^DELETE \/queue\/(\d+)$/.exec(route)
    if (deleted !== null) {
      return (options.queue ?? []).some((q) => q.id === Number(deleted[1])) ? json({}) : { status: 404, body: "" }
    }
    return { status: 404, body: "" }
  }

// ---------------------------------------------------------------------------------------

const listFolder = (mount: ArrStandInOptions["mount"], params: URLSearchParams) => {
  const query = params.get("path") ?? "/"
  const includeFiles = params.get("includeFiles") === "true"
  const folderAsIs = params.get("allowFoldersWithoutTrailingSlashes") === "true" && isFolder(mount, query)
  const folder = folderAsIs ? query : query.slice(0, query.lastIndexOf("/") + 1)
  const appPath = mount.appPath.replace(/\/+$/, "")
  const clean = folder.replace(/\/+$/, "")
  const empty = { parent: Path.posix.dirname(clean), directories: [], files: [] }
  // A parent of the mount: holds the mount's next segment only.
  if (appPath.startsWith(`${clean}/`)) {
    const name = appPath.slice(clean.length + 1).split("/")[0]!
    return { ...empty, directories: [{ type: "folder", name, path: `${clean}/${name}/` }] }
  }
  if (clean !== appPath && !clean.startsWith(`${appPath}/`)) return empty
  const hostFolder = Path.join(mount.hostDir, clean.slice(appPath.length))
  if (!Fs.existsSync(hostFolder)) return empty
  const entries = Fs.readdirSync(hostFolder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))
  return {
    parent: Path.posix.dirname(clean),
    directories: entries
      .filter((e) => e.isDirectory())
      .map((e) => ({ type: "folder", name: e.name, path: `${clean}/${e.name}/` })),
    files: includeFiles
      ? entries.filter((e) => e.isFile()).map((e) => ({ type: "file", name: e.name, path: `${clean}/${e.name}` }))
      : []
  }
}

const isFolder = (mount: ArrStandInOptions["mount"], appPath: string): boolean => {
  const root = mount.appPath.replace(/\/+$/, "")
  const clean = appPath.replace(/\/+$/, "")
  if (root.startsWith(`${clean}/`) || clean === "") return true
  if (clean !== root && !clean.startsWith(`${root}/`)) return false
  return (
    Fs.statSync(Path.join(mount.hostDir, clean.slice(root.length)), { throwIfNoEntry: false })?.isDirectory() === true
  )
}
