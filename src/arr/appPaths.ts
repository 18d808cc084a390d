/**
 * Paths as an app reads them (pure): the folder form its file-system lookup wants, and the
 * remote path mappings it applies to every path a download client reports
 * (RemotePathMappings/RemotePathMappingController.cs; NzbDrone.Core/RemotePathMappings/
 * RemotePathMappingService.cs `RemapRemoteToLocal`: the first mapping whose remote path is a
 * parent of the path, its prefix replaced by the local path).
 */
import type { RemotePathMapping } from "./arrSchemas.ts"

/** Windows paths (`D:\media`) use "\", others "/". */
export const separatorOf = (path: string): string => (/^[a-z]:\\/i.test(path) || path.includes("\\") ? "\\" : "/")

/** `path` ending with its separator: the file-system lookup lists the folder up to the last one. */
export const asFolder = (path: string): string => {
  const sep = separatorOf(path)
  return path.endsWith(sep) ? path : `${path}${sep}`
}

export const joinAppPath = (folder: string, name: string): string => `${asFolder(folder)}${name}`

/** `path` after the first of the app's remote path mappings that covers it, if one does. */
export const remapRemoteToLocal = (mappings: ReadonlyArray<RemotePathMapping>, path: string): string => {
  const folder = asFolder(path)
  for (const m of mappings) {
    const remote = asFolder(m.remotePath)
    if (!folder.startsWith(remote)) continue
    const mapped = `${asFolder(m.localPath)}${folder.slice(remote.length)}`
    return path === folder ? mapped : mapped.slice(0, -1)
  }
  return path
}

/** The folder and its parents up to the top ("/data/tv/" → "/data/tv/", "/data/", "/"). */
export const folderAndParents = (path: string): ReadonlyArray<string> => {
  const sep = separatorOf(path)
  const parts = path.split(/[\\/]+/).filter((p) => p !== "")
  const windows = sep === "\\"
  const out: Array<string> = []
  for (let n = parts.length; n >= (windows ? 1 : 0); n--) {
    const joined = parts.slice(0, n).join(sep)
    out.push(windows ? `${joined}${sep}` : `/${joined}${n === 0 ? "" : "/"}`)
  }
  return out
}
