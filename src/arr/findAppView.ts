/**
 * Where an app sees a probe file it does not see at the path dlsync reports: the folders the
 * app is known to see — its root folders (GET rootfolder; RootFolders/RootFolderController.cs),
 * the local side of its remote path mappings (GET remotepathmapping) — and their parents,
 * each asked whether it holds `<category>/<probe>` (the mirror root mounted there, or below it
 * with the last segments of its local path kept, as a volume of a parent keeps them) or
 * `<probe>` (the category folder mounted there), through the app's own file-system lookup
 * (listsFile.ts), MAX_LOOKUPS at most. The first hit gives the `path_map` pair that makes the
 * app see the probe.
 */
import { Effect } from "effect"
import type { Outbound } from "../outbound/Outbound.ts"
import type { PathMap } from "../paths/pathMap.ts"
import type { ArrTarget } from "./ArrApp.ts"
import type { ArrError } from "./ArrError.ts"
import { asFolder, folderAndParents, joinAppPath } from "./appPaths.ts"
import { arrRequest } from "./arrRequest.ts"
import { FileSystemListing } from "./arrSchemas.ts"
import { listsFile } from "./listsFile.ts"

/** Lookups one probe may cost, at most. */
export const MAX_LOOKUPS = 100
/** Top-level folders tried, at most. */
const MAX_TOP_FOLDERS = 20
/** Segments of the mirror root's path a mount is assumed to keep, at most. */
const MAX_TAIL = 3

export interface AppView {
  /** The probe's path as the app sees it. */
  readonly seenAt: string
  /** The local folder (the mirror root, or the category folder) and where the app sees it. */
  readonly pair: readonly [string, string]
}

export interface ProbeSite {
  readonly root: string
  readonly category: string
  readonly probeName: string
  /** The folder already asked (where dlsync reports it): not asked again. */
  readonly reported: string
}

export const findAppView = Effect.fnUntraced(function* (
  target: ArrTarget,
  site: ProbeSite,
  knownFolders: ReadonlyArray<string>
): Effect.fn.Return<AppView | undefined, ArrError, Outbound> {
  // The known folders and their parents, then the top-level folders: a container's volumes
  // are mostly there (/data, /downloads).
  const top = yield* arrRequest(target, { method: "GET", path: "/filesystem", query: { path: "/" } }, FileSystemListing)
  const bases = [
    ...new Set([
      ...knownFolders.flatMap((f) => folderAndParents(asFolder(f))),
      "/",
      ...(top.directories ?? []).slice(0, MAX_TOP_FOLDERS).map((d) => asFolder(d.path))
    ])
  ]
  const categoryParts = site.category === "" ? [] : site.category.split("/")
  const rootParts = site.root.split("/").filter((p) => p !== "")
  const localCategory = categoryParts.length === 0 ? site.root : `${site.root}/${site.category}`
  const tried = new Set([asFolder(site.reported)])
  // A mount keeps the tail of a host path (/srv/media → /data: the root /srv/media/dlsync is
  // /data/dlsync), so each base is tried with the root's last 0…MAX_TAIL segments after it.
  for (let tail = 0; tail <= Math.min(MAX_TAIL, rootParts.length); tail++) {
    const rootTail = rootParts.slice(rootParts.length - tail)
    for (const base of bases) {
      const rootThere = rootTail.reduce((folder, part) => joinAppPath(folder, part), base)
      const layouts: ReadonlyArray<readonly [string, readonly [string, string]]> = [
        // The mirror root mounted at `rootThere`.
        [
          categoryParts.reduce((folder, part) => joinAppPath(folder, part), rootThere),
          [site.root, trimFolder(rootThere)]
        ],
        // The category folder mounted at `base`.
        ...(tail === 0 ? [[base, [localCategory, trimFolder(base)]] as const] : [])
      ]
      for (const [folder, pair] of layouts) {
        if (tried.has(asFolder(folder))) continue
        if (tried.size > MAX_LOOKUPS) return undefined
        tried.add(asFolder(folder))
        if (yield* listsFile(target, folder, site.probeName))
          return { seenAt: joinAppPath(folder, site.probeName), pair }
      }
    }
  }
  return undefined
})

/** The `path_map` with `pair` in, and without the pairs that would still win over it for `folder`. */
export const withPair = (map: PathMap, pair: readonly [string, string], folder: string): PathMap => [
  pair,
  ...map.filter(([local]) => {
    const prefix = local.replace(/[\\/]+$/, "")
    const covers = folder === prefix || folder.startsWith(`${prefix}/`)
    return !(covers && prefix.length >= pair[0].length)
  })
]

/** "/data/" → "/data"; "/" stays. */
const trimFolder = (path: string): string => (path.length > 1 ? path.replace(/[\\/]+$/, "") || "/" : path)
