/**
 * The path doctor: does the app see the files dlsync reports, at the path dlsync reports
 * them? For each category, a probe file is written under `<root>/<category>/`, its path is
 * mapped as the surfaces map it (`<app>.path_map`, then the app's own remote path mappings),
 * and the app is asked through its own API whether that folder holds it; when it does not,
 * findAppView.ts looks for where the app sees it, for the exact `path_map` fix.
 *
 *   system/status ─► downloadclient (categories) ─► per category: write probe ─►
 *   filesystem?path=<mapped folder> ─► seen? OK : rootfolder + remotepathmapping ─► findAppView
 *   ─► remove probe
 *
 * Invariants:
 * - The probe is removed whatever happens (a scope), and so is a category folder the doctor
 *   created, once empty; nothing else in the root is touched. A missing root is not created
 *   (it may be an unmounted disk).
 * - Nothing fails: every outcome is a verdict (doctorLines.ts words it).
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Random, type Scope } from "effect"
import type { Outbound } from "../outbound/Outbound.ts"
import { type PathMap, toAppPath } from "../paths/pathMap.ts"
import type { ArrTarget } from "./ArrApp.ts"
import type { ArrError } from "./ArrError.ts"
import { appCategories } from "./appCategories.ts"
import { joinAppPath, remapRemoteToLocal } from "./appPaths.ts"
import { arrRequest, checkStatus } from "./arrRequest.ts"
import { DownloadClients, RemotePathMappings, RootFolders } from "./arrSchemas.ts"
import { findAppView, withPair } from "./findAppView.ts"
import { listsFile } from "./listsFile.ts"

export const PROBE_PREFIX = ".dlsync-probe-"

export type CategoryVerdict =
  | { readonly _tag: "Seen"; readonly category: string; readonly appPath: string }
  | {
      readonly _tag: "NotSeen"
      readonly category: string
      readonly probe: string
      readonly appPath: string
      /** Where the app sees the probe and the `path_map` that reports it there; null: nowhere found. */
      readonly fix: { readonly seenAt: string; readonly pathMap: PathMap } | null
      /** The folders searched from (with their parents), for the "nowhere found" advice. */
      readonly known: ReadonlyArray<string>
      readonly root: string
    }
  | { readonly _tag: "ProbeFailed"; readonly category: string; readonly problem: string }

export type AppVerdict =
  | {
      readonly _tag: "Checked"
      readonly target: ArrTarget
      readonly version: string
      readonly categories: ReadonlyArray<CategoryVerdict>
    }
  | { readonly _tag: "Failed"; readonly target: ArrTarget; readonly error: ArrError }

/**
 * Checks one app for the categories it sends releases to (its download clients'), plus
 * `categories` (the intake's or the configured ones); the root itself when there are none.
 */
export const checkAppPaths = (
  target: ArrTarget,
  root: string,
  categories: ReadonlyArray<string>
): Effect.Effect<AppVerdict, never, Outbound> =>
  checkApp(target, root, categories).pipe(
    Effect.catchTag("ArrError", (error): Effect.Effect<AppVerdict> => Effect.succeed({ _tag: "Failed", target, error }))
  )

// ---------------------------------------------------------------------------------------

const checkApp = Effect.fnUntraced(function* (
  target: ArrTarget,
  root: string,
  categories: ReadonlyArray<string>
): Effect.fn.Return<AppVerdict, ArrError, Outbound> {
  const status = yield* checkStatus(target)
  const clients = yield* arrRequest(target, { method: "GET", path: "/downloadclient" }, DownloadClients)
  const mappings = yield* arrRequest(target, { method: "GET", path: "/remotepathmapping" }, RemotePathMappings)
  const all = [...new Set([...appCategories(target.app, clients), ...categories])].sort()
  const verdicts: Array<CategoryVerdict> = []
  for (const category of all.length === 0 ? [""] : all) {
    verdicts.push(yield* Effect.scoped(checkCategory(target, root, category, mappings)))
  }
  return { _tag: "Checked", target, version: status.version, categories: verdicts }
})

const checkCategory = Effect.fnUntraced(function* (
  target: ArrTarget,
  root: string,
  category: string,
  mappings: typeof RemotePathMappings.Type
): Effect.fn.Return<CategoryVerdict, ArrError, Outbound | Scope.Scope> {
  const folder = category === "" ? root : NodePath.join(root, ...category.split("/"))
  const token = Math.floor((yield* Random.next) * 0x100000000)
    .toString(16)
    .padStart(8, "0")
  const probeName = `${PROBE_PREFIX}${token}`
  const probe = NodePath.join(folder, probeName)
  const written = yield* Effect.result(writeProbe(root, folder, probe))
  if (written._tag === "Failure") return { _tag: "ProbeFailed", category, problem: written.failure }
  const reported = remapRemoteToLocal(mappings, toAppPath(target.settings.path_map, folder))
  if (yield* listsFile(target, reported, probeName)) {
    return { _tag: "Seen", category, appPath: joinAppPath(reported, probeName) }
  }
  const rootFolders = yield* arrRequest(target, { method: "GET", path: "/rootfolder" }, RootFolders)
  const known = [...new Set([...rootFolders.map((r) => r.path), ...mappings.map((m) => m.localPath)])]
  const view = yield* findAppView(target, { root, category, probeName, reported }, known)
  return {
    _tag: "NotSeen",
    category,
    probe,
    appPath: joinAppPath(reported, probeName),
    fix:
      view === undefined
        ? null
        : { seenAt: view.seenAt, pathMap: withPair(target.settings.path_map, view.pair, folder) },
    known,
    root
  }
})

/** Writes the probe (creating the category folder if needed) and removes both with the scope. */
const writeProbe = (root: string, folder: string, probe: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        if (!Fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
          throw new Error(`the mirror root ${root} does not exist (is its disk mounted?)`)
        }
        const created = Fs.mkdirSync(folder, { recursive: true })
        Fs.writeFileSync(probe, "dlsync path doctor probe: safe to delete\n", { flag: "wx" })
        return created
      },
      catch: (e) => (e instanceof Error ? e.message : String(e))
    }),
    (created) =>
      Effect.sync(() => {
        Fs.rmSync(probe, { force: true })
        // Only the folders this probe created, and only while empty.
        if (created === undefined) return
        for (let dir = folder; dir.length >= created.length; dir = NodePath.dirname(dir)) {
          try {
            Fs.rmdirSync(dir)
          } catch {
            return
          }
        }
      })
  )
