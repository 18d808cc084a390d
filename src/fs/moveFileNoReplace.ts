import * as Fs from "node:fs"
import { errnoCode } from "./errno.ts"
import { opError } from "./LocalOpError.ts"
import { lstatOrUndefined } from "./localStat.ts"

/** Link errors that mean "this file system has no hard links": fall back to a checked rename. */
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"])

/**
 * Moves the file `from` to `to` without ever replacing what is at `to`: a hard link (which
 * fails on an existing target) and an unlink of the source. Where the file system has no
 * hard links, a rename once a fresh lstat finds `to` free (the window is the lstat's alone).
 */
export const moveFileNoReplace = (from: string, to: string, toRel: string): void => {
  try {
    Fs.linkSync(from, to)
    unlinkOrUndo(from, to)
  } catch (e) {
    if (errnoCode(e) === "EEXIST") throw alreadyThere(toRel)
    if (!LINK_UNSUPPORTED.has(errnoCode(e) ?? "")) throw e
    if (lstatOrUndefined(to) !== undefined) throw alreadyThere(toRel)
    Fs.renameSync(from, to)
  }
}

export const alreadyThere = (rel: string) => opError(rel, "exists", "something is already there: not replaced")

/** Second half of a link-then-unlink move; if the unlink fails, the new link is taken back. */
const unlinkOrUndo = (from: string, to: string): void => {
  try {
    Fs.unlinkSync(from)
  } catch (e) {
    Fs.rmSync(to, { force: true })
    throw e
  }
}
