import * as Fs from "node:fs"
import * as NodePath from "node:path"
import type { Effect } from "effect"
import type { LocalStat } from "../domain/LocalEntry.ts"
import { checkAncestors, isBelow, resolveInRoot } from "./containment.ts"
import { DLSYNC_DIR } from "./dlsyncDir.ts"
import { fsyncDirSync } from "./fsyncDir.ts"
import { type LocalOpError, opError, runOp } from "./LocalOpError.ts"
import { expectUnchanged, toLocalStat } from "./localStat.ts"
import { moveFileNoReplace } from "./moveFileNoReplace.ts"

/**
 * Puts a finished download in place, the one rename a downloaded file makes: `from` is an
 * absolute path under `<root>/.dlsync/partial` (already fsynced); `toRel` must still hold
 * what `replace` describes (null: nothing, and nothing that appears meanwhile is replaced),
 * and its folders must be real folders. The folder is fsynced after the rename, unless the
 * caller fsyncs it itself before it records the file (`syncFolder: false`, a batch landing
 * many files in one folder). Returns the landed file's lstat, to be recorded as written.
 */
export const landFile = (
  root: string,
  from: string,
  toRel: string,
  replace: LocalStat | null,
  options: { readonly syncFolder?: boolean } = {}
): LocalStat => {
  const to = resolveInRoot(root, toRel)
  // Compared after normalizing: `<root>/.dlsync/partial/../../x` starts with the prefix too.
  if (!isBelow(NodePath.join(root, DLSYNC_DIR, "partial"), NodePath.resolve(from))) {
    throw opError(toRel, "outside_root", `${from} is not under .dlsync/partial`)
  }
  checkAncestors(root, toRel, false)
  if (replace === null) moveFileNoReplace(from, to, toRel)
  else {
    expectUnchanged(toRel, to, replace)
    Fs.renameSync(from, to)
  }
  if (options.syncFolder !== false) fsyncDirSync(NodePath.dirname(to))
  return toLocalStat(Fs.lstatSync(to, { bigint: true }))
}

/** `landFile` as an effect: a refusal or an I/O error is a LocalOpError naming `toRel`. */
export const land = (
  root: string,
  from: string,
  toRel: string,
  replace: LocalStat | null,
  options: { readonly syncFolder?: boolean } = {}
): Effect.Effect<LocalStat, LocalOpError> => runOp(toRel, () => landFile(root, from, toRel, replace, options))
