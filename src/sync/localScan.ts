/**
 * The start-of-pass look at the mirror root: lstat every path (no hashing, no symlink
 * followed, `.dlsync/` left out but for `.dlsync/moving`, and so are paths past PATH_MAX,
 * which only the user can have made) and compare with the store's local
 * entries, to catch what happened while dlsync was stopped.
 *
 * The scan only reads. Its `disk` map is the planner's `disk` input; `changed`, `missing` and
 * `unknown` are for the log and `status` (the planner draws its own conclusions from `disk`).
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { isIntact, type LocalEntry, type LocalStat } from "../domain/LocalEntry.ts"
import { LocalOpError, LocalOps, toLocalStat } from "./localOps.ts"
import { utf8Length } from "./names.ts"
import { MOVING_DIR } from "./planner.ts"
import { DLSYNC_DIR, MAX_PATH_BYTES } from "./tree.ts"

export interface ScanReport {
  /** Every path under the root (relative, `/`-separated) with its lstat. */
  readonly disk: ReadonlyMap<string, LocalStat>
  /** Entries whose path holds something else than what dlsync wrote. */
  readonly changed: ReadonlyArray<LocalEntry>
  /** Entries whose path holds nothing. */
  readonly missing: ReadonlyArray<LocalEntry>
  /** Paths no entry accounts for: the user's own files (never touched). */
  readonly unknown: ReadonlyArray<string>
}

export const scanLocal = Effect.fn("scanLocal")(function* (
  entries: ReadonlyArray<LocalEntry>
): Effect.fn.Return<ScanReport, LocalOpError, LocalOps> {
  const { root } = yield* LocalOps
  const disk = yield* Effect.try({
    try: () => walk(root),
    catch: (e) =>
      new LocalOpError({
        path: ".",
        reason: "io",
        detail: `cannot scan the mirror root: ${e instanceof Error ? e.message : String(e)}`
      })
  })
  return compareWithStore(entries, disk)
})

/** Pure: classifies entries against the lstats of a scan. */
export const compareWithStore = (
  entries: ReadonlyArray<LocalEntry>,
  disk: ReadonlyMap<string, LocalStat>
): ScanReport => {
  const changed: Array<LocalEntry> = []
  const missing: Array<LocalEntry> = []
  const known = new Set<string>()
  for (const entry of entries) {
    known.add(entry.path)
    const stat = disk.get(entry.path)
    if (stat === undefined) {
      if (entry.written !== null) missing.push(entry)
    } else if (entry.written !== null) {
      const same =
        entry.type === "folder"
          ? stat.type === "folder" && stat.ino === entry.written.ino
          : isIntact(stat, entry.written)
      if (!same) changed.push(entry)
    }
  }
  const unknown = [...disk.keys()].filter((p) => !known.has(p)).sort()
  return { disk, changed, missing, unknown }
}

// ---------------------------------------------------------------------------------------

const walk = (root: string): Map<string, LocalStat> => {
  const disk = new Map<string, LocalStat>()
  const pending: Array<string> = [""]
  while (pending.length > 0) {
    const rel = pending.pop()!
    const dir = rel === "" ? root : NodePath.join(root, rel)
    let names: Array<string>
    try {
      names = Fs.readdirSync(dir)
    } catch (e) {
      // A folder that vanished mid-scan is really gone. One that cannot be read stops the
      // scan: taking its files as deleted would be a lie the planner would act on.
      if (isErrno(e, "ENOENT") || isErrno(e, "ENOTDIR")) continue
      throw new Error(`cannot read ${rel === "" ? "the root" : rel}: ${e instanceof Error ? e.message : String(e)}`)
    }
    for (const name of names) {
      // dlsync's own files are not the mirror's, except items waiting in .dlsync/moving
      // halfway through a swap (a crash may leave them there): those are entries to place.
      if (rel === "" && name === DLSYNC_DIR) {
        if (Fs.lstatSync(NodePath.join(root, name)).isDirectory()) pending.push(DLSYNC_DIR)
        continue
      }
      if (rel === DLSYNC_DIR && `${rel}/${name}` !== MOVING_DIR) continue
      const path = rel === "" ? name : `${rel}/${name}`
      // Past PATH_MAX the kernel cannot name it from the root, and no mapped path is that
      // long (tree.ts): it is the user's, left out rather than failing the whole scan.
      if (utf8Length(NodePath.join(root, path)) >= MAX_PATH_BYTES) continue
      let stat: LocalStat
      try {
        stat = toLocalStat(Fs.lstatSync(NodePath.join(root, path), { bigint: true }))
      } catch (e) {
        if (isErrno(e, "ENOENT")) continue
        throw e
      }
      disk.set(path, stat)
      if (stat.type === "folder") pending.push(path)
    }
  }
  return disk
}

const isErrno = (e: unknown, code: string): boolean => e instanceof Error && "code" in e && e.code === code
