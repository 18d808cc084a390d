/**
 * `path_map` (config/pathMapSetting.ts): how a local path reads for an app that mounts the
 * same folders elsewhere (Sonarr in a container sees `/srv/media` as `/data`). The longest local prefix
 * that matches at a path-segment boundary is replaced; a path no pair covers is reported
 * as it is. Pure.
 */

/** `[local prefix, prefix the app sees]` pairs. */
export type PathMap = ReadonlyArray<readonly [string, string]>

/** `local` as the app sees it. */
export const toAppPath = (map: PathMap, local: string): string => {
  let best: readonly [string, string] | undefined
  for (const pair of map) {
    const prefix = trimTrailingSeparators(pair[0])
    const covers = local === prefix || local.startsWith(`${prefix}/`)
    if (covers && (best === undefined || prefix.length > trimTrailingSeparators(best[0]).length)) best = pair
  }
  if (best === undefined) return local
  const rest = local.slice(trimTrailingSeparators(best[0]).length)
  const target = trimTrailingSeparators(best[1])
  // A Windows target ("D:\\media") gets Windows separators, as the app compares strings.
  const windows = /^[a-z]:\\/i.test(best[1]) || best[1].includes("\\")
  const joined = `${target}${windows ? rest.replaceAll("/", "\\") : rest}`
  return joined === "" ? (windows ? "\\" : "/") : joined
}

/** "/srv/" → "/srv"; "/" → "" (the prefix of every absolute path). */
const trimTrailingSeparators = (path: string): string => path.replace(/[\\/]+$/, "")
