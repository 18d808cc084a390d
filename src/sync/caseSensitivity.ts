/**
 * Whether the root's file system ignores case (APFS, NTFS, SMB shares, vfat), detected once
 * at start: siblings that differ only in case must then get distinct names (names.ts).
 *
 * The probe writes `.dlsync/case-probe-<pid>` in lower case and looks for its upper-case
 * spelling; the probe file is removed again. The root's `.dlsync` folder must be a real
 * folder (LocalOps.checkRoot creates it).
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { LocalOpError, LocalOps } from "./localOps.ts"
import { DLSYNC_DIR } from "./tree.ts"

export const detectCaseInsensitive = Effect.fn("detectCaseInsensitive")(function* (): Effect.fn.Return<
  boolean,
  LocalOpError,
  LocalOps
> {
  const ops = yield* LocalOps
  const dir = yield* ops.mkdirp(DLSYNC_DIR)
  if (dir.type !== "folder") {
    return yield* new LocalOpError({ path: DLSYNC_DIR, reason: "not_a_directory", detail: "is not a folder" })
  }
  const lower = NodePath.join(ops.root, DLSYNC_DIR, `case-probe-${process.pid}`)
  const upper = NodePath.join(ops.root, DLSYNC_DIR, `CASE-PROBE-${process.pid}`)
  return yield* Effect.try({
    try: () => {
      Fs.writeFileSync(lower, "", { flag: "w" })
      try {
        const a = Fs.lstatSync(lower, { bigint: true })
        const b = lstatOrUndefined(upper)
        return b !== undefined && b.ino === a.ino && b.dev === a.dev
      } finally {
        Fs.rmSync(lower, { force: true })
      }
    },
    catch: (e) =>
      new LocalOpError({
        path: DLSYNC_DIR,
        reason: "io",
        detail: `cannot probe case sensitivity: ${e instanceof Error ? e.message : String(e)}`
      })
  })
})

const lstatOrUndefined = (path: string): Fs.BigIntStats | undefined => {
  try {
    return Fs.lstatSync(path, { bigint: true })
  } catch {
    return undefined
  }
}
