/**
 * Safe operations on the mirror root. Every path is relative to the root.
 *
 * Invariants (ARCHITECTURE.md safety invariants 4, 5 and 7):
 * - Containment: a path is refused unless it resolves inside the root; empty, `.` and `..`
 *   components, NUL bytes and absolute paths are refused outright.
 * - No symlink inside the root is followed for a write: every ancestor of a path written,
 *   renamed or removed is lstat'ed and must be a real directory.
 * - Destroy only what is expected: rename, trash, delete and rmdir re-check a fresh lstat
 *   (type, size, mtime and inode for files; type and inode for folders, whose mtime moves
 *   with their contents) right before acting, and never replace an existing target.
 * - Durable: after a rename or a removal the parent directories are fsynced.
 * - The root is told from an empty mount point by `<root>/.dlsync/marker`.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Context, Effect, Layer, Schema } from "effect"
import type { LocalStat } from "../domain/LocalEntry.ts"
import { checkAncestors, resolveInRoot } from "../fs/containment.ts"
import { DLSYNC_DIR } from "../fs/dlsyncDir.ts"
import { errnoCode } from "../fs/errno.ts"
import { fsyncDirSync } from "../fs/fsyncDir.ts"
import { type LocalOpError, opError, runOp } from "../fs/LocalOpError.ts"
import { expectUnchanged, lstatOrUndefined, toLocalStat } from "../fs/localStat.ts"
import { alreadyThere, moveFileNoReplace } from "../fs/moveFileNoReplace.ts"
import { withInfix } from "./names.ts"

// The path-safety primitives live in fs/ (shared with the transfer engine); re-exported for callers.
export { isBelow, resolveInRoot } from "../fs/containment.ts"
export { LocalOpError } from "../fs/LocalOpError.ts"
export { land, landFile } from "../fs/landFile.ts"
export { sameAsExpected, toLocalStat } from "../fs/localStat.ts"

export const MARKER = `${DLSYNC_DIR}/marker`
export const TRASH_DIR = `${DLSYNC_DIR}/trash`

/**
 * The root is missing, or looks unmounted (its marker is gone while the store says files
 * were mirrored): nothing may be read as deleted nor written anew. The CLI exits 78.
 */
export class RootUnavailable extends Schema.TaggedError<RootUnavailable>()("RootUnavailable", {
  root: Schema.String,
  reason: Schema.Literals(["missing", "not_a_directory", "unmounted"])
}) {
  override get message(): string {
    return ROOT_PROBLEMS[this.reason](this.root)
  }
}

const ROOT_PROBLEMS: Readonly<Record<RootUnavailable["reason"], (root: string) => string>> = {
  missing: (root) => `the mirror root ${root} does not exist (is the disk mounted?)`,
  not_a_directory: (root) => `the mirror root ${root} is not a directory`,
  unmounted: (root) =>
    `the mirror root ${root} has lost its ${MARKER} marker although files were mirrored there: ` +
    `it looks unmounted or replaced. Mount it again; if the mirror really was wiped, remove the state ` +
    `database to rebuild in adopt-only mode.`
}

export class LocalOps extends Context.Service<
  LocalOps,
  {
    readonly root: string
    /** A fresh lstat, never following a symlink; None when nothing is there. */
    readonly lstat: (path: string) => Effect.Effect<LocalStat | undefined, LocalOpError>
    /**
     * Checks the root before a pass: it must exist and be a directory; its marker must be
     * there if `mirrored` (the store holds entries); a first pass creates the marker.
     */
    readonly checkRoot: (mirrored: boolean) => Effect.Effect<void, RootUnavailable | LocalOpError>
    /** Creates `path` and its missing ancestors as directories; returns the folder's lstat. */
    readonly mkdirp: (path: string) => Effect.Effect<LocalStat, LocalOpError>
    /** Renames `from` (which must match `expected`) to `to`, which must not exist. */
    readonly rename: (from: string, to: string, expected: LocalStat) => Effect.Effect<void, LocalOpError>
    /** Moves `path` into `.dlsync/trash/<date>/<path>`; returns where it went. */
    readonly trash: (path: string, expected: LocalStat, date: string) => Effect.Effect<string, LocalOpError>
    readonly remove: (path: string, expected: LocalStat) => Effect.Effect<void, LocalOpError>
    /** Removes an empty folder; false (and nothing done) when it holds anything. */
    readonly removeFolderIfEmpty: (path: string, expected: LocalStat) => Effect.Effect<boolean, LocalOpError>
    /** Deletes trash days older than `days` before `today` (YYYY-MM-DD); returns them. */
    readonly purgeTrash: (today: string, days: number) => Effect.Effect<ReadonlyArray<string>, LocalOpError>
  }
>()("dlsync/sync/LocalOps") {
  static readonly layer = (root: string): Layer.Layer<LocalOps> =>
    Layer.sync(LocalOps, () => LocalOps.of(makeLocalOps(NodePath.resolve(root))))
}

