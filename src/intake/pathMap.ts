/**
 * `path_map`: how a local path reads inside the app's container. Each pair is
 * `[local prefix, the prefix the app sees]`; the longest local prefix that contains the path
 * (whole segments: "/srv/a" does not contain "/srv/ab") is replaced; no match leaves the path
 * as it is. Pure; the surfaces apply it to every path they show an app.
 */

export type PathMap = ReadonlyArray<readonly [local: string, app: string]>

export const toAppPath = (map: PathMap, localPath: string): string => {
  let best: readonly [string, string] | undefined
  for (const [local, app] of map) {
    const prefix = trimSlash(local)
    const inside = localPath === prefix || localPath.startsWith(prefix === "" ? "/" : `${prefix}/`)
    if (inside && (best === undefined || prefix.length > trimSlash(best[0]).length)) best = [local, app]
  }
  if (best === undefined) return localPath
  const rest = localPath.slice(trimSlash(best[0]).length)
  const app = trimSlash(best[1])
  return rest === "" ? app || "/" : `${app}${rest}`
}

const trimSlash = (path: string): string => path.replace(/\/+$/, "")
