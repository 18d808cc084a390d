/** Fresh lstats of paths in the mirror, and the check that one still shows what was planned. */
import * as Fs from "node:fs"
import type { LocalStat } from "../domain/LocalEntry.ts"
import { errnoCode } from "./errno.ts"
import { opError } from "./LocalOpError.ts"

/** Converts a bigint lstat to a LocalStat. */
export const toLocalStat = (st: Fs.BigIntStats): LocalStat => ({
  type: st.isFile() ? "file" : st.isDirectory() ? "folder" : st.isSymbolicLink() ? "symlink" : "other",
  size: Number(st.size),
  mtimeNs: st.mtimeNs,
  ino: st.ino
})

/** Whether a fresh lstat still shows what an action expects to find. */
export const sameAsExpected = (actual: LocalStat, expected: LocalStat): boolean =>
  actual.type === expected.type &&
  actual.ino === expected.ino &&
  (actual.type === "folder" || (actual.size === expected.size && actual.mtimeNs === expected.mtimeNs))

/** A fresh lstat of `full` (a stat if `follow`); undefined when nothing is there. */
export const lstatOrUndefined = (full: string, follow = false): Fs.BigIntStats | undefined => {
  try {
    return follow ? Fs.statSync(full, { bigint: true }) : Fs.lstatSync(full, { bigint: true })
  } catch (e) {
    if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return undefined
    throw e
  }
}

/** Throws a LocalOpError naming `rel` unless `full` is still what `expected` describes. */
export const expectUnchanged = (rel: string, full: string, expected: LocalStat): void => {
  const st = lstatOrUndefined(full)
  if (st === undefined) throw opError(rel, "missing", "no longer there")
  const actual = toLocalStat(st)
  if (!sameAsExpected(actual, expected)) {
    throw opError(
      rel,
      "changed",
      `changed since it was planned (${describeStat(actual)}, expected ${describeStat(expected)})`
    )
  }
}

const describeStat = (s: LocalStat): string =>
  s.type === "file" ? `file of ${s.size} bytes, mtime ${s.mtimeNs}, inode ${s.ino}` : `${s.type}, inode ${s.ino}`