const makeLocalOps = (root: string): LocalOps["Service"] => {
  const resolve = (rel: string): string => resolveInRoot(root, rel)

  /** rename(2) that never replaces: hard link + unlink for files, checked rename for folders. */
  const renameNoReplace = (fromRel: string, toRel: string, expected: LocalStat): void => {
    const from = resolve(fromRel)
    const to = resolve(toRel)
    checkAncestors(root, fromRel, false)
    checkAncestors(root, toRel, false)
    expectUnchanged(fromRel, from, expected)
    const existing = lstatOrUndefined(to)
    // A case-only rename on a case-insensitive root finds the source itself at the target.
    const sameFile = existing !== undefined && existing.ino === expected.ino
    if (existing !== undefined && !sameFile) throw alreadyThere(toRel)
    if (expected.type === "file" && !sameFile) moveFileNoReplace(from, to, toRel)
    else Fs.renameSync(from, to)
    fsyncDirSync(NodePath.dirname(from))
    fsyncDirSync(NodePath.dirname(to))
  }

  const run = runOp

  return {
    root,
    lstat: (rel) =>
      run(rel, () => {
        const st = lstatOrUndefined(resolve(rel))
        return st === undefined ? undefined : toLocalStat(st)
      }),
    checkRoot: (mirrored) =>
      Effect.suspend((): Effect.Effect<void, RootUnavailable | LocalOpError> => {
        const st = lstatOrUndefined(root, true)
        if (st === undefined) return Effect.fail(new RootUnavailable({ root, reason: "missing" }))
        if (!st.isDirectory()) return Effect.fail(new RootUnavailable({ root, reason: "not_a_directory" }))
        const marker = lstatOrUndefined(NodePath.join(root, MARKER))
        if (marker?.isFile()) return Effect.void
        if (mirrored) return Effect.fail(new RootUnavailable({ root, reason: "unmounted" }))
        return run(MARKER, () => {
          checkAncestors(root, MARKER, true)
          const full = resolve(MARKER)
          Fs.writeFileSync(full, "This folder is mirrored by dlsync. Its own files live under .dlsync/.\n", {
            flag: "wx",
            mode: 0o644
          })
          fsyncDirSync(NodePath.dirname(full))
        })
      }),
    mkdirp: (rel) =>
      run(rel, () => {
        const full = resolve(rel)
        checkAncestors(root, rel, true)
        const st = lstatOrUndefined(full)
        if (st === undefined) {
          Fs.mkdirSync(full)
          fsyncDirSync(NodePath.dirname(full))
        } else if (st.isSymbolicLink()) throw opError(rel, "symlink", "is a symlink: not followed")
        else if (!st.isDirectory()) throw opError(rel, "exists", "a file is there, not a folder")
        return toLocalStat(Fs.lstatSync(full, { bigint: true }))
      }),
    rename: (from, to, expected) => run(from, () => renameNoReplace(from, to, expected)),
    trash: (rel, expected, date) =>
      run(rel, () => {
        resolve(rel)
        let n = 1
        let target = `${TRASH_DIR}/${date}/${rel}`
        while (lstatOrUndefined(resolve(target)) !== undefined) {
          const slash = target.lastIndexOf("/")
          target = target.slice(0, slash + 1) + withInfix(rel.slice(rel.lastIndexOf("/") + 1), ` (${++n})`)
        }
        checkAncestors(root, target, true)
        renameNoReplace(rel, target, expected)
        return target
      }),
    remove: (rel, expected) =>
      run(rel, () => {
        const full = resolve(rel)
        checkAncestors(root, rel, false)
        expectUnchanged(rel, full, expected)
        Fs.unlinkSync(full)
        fsyncDirSync(NodePath.dirname(full))
      }),
    removeFolderIfEmpty: (rel, expected) =>
      run(rel, () => {
        const full = resolve(rel)
        checkAncestors(root, rel, false)
        expectUnchanged(rel, full, expected)
        try {
          Fs.rmdirSync(full)
        } catch (e) {
          if (errnoCode(e) === "ENOTEMPTY" || errnoCode(e) === "EEXIST") return false
          throw e
        }
        fsyncDirSync(NodePath.dirname(full))
        return true
      }),
    purgeTrash: (today, days) =>
      run(TRASH_DIR, () => {
        const dir = resolve(TRASH_DIR)
        checkAncestors(root, TRASH_DIR, false)
        const st = lstatOrUndefined(dir)
        if (st === undefined) return []
        if (!st.isDirectory()) throw opError(TRASH_DIR, "not_a_directory", "is not a folder")
        const cutoff = Date.parse(`${today}T00:00:00Z`) - days * 86_400_000
        const purged: Array<string> = []
        for (const name of Fs.readdirSync(dir).sort()) {
          const day = /^\d{4}-\d{2}-\d{2}$/.test(name) ? Date.parse(`${name}T00:00:00Z`) : Number.NaN
          if (Number.isNaN(day) || day >= cutoff) continue
          // rmSync never follows symlinks: a link inside the trash is removed, not its target.
          Fs.rmSync(NodePath.join(dir, name), { recursive: true, force: true })
          purged.push(`${TRASH_DIR}/${name}`)
        }
        if (purged.length > 0) fsyncDirSync(dir)
        return purged
      })
  }
}
